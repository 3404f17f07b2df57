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
import { promoted } from '../admit/wave-progress.js';
import {
  type CollectorRecord,
  type CollectorState,
  type Move,
  SLOT_STATES,
  transition,
} from '../collector/collector-state.js';
import type { CollectorStore } from '../collector/collector-store.js';
import type { Keys } from '../keys.js';
import type { EventLog, RecordedEvent, RolloutEventType } from '../life/event-log.js';
import { isPolicyPause } from '../life/rollout-phase.js';
import type { RolloutRecord, RolloutStore } from '../life/rollout-store.js';

/** Outcomes an operator may ask a new attempt for (`retry --only`). */
export const RETRYABLE_STATES = [
  'failed',
  'timed_out',
  'not_alive',
  'error',
  'rejected',
  'unhealthy',
  'manual',
  'quarantined',
] as const;
export type RetryableState = (typeof RETRYABLE_STATES)[number];

/** Why an action was refused: `not_found` (exit 64), `conflict` (the rollout's phase; exit 3), `invalid` (64). */
export type ControlErrorKind = 'not_found' | 'conflict' | 'invalid';

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
  events: EventLog;
  clock: Clock;
  keys: Keys;
}

export interface ControlResult {
  rollout: string;
  /** One sentence: what was done (and what it released). */
  message: string;
  event?: RecordedEvent;
}

async function load(deps: ControlDeps, id: string): Promise<RolloutRecord> {
  const rollout = await deps.rollouts.get(id);
  if (!rollout) throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
  return rollout;
}

async function record(
  deps: ControlDeps,
  rollout: RolloutRecord,
  type: RolloutEventType,
  actor: string,
  message: string,
  detail?: Record<string, unknown>,
): Promise<ControlResult> {
  const event = await deps.events.record({
    type,
    rollout: rollout.id,
    policy: rollout.policy,
    build: rollout.build,
    at: deps.clock.now(),
    source: 'operator',
    actor,
    message,
    ...(detail ? { detail } : {}),
  });
  return { rollout: rollout.id, message, event };
}

const conflict = (rollout: RolloutRecord, what: string) =>
  new ControlError('conflict', `rollout ${rollout.id} is ${rollout.phase}: ${what}`);

/** Holds every admission of the rollout, first attempts and retries; tasks under way finish. */
export async function pause(deps: ControlDeps, id: string, actor: string): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const now = deps.clock.now();
  const moved = await deps.rollouts.move(rollout, 'pause', now, `by ${actor}`, {
    pausedBy: actor,
    pausedAt: now,
  });
  if (!moved) throw conflict(rollout, 'only a running or converged rollout can be paused');
  return record(
    deps,
    rollout,
    'rollout.paused',
    actor,
    `${rollout.id} paused by ${actor}: nothing new starts; tasks under way finish`,
  );
}

/**
 * Lets a halted or paused rollout go on (the gate then judges only later outcomes), or releases
 * the policy of an aborted one (a newer build may start a rollout; this one stays aborted).
 * Says what it released.
 */
export async function resume(deps: ControlDeps, id: string, actor: string): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const now = deps.clock.now();
  if (rollout.phase === 'aborted') {
    if (rollout.releasedAt !== undefined) throw conflict(rollout, 'its policy was released already');
    await deps.rollouts.setFields(id, { releasedAt: now });
    return record(
      deps,
      rollout,
      'rollout.resumed',
      actor,
      `${id} stays aborted; its policy is released: a newer build starts a new rollout`,
      { released: 'abort' },
    );
  }
  if (rollout.phase === 'paused' && isPolicyPause(rollout.pauseReason))
    throw conflict(
      rollout,
      `its policy is ${rollout.pauseReason?.replace('policy ', '')}: enable or restore the policy file to go on`,
    );
  if (rollout.phase !== 'halted' && rollout.phase !== 'paused')
    throw conflict(rollout, 'only a halted or paused rollout can be resumed');
  const released =
    rollout.phase === 'halted'
      ? `the failure gate's halt (${rollout.haltReason ?? 'no reason recorded'})`
      : `the pause ${rollout.pauseReason ?? ''}`.trim();
  const counts = await deps.store.counts(id);
  const waves = await deps.store.waveCounts(id);
  // A wave whose analysis stopped the rollout is analysed afresh (`promote` skips it instead).
  if (rollout.wave.waitingFor === 'analysis') await deps.rollouts.setFields(id, { analysisRun: '' });
  if (!(await deps.rollouts.resume(id, counts, now, waves)))
    throw conflict(await load(deps, id), 'it changed meanwhile; look again');
  return record(deps, rollout, 'rollout.resumed', actor, `${id} resumed by ${actor}: released ${released}`, {
    released: rollout.phase,
  });
}

/**
 * Nothing more starts in this rollout, ever: Collectors not yet sent a create end `aborted`
 * (admitted ones when their job runs); tasks under way are followed to their end.
 */
export async function abort(
  deps: ControlDeps,
  id: string,
  actor: string,
  reason = `by ${actor}`,
  source: 'operator' | 'gate' | 'scheduler' = 'operator',
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const now = deps.clock.now();
  if (!(await deps.rollouts.move(rollout, 'abort', now, reason)))
    throw conflict(rollout, 'only a running, converged, paused or halted rollout can be aborted');
  const aborted = await abortWaiting(deps, rollout, reason, now);
  const message = `${id} aborted (${reason}): ${aborted} Collectors that had not started end aborted; tasks under way finish`;
  const event = await deps.events.record({
    type: 'rollout.aborted',
    rollout: id,
    policy: rollout.policy,
    build: rollout.build,
    at: now,
    source,
    ...(source === 'operator' ? { actor } : {}),
    message,
    detail: { aborted, reason },
  });
  return { rollout: id, message, event };
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
  const of = progress.of ?? progress.index + 1;
  const next = promoted(progress, of, full);
  if (!next) throw conflict(rollout, `nothing waits: wave ${progress.index + 1} of ${of} is under way`);
  if (!(await deps.rollouts.setWave(id, progress.seq, { ...next, of })))
    throw conflict(rollout, 'its waves moved meanwhile; look again');
  const what = full
    ? 'every remaining wave opens now'
    : `wave ${next.index + 1} of ${of} opens now${progress.waitingFor === 'bake' ? ' (the bake was cut short)' : progress.waitingFor === 'analysis' ? ' (its analysis skipped)' : ''}${stoppedByAnalysis ? `, once the rollout is resumed (\`fleet-upgrade resume ${id}\`)` : ''}`;
  return record(deps, rollout, 'rollout.promoted', actor, `${id} promoted by ${actor}: ${what}`, {
    full,
    wave: next.index + 1,
    ended: progress.waitingFor ?? null,
  });
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
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const bad = only.filter((s) => !(RETRYABLE_STATES as readonly string[]).includes(s));
  if (only.length === 0 || bad.length)
    throw new ControlError(
      'invalid',
      `--only takes ${RETRYABLE_STATES.join(', ')}${bad.length ? `; not ${bad.join(', ')}` : ''}`,
    );
  if (rollout.phase === 'aborted' || rollout.phase === 'superseded')
    throw conflict(rollout, 'its Collectors can no longer be retried');
  const now = deps.clock.now();
  const chosen: CollectorRecord[] = [];
  for await (const r of deps.store.all(id)) if (only.includes(r.state)) chosen.push(r);
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
  const released = await releaseCohorts(deps, rollout, chosen);
  const byState = Object.fromEntries(only.map((s) => [s, chosen.filter((r) => r.state === s).length]));
  const waits =
    rollout.phase === 'halted' || rollout.phase === 'paused'
      ? `; they start once the rollout is resumed`
      : '';
  return record(
    deps,
    rollout,
    'rollout.retried',
    actor,
    `${id}: ${retried} Collectors get one new attempt (${only.join(', ')})${released.length ? `; cohort${released.length > 1 ? 's' : ''} ${released.join(', ')} released from quarantine` : ''}${waits}`,
    {
      retried,
      byState,
      ...(released.length ? { released } : {}),
    },
  );
}

/**
 * Retrying quarantined Collectors releases their cohorts: they are not quarantined again in this
 * rollout (the failure gate still judges their outcomes). Returns the cohorts released.
 */
async function releaseCohorts(
  deps: ControlDeps,
  rollout: RolloutRecord,
  chosen: readonly CollectorRecord[],
): Promise<string[]> {
  const cohorts = [
    ...new Set(chosen.filter((r) => r.state === 'quarantined' && r.cohort).map((r) => r.cohort as string)),
  ];
  if (cohorts.length === 0) return [];
  const released = [...new Set([...(rollout.cohortsReleased ?? []), ...cohorts])];
  const quarantined = (rollout.quarantined ?? []).filter((q) => !cohorts.includes(q.cohort));
  await deps.rollouts.setFields(rollout.id, {
    cohortsReleased: JSON.stringify(released),
    quarantined: JSON.stringify(quarantined),
  });
  return cohorts;
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

/** Removes a finished, aborted or orphaned rollout's data (records, counts, history); its metric series go with it. */
export async function forget(
  deps: ControlDeps,
  id: string,
  redis: import('ioredis').Redis,
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  if (!forgettable(rollout))
    throw conflict(
      rollout,
      'only a converged, aborted, superseded or orphaned (policy removed) rollout can be forgotten',
    );
  const counts = await deps.store.counts(id);
  const busy = SLOT_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0);
  if (busy > 0)
    throw conflict(rollout, `${busy} of its Collectors still have a task under way; wait for them`);
  const k = deps.keys;
  await redis
    .multi()
    .del(
      k.rollout(id),
      k.results(id),
      k.counts(id),
      k.waveCounts(id),
      k.queued(id),
      k.retries(id),
      k.reconciling(id),
      k.verifying(id),
      k.cohortCounts(id),
      k.durations(id),
      k.history(id),
    )
    .zrem(k.rollouts, id)
    .srem(k.followed, id)
    .hdel(k.oneOffs, rollout.policy)
    .exec();
  if ((await deps.rollouts.currentOf(rollout.policy)) === id) await redis.hdel(k.policies, rollout.policy);
  const total = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
  return { rollout: id, message: `forgot ${id} and the records of its ${total} Collectors` };
}
