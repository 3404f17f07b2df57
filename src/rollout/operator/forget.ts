/**
 * `forget`: removes a finished, aborted or orphaned rollout's data in one compare-and-set, behind
 * its guards (forget-guards.ts); a rollback's rollout leaves its tally on its source's entry.
 */
import { plural } from '../../lib/plural.js';
import { SLOT_STATES } from '../collector/index.js';
import { type RollbackEntry, type RolloutRecord, rollbackTally } from '../life/index.js';

import { type ControlDeps, ControlError, type ControlResult, conflict, load } from './control.js';
import { heldNote, pendingRollback, selectedByPolicy } from './forget-guards.js';
import { removeUnstartedOneOff } from './remove-unstarted-one-off.js';

/** Phases in which a rollout may be forgotten: nothing of it runs any more. */
export function forgettable(rollout: RolloutRecord): boolean {
  return (
    rollout.phase === 'converged' ||
    rollout.phase === 'aborted' ||
    rollout.phase === 'superseded' ||
    (rollout.phase === 'paused' && rollout.pauseReason === 'policy removed')
  );
}

/**
 * Removes a finished, aborted or orphaned rollout's data (records, counts, history, a one-off's
 * policy); its metric series go with it. A one-off that never started is removed. One
 * compare-and-set (the store's `forget`): an action that changed the rollout meanwhile wins, and
 * no write that comes after it brings a key back.
 *
 * Guarded (issue 20), unless `force`:
 * - a rollback request of it that the daemon has not carried out yet refuses it (forgetting would
 *   drop the rollback; checked in the same atomic step);
 * - so does a policy that is enabled and still selects its build (its target names the build, or
 *   the daemon's current rollout of it is this one): the daemon would start the same id again
 *   from scratch.
 * Forced or not, its quarantined cohorts are kept under its id: a rollout started again under it
 * starts with them held (rollout-store.ts `start`).
 */
export async function forget(
  deps: ControlDeps,
  id: string,
  options: { force?: boolean } = {},
): Promise<ControlResult> {
  if (!(await deps.rollouts.get(id))) {
    const removed = await removeUnstartedOneOff(deps, id);
    if (removed) return removed;
  }
  const rollout = await load(deps, id);
  if (!forgettable(rollout))
    throw conflict(
      rollout,
      'only a converged, aborted, superseded or orphaned (policy removed) rollout can be forgotten',
    );
  const force = options.force === true;
  if (!force) {
    const pending = await deps.rollouts.rollbacks.of(id);
    if (pending !== undefined) throw pendingRollback(id);
    const selecting = await selectedByPolicy(deps, rollout);
    if (selecting) throw new ControlError('conflict', selecting);
  }
  // A rollback's rollout: what it came to is kept on its source's entry (its account stays whole).
  const tally = rollout.rollbackOf
    ? {
        phase: rollout.phase,
        ...rollbackTally({
          phase: rollout.phase,
          counts: await deps.store.counts(id),
          unmatched: rollout.unmatched,
        }),
      }
    : undefined;
  const done = await deps.rollouts.forget(rollout, SLOT_STATES, force);
  switch (done.kind) {
    case 'forgotten':
      if (tally && rollout.rollbackOf) await keepTally(deps, rollout.rollbackOf, rollout.policy, tally);
      return {
        rollout: id,
        message: `forgot ${id} and the records of its ${plural(done.collectors, 'Collector')}${heldNote(rollout)}`,
      };
    case 'busy':
      throw conflict(
        rollout,
        `${done.collectors} of its Collectors still have a task under way; wait for them`,
      );
    case 'pending':
      throw pendingRollback(id);
    case 'changed':
      throw new ControlError(
        'conflict',
        `rollout ${id} changed meanwhile (it is ${done.phase} now); look again before forgetting it`,
      );
    case 'gone':
      throw new ControlError('not_found', `no rollout '${id}' (it was forgotten meanwhile)`);
  }
}

/** Writes a forgotten rollback rollout's tally on its source's entries (absent source: nothing). */
async function keepTally(
  deps: ControlDeps,
  sourceId: string,
  policy: string,
  tally: NonNullable<RollbackEntry['final']>,
): Promise<void> {
  const source = await deps.rollouts.get(sourceId);
  if (!source?.rollbacks?.some((e) => e.policy === policy)) return;
  const rollbacks = source.rollbacks.map((e) => (e.policy === policy ? { ...e, final: tally } : e));
  await deps.rollouts.write(source, { patch: { rollbacks } }, deps.clock.now());
}
