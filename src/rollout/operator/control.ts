/**
 * Operator actions on a rollout (the `pause`, `resume`, `abort`, `promote`, `retry` and `forget`
 * commands and their HTTP endpoints), each an event of the rollout's state machine
 * (rollout-phase.ts; phase moves are compare-and-sets, so an action and a scheduler tick never
 * undo each other) and of its Collectors' (collector-state.ts), recorded in the rollout's
 * history with who did it. They need only Redis: they work while the daemon is down, and the
 * daemon acts on them at its next tick.
 */
import type { Clock } from '../../lib/clock.js';
import { FleetError } from '../../lib/errors.js';
import { plural } from '../../lib/plural.js';
import type { Policy } from '../../policy/schema.js';
import { promoted } from '../admit/index.js';
import {
  type CollectorRecord,
  type CollectorState,
  type CollectorStore,
  type Move,
  orgOf,
  RETRYABLE_STATES,
  SLOT_STATES,
  type StateCounts,
  transition,
} from '../collector/index.js';
import type { Keys } from '../keys.js';
import {
  isPolicyPause,
  moveChange,
  nextPhase,
  orgsOf,
  PAUSE_REASONS,
  type RecordedEvent,
  type RollbackEntry,
  type RolloutNews,
  type RolloutRecord,
  type RolloutStore,
  type RolloutWrite,
  rollbackTally,
  unstartedOneOffs,
  type Written,
} from '../life/index.js';

export { RETRYABLE_STATES };
export type RetryableState = (typeof RETRYABLE_STATES)[number];

/**
 * Why an action was refused: `not_found` (exit 64), `conflict` (the rollout's phase; exit 3),
 * `invalid` (64), `forbidden` (the person may not: exit 77).
 */
export type ControlErrorKind = 'not_found' | 'conflict' | 'invalid' | 'forbidden';

export class ControlError extends FleetError {
  constructor(
    readonly kind: ControlErrorKind,
    message: string,
  ) {
    super(`FLEET_ERR_CONTROL_${kind.toUpperCase()}`, message);
    this.name = 'ControlError';
  }
}

export interface ControlDeps {
  rollouts: RolloutStore;
  store: CollectorStore;
  clock: Clock;
  keys: Keys;
  /**
   * The policies in force (the daemon's, or the files `run` reads), for `forget`'s guard; a
   * function that answers undefined when they cannot be read now (then the daemon's last choice
   * in Redis decides alone). Absent: no policy guard (retention, tests of the store).
   */
  policies?: () => readonly PolicyView[] | undefined;
}

/** What `forget` needs of a policy. */
export type PolicyView = Pick<Policy, 'name' | 'enabled' | 'target'>;

export interface ControlResult {
  rollout: string;
  /** One sentence: what was done (and what it released). */
  message: string;
  /** A rollback's request id (`rollback --wait` follows its account). */
  request?: string;
  event?: RecordedEvent;
}

async function load(deps: ControlDeps, id: string): Promise<RolloutRecord> {
  const rollout = await deps.rollouts.get(id);
  if (!rollout) throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
  return rollout;
}

/**
 * Writes an operator's action on a rollout with its event, in one step (the store's `write`);
 * `refused` says why when the rollout changed so that the action no longer applies.
 */
async function act(
  deps: ControlDeps,
  rollout: RolloutRecord,
  change: RolloutWrite,
  refused: () => ControlError,
): Promise<ControlResult> {
  const written = await deps.rollouts.write(rollout, change, deps.clock.now());
  if (!written) {
    const now = await deps.rollouts.get(rollout.id);
    throw now
      ? refused()
      : new ControlError('not_found', `no rollout '${rollout.id}' (it was forgotten meanwhile)`);
  }
  return result(written);
}

const result = (written: Written): ControlResult => {
  const event = written.events[0];
  return { rollout: written.rollout.id, message: event?.message ?? '', ...(event ? { event } : {}) };
};

const conflict = (rollout: RolloutRecord, what: string) =>
  new ControlError('conflict', `rollout ${rollout.id} is ${rollout.phase}: ${what}`);

/** The organization an action is scoped to, when given: it must be one of the rollout's. */
function checkOrg(rollout: RolloutRecord, org: string | undefined): void {
  if (org !== undefined && !orgsOf(rollout).includes(org))
    throw new ControlError(
      'invalid',
      `rollout ${rollout.id} covers no organization '${org}' (it covers ${orgsOf(rollout).join(', ')})`,
    );
}

/**
 * Holds every admission of the rollout, first attempts and retries; tasks under way finish.
 * With `org`, only that organization's part is held (the others go on).
 */
export async function pause(
  deps: ControlDeps,
  id: string,
  actor: string,
  scope: { org?: string } = {},
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const now = deps.clock.now();
  const { org } = scope;
  checkOrg(rollout, org);
  if (org !== undefined) {
    if (rollout.phase !== 'running' && rollout.phase !== 'converged')
      throw conflict(rollout, 'only a running or converged rollout can be paused');
    if (rollout.pausedOrgs?.some((p) => p.org === org))
      throw conflict(rollout, `org ${org} is paused already`);
    return act(
      deps,
      rollout,
      {
        phase: rollout.phase,
        patch: { pausedOrgs: [...(rollout.pausedOrgs ?? []), { org, by: actor, at: now }] },
        news: [{ type: 'rollout.paused', source: 'operator', actor, reason: `by ${actor}`, org }],
      },
      () => conflict(rollout, 'it changed meanwhile; look again'),
    );
  }
  return act(
    deps,
    rollout,
    {
      move: { event: 'pause', reason: `by ${actor}` },
      patch: { pausedBy: actor, pausedAt: now },
      news: [{ type: 'rollout.paused', source: 'operator', actor, reason: `by ${actor}` }],
    },
    () => conflict(rollout, 'only a running or converged rollout can be paused'),
  );
}

/**
 * Lets a halted or paused rollout go on (the gate then judges only later outcomes), or releases
 * the policy of an aborted one (a newer build may start a rollout; this one stays aborted), once.
 * Says what it released. Each is one compare-and-set with its event: of several at once, one
 * answers and the others are refused.
 */
export async function resume(
  deps: ControlDeps,
  id: string,
  actor: string,
  scope: { org?: string } = {},
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const now = deps.clock.now();
  const { org } = scope;
  checkOrg(rollout, org);
  if (org !== undefined) {
    const paused = rollout.pausedOrgs ?? [];
    if (!paused.some((p) => p.org === org)) throw conflict(rollout, `org ${org} is not paused`);
    return act(
      deps,
      rollout,
      {
        phase: rollout.phase,
        patch: { pausedOrgs: paused.filter((p) => p.org !== org) },
        news: [{ type: 'rollout.resumed', source: 'operator', actor, released: 'org', org }],
      },
      () => conflict(rollout, 'it changed meanwhile; look again'),
    );
  }
  if (rollout.phase === 'aborted') {
    if (rollout.releasedAt !== undefined) throw conflict(rollout, 'its policy was released already');
    return act(
      deps,
      rollout,
      {
        // Not a move (it stays aborted): released once, while it is still aborted.
        phase: 'aborted',
        unless: 'releasedAt',
        patch: { releasedAt: now },
        news: [{ type: 'rollout.resumed', source: 'operator', actor, released: 'abort' }],
      },
      () => conflict(rollout, 'its policy was released already'),
    );
  }
  if (rollout.phase === 'paused' && isPolicyPause(rollout.pauseReason))
    throw conflict(
      rollout,
      `its policy is ${rollout.pauseReason?.replace('policy ', '')}: enable or restore the policy file to go on`,
    );
  if (rollout.phase !== 'halted' && rollout.phase !== 'paused')
    throw conflict(rollout, 'only a halted or paused rollout can be resumed');
  const what =
    rollout.phase === 'halted'
      ? `the failure gate's halt (${rollout.haltReason ?? 'no reason recorded'})`
      : `the pause ${rollout.pauseReason ?? ''}`.trim();
  const counts = await deps.store.counts(id);
  const waves = await deps.store.waveCounts(id);
  const written = await deps.rollouts.resume(rollout, counts, deps.clock.now(), waves, {
    // A wave whose analysis stopped the rollout is analysed afresh (`promote` skips it instead).
    ...(rollout.wave.waitingFor === 'analysis' ? { patch: { analysisRun: null } } : {}),
    news: [{ type: 'rollout.resumed', source: 'operator', actor, released: rollout.phase, what }],
  });
  if (!written) throw conflict((await deps.rollouts.get(id)) ?? rollout, 'it changed meanwhile; look again');
  return result(written);
}

/**
 * A one-off (`fleet-upgrade upgrade`) that never started, named `NAME` or `NAME@TARGET`: `abort`
 * and `forget` of it remove it (nothing of it ran). Undefined when `id` names no such one-off.
 */
async function removeUnstartedOneOff(deps: ControlDeps, id: string): Promise<ControlResult | undefined> {
  const at = id.indexOf('@');
  const name = at < 0 ? id : id.slice(0, at);
  const json = await deps.rollouts.unstartedOneOff(name);
  if (json === undefined) return undefined;
  const [view] = unstartedOneOffs({ [name]: json }, {});
  if (!view || (at >= 0 && id.slice(at + 1) !== view.target)) return undefined;
  if (!(await deps.rollouts.removeUnstartedOneOff(name, json)))
    throw new ControlError(
      'conflict',
      `one-off ${view.id} changed meanwhile (it may have started); look again`,
    );
  const why = view.notStarted
    ? `not started: ${view.notStarted.reason}`
    : 'the daemon had not started it yet';
  return {
    rollout: view.id,
    message: `removed one-off ${view.id} (${plural(view.collectors, 'Collector')}): ${why}; nothing of it ran`,
  };
}

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

/** Ends the current bake, analysis or approval wait; `full`: every remaining wave at once. */
export async function promote(
  deps: ControlDeps,
  id: string,
  actor: string,
  full: boolean,
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  // A wave's analysis that stopped the rollout may be skipped before the rollout is resumed.
  const stoppedByAnalysis =
    (rollout.phase === 'halted' || rollout.phase === 'paused') && rollout.wave.waitingFor === 'analysis';
  if (rollout.phase !== 'running' && rollout.phase !== 'converged' && !stoppedByAnalysis)
    throw conflict(rollout, 'only a running rollout can be promoted (resume it first)');
  const progress = rollout.wave;
  // Approvals by several people are not one person's to skip (operator/approve.ts).
  if (progress.waitingFor === 'approval' && progress.approval && progress.approval.approvers > 1)
    throw conflict(
      rollout,
      `wave ${progress.index + 2} awaits ${progress.approval.approvers} approvals: \`fleet-upgrade approve ${id}\` (each by another person)`,
    );
  const of = progress.of ?? progress.index + 1;
  const next = promoted(progress, of, full);
  if (!next)
    throw conflict(
      rollout,
      rollout.phase === 'converged'
        ? `nothing waits to be promoted: ${of === 1 ? 'its one wave has' : `all ${of} waves have`} run`
        : `nothing waits: wave ${progress.index + 1} of ${of} is under way`,
    );
  return act(
    deps,
    rollout,
    {
      waveSeq: progress.seq,
      wave: { ...next, of },
      news: [
        {
          type: 'rollout.promoted',
          source: 'operator',
          actor,
          full,
          wave: next.index + 1,
          of,
          ended: progress.waitingFor ?? null,
          afterResume: stoppedByAnalysis,
        },
      ],
    },
    () => conflict(rollout, 'its waves moved meanwhile; look again'),
  );
}

/**
 * Exactly the Collectors in `only` get one new attempt, through the admitter: counted as an
 * attempt of the same Collector (its `retries`), never as a new one.
 */
export async function retry(
  deps: ControlDeps,
  id: string,
  actor: string,
  only: readonly CollectorState[],
  scope: { org?: string } = {},
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const { org } = scope;
  checkOrg(rollout, org);
  const bad = only.filter((s) => !RETRYABLE_STATES.includes(s));
  if (only.length === 0 || bad.length)
    throw new ControlError(
      'invalid',
      `--only takes ${RETRYABLE_STATES.join(', ')}${bad.length ? `; not ${bad.join(', ')}` : ''}`,
    );
  if (!retryable(rollout.phase)) throw conflict(rollout, 'its Collectors can no longer be retried');
  const now = deps.clock.now();
  const chosen: CollectorRecord[] = [];
  for await (const r of deps.store.all(id))
    if (only.includes(r.state) && (org === undefined || orgOf(r) === org)) chosen.push(r);
  let retried = 0;
  for (let i = 0; i < chosen.length; i += 500) {
    const moves: Move[] = [];
    for (const r of chosen.slice(i, i + 500)) {
      const t = transition(
        r,
        { type: 'operator_retry', message: `retried by ${actor}` },
        { now, settings: rollout.settings },
      );
      if (t.ok) moves.push(t.move);
    }
    retried += (await deps.store.apply(id, moves)).filter((o) => o === 'written').length;
  }
  const released = releasedCohorts(chosen);
  const byState = Object.fromEntries(only.map((s) => [s, chosen.filter((r) => r.state === s).length]));
  return act(
    deps,
    rollout,
    {
      ...(released.length
        ? {
            patch: {
              cohortsReleased: [...new Set([...(rollout.cohortsReleased ?? []), ...released])],
              quarantined: (rollout.quarantined ?? []).filter((q) => !released.includes(q.cohort)),
            },
          }
        : {}),
      news: [
        {
          type: 'rollout.retried',
          source: 'operator',
          actor,
          retried,
          only,
          byState,
          released,
          waits: rollout.phase === 'halted' || rollout.phase === 'paused',
          ...(org === undefined ? {} : { org }),
        },
      ],
    },
    () => conflict(rollout, 'it changed meanwhile; look again'),
  );
}

/**
 * Retrying quarantined Collectors releases their cohorts: they are not quarantined again in this
 * rollout (the failure gate still judges their outcomes). The cohorts released.
 */
function releasedCohorts(chosen: readonly CollectorRecord[]): string[] {
  return [
    ...new Set(chosen.filter((r) => r.state === 'quarantined' && r.cohort).map((r) => r.cohort as string)),
  ];
}

/**
 * Phases in which `retry` works (and `status` may suggest it): not once the rollout is aborted or
 * superseded, whose Collectors no attempt of it reaches any more.
 */
export function retryable(phase: RolloutRecord['phase']): boolean {
  return phase !== 'aborted' && phase !== 'superseded';
}

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
    const pending = await deps.rollouts.rollbackRequestOf(id);
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

const pendingRollback = (id: string) =>
  new ControlError(
    'conflict',
    `rollout ${id} has a rollback request the daemon has not carried out yet: forgetting it now would drop the rollback. ` +
      `Wait until \`fleet-upgrade status\` shows its rollback, or pass --force to drop the request with the rollout`,
  );

/** What `forget` says of the cohorts it keeps held. */
function heldNote(rollout: RolloutRecord): string {
  const held = rollout.quarantined ?? [];
  if (held.length === 0) return '';
  return `; its quarantined cohort${held.length === 1 ? '' : 's'} (${held.map((q) => q.cohort).join('; ')}) stay${held.length === 1 ? 's' : ''} held if the rollout starts again`;
}

/**
 * Why the rollout's policy still wants it (enabled, and selecting its build), in words with what
 * to do; undefined when it does not, or when no policies are known (`deps.policies` absent).
 */
async function selectedByPolicy(deps: ControlDeps, rollout: RolloutRecord): Promise<string | undefined> {
  if (!deps.policies) return undefined;
  // Orphaned: the daemon saw its policy gone.
  if (rollout.phase === 'paused' && rollout.pauseReason === PAUSE_REASONS.policyRemoved) return undefined;
  // One-offs (`upgrade`, rollbacks) go with their rollout: nothing starts them again.
  if (await deps.rollouts.isOneOff(rollout.policy)) return undefined;
  const policies = deps.policies();
  const policy = policies?.find((p) => p.name === rollout.policy);
  if (policies && !policy?.enabled) return undefined;
  const current = (await deps.rollouts.currentOf(rollout.policy)) === rollout.id;
  if (!current && policy?.target !== rollout.build) return undefined;
  const known = policies ? '' : ' (its policy files cannot be read here: the daemon’s last choice decides)';
  return (
    `rollout ${rollout.id} is what its policy ${rollout.policy} still selects: the policy is enabled and selects ${rollout.build}${known}. ` +
    `Forgotten, it would be started again under the same id from scratch. Change the policy's target or remove its file ` +
    `(the daemon then supersedes or orphans the rollout), then forget it; or pass --force`
  );
}
