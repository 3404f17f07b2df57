/**
 * `abort`: the emergency stop. Nothing more starts in the rollout, ever; its waiting Collectors
 * end `aborted` (abortWaiting, which the scheduler calls again while any are left). The gates and
 * a schedule that ended abort through abortRollout too.
 */
import { type Move, type StateCounts, transition } from '../collector/index.js';
import { moveChange, nextPhase, type RolloutNews, type RolloutRecord, type Written } from '../life/index.js';

import { type ControlDeps, ControlError, type ControlResult, conflict, load, result } from './control.js';
import { removeUnstartedOneOff } from './remove-unstarted-one-off.js';

/**
 * Nothing more starts in this rollout, ever: Collectors not yet sent a create end `aborted`
 * (admitted ones when their job runs); tasks under way are followed to their end. A one-off that
 * never started is removed.
 */
export async function abort(
  deps: ControlDeps,
  id: string,
  actor: string,
  reason = `by ${actor}`,
  source: 'operator' | 'gate' | 'scheduler' = 'operator',
): Promise<ControlResult> {
  if (!(await deps.rollouts.get(id))) {
    const removed = await removeUnstartedOneOff(deps, id);
    if (removed) return removed;
  }
  // The emergency stop wins every race: a compare-and-set lost to a concurrent pause, resume or
  // tick is tried again on the rollout as it is now, while its phase still allows an abort. Each
  // loss means another writer moved the rollout, so the loop is bounded by how many can.
  let rollout = await load(deps, id);
  for (let attempt = 1; ; attempt++) {
    if (nextPhase(rollout.phase, 'abort') === undefined)
      throw conflict(rollout, 'only a running, converged, paused or halted rollout can be aborted');
    const written = await abortRollout(deps, rollout, { actor, reason, source });
    if (written) return result(written);
    const now = await deps.rollouts.get(id);
    if (!now) throw new ControlError('not_found', `no rollout '${id}' (it was forgotten meanwhile)`);
    if (attempt >= ABORT_ATTEMPTS)
      throw conflict(now, `the abort lost ${ABORT_ATTEMPTS} races in a row to other writers; send it again`);
    rollout = now;
  }
}

/** Compare-and-sets an abort may lose to concurrent writers before it gives up (each loss is another writer's move). */
const ABORT_ATTEMPTS = 50;

/**
 * Aborts `rollout` (as read) with its `rollout.aborted` event in one step, then ends `aborted`
 * its waiting Collectors. The event counts those that wait now (queued, waiting_retry): the
 * abort ends exactly them, and the scheduler finishes any a crash left. Undefined when the
 * rollout's phase does not allow it (or it changed meanwhile).
 */
export async function abortRollout(
  deps: Pick<ControlDeps, 'rollouts' | 'store' | 'clock'>,
  rollout: RolloutRecord,
  how: { actor: string; reason: string; source: 'operator' | 'gate' | 'scheduler'; counts?: StateCounts },
): Promise<Written | undefined> {
  const now = deps.clock.now();
  const counts = how.counts ?? (await deps.store.counts(rollout.id));
  const waiting = (counts.queued ?? 0) + (counts.waiting_retry ?? 0);
  const news: RolloutNews = {
    type: 'rollout.aborted',
    source: how.source,
    ...(how.source === 'operator' ? { actor: how.actor } : {}),
    aborted: waiting,
    reason: how.reason,
  };
  const written = await deps.rollouts.write(
    rollout,
    moveChange('abort', { reason: how.reason, news: [news] }),
    now,
  );
  if (written) await abortWaiting(deps, rollout, how.reason, now);
  return written;
}

/**
 * Ends `aborted` the Collectors of an aborted rollout that wait (queued, waiting_retry). The
 * scheduler calls it again while any are left, so that an abort cut short by a crash, or a
 * Collector a job sent back to wait meanwhile, is finished.
 */
export async function abortWaiting(
  deps: Pick<ControlDeps, 'store'>,
  rollout: RolloutRecord,
  reason: string,
  now: number,
): Promise<number> {
  let aborted = 0;
  for (const index of ['queued', 'retries'] as const) {
    const ids = await deps.store.indexed(rollout.id, index);
    for (let i = 0; i < ids.length; i += 500) {
      const records = await deps.store.getMany(rollout.id, ids.slice(i, i + 500));
      const moves: Move[] = [];
      for (const r of records.values()) {
        const t = transition(
          r,
          { type: 'abort', message: `rollout aborted (${reason})` },
          { now, settings: rollout.settings },
        );
        if (t.ok) moves.push(t.move);
      }
      aborted += (await deps.store.apply(rollout.id, moves)).filter((o) => o === 'written').length;
    }
  }
  return aborted;
}
