/**
 * The one table of a Collector's states in a rollout, and every list of states the rest of the
 * code asks for, each a column of it: holds an in-flight slot? who moves it on (so: needs a job)?
 * settled? final? which metric state, and how `status` labels it? how the gates count it? which
 * Redis index holds it? surely off the rollout's listing? may it be rolled back? No other module
 * keeps a list of states (test/unit/rollout/collector-state.test.ts derives the lists that others
 * use from this table). The moves between states are transition.ts's.
 *
 * Invariants (held by the store, checked by test/integration/rollout/collector-life.property.test.ts):
 * - a Collector holds an in-flight slot exactly while its state is a slot state;
 * - a final state changes only by an operator's retry; `not_alive` is settled but reopens when a
 *   scan sees it alive;
 * - `unknown` is the outcome of a create or a task whose fate the service cannot tell (a create
 *   cut off before its answer, and the listing offers the Collector again: no task was made, or
 *   one ended short of the build; the API has no list of tasks by Collector and no idempotency
 *   key): never counted as a failure (gate `none`), on the worklist, resolved by a `retry`;
 * - `attempts` (creates sent) never goes down;
 * - the counts per state equal the records;
 * - only `send` creates a task, `send` only leaves `admitted`, and `admitted` is reached only
 *   through the one admitter from a state in which the service has answered that the create
 *   made no task (not alive, an error answer) or the withdrawn create was never sent: so a
 *   Collector never gets a second task in one rollout unless its failure's class asks for a new
 *   attempt (`cause_retry`) or an operator does (`retry`). A create whose answer was lost goes to
 *   `reconciling`, and nothing leads from there to a new attempt: "no task runs now" (the
 *   listing offers it again) does not prove that none ran.
 */
/** Every state, in the order `status` and the metrics show them. */
export const COLLECTOR_STATES = [
  'queued',
  'waiting_retry',
  'admitted',
  'creating',
  'pending',
  'progressing',
  'reconciling',
  'verifying',
  'succeeded',
  'failed',
  'timed_out',
  'unhealthy',
  'not_alive',
  'rejected',
  'error',
  'manual',
  'unknown',
  'quarantined',
  'skipped',
  'aborted',
] as const;
export type CollectorState = (typeof COLLECTOR_STATES)[number];

/** Who moves a Collector out of a state: the scheduler (admission, scans), a worker's job, or nobody. */
export type Owner = 'scheduler' | 'worker' | 'nobody';

interface StateInfo {
  /** May have an unfinished task: holds one of the policy's in-flight slots. */
  slot: boolean;
  owner: Owner;
  /** Has an outcome for reports, `done` and convergence (final, or not_alive). */
  settled: boolean;
  /** Never changes again. */
  final: boolean;
  /** The state as metrics and `status` show it. */
  metric: MetricState;
  /** How the failure gate counts it: a bad outcome, a good one, one that only adds to the sample, or not at all. */
  gate: 'bad' | 'good' | 'sample' | 'none';
  /** The Redis index the Collector is kept in while in this state (see keys.ts). */
  index?: 'queued' | 'retries' | 'reconciling' | 'verifying';
  /**
   * How `status` names its metric state in the summary of a rollout, and where (`rank`: smaller
   * first); none for states shown in the in-flight column instead.
   */
  label?: readonly [label: string, rank: number];
  /** Surely off the rollout's listing: its task runs, or it reached the build (a first scan steps back for it). */
  offListing: boolean;
  /**
   * May be taken back to its previous build (its task ran, so its build may have changed):
   * `wrong` is what `rollback` takes by default (what went wrong), `upgraded` what a tripped
   * wave's `rollback-wave` takes (upgraded, or unhealthy on the build), `chosen` only on request.
   */
  rollback?: readonly [kind: 'wrong' | 'upgraded' | 'both', rank: number];
}

/** A state as the dashboard and `status` show it (several states of the table share one). */
export type MetricState = Exclude<CollectorState, 'admitted' | 'creating' | 'reconciling'>;

// biome-ignore format: a table reads best as one
const INFO: Record<CollectorState, StateInfo> = {
  queued:        { slot: false, owner: 'scheduler', settled: false, final: false, metric: 'queued',        gate: 'none',   index: 'queued',      label: ['queued', 15],      offListing: false },
  waiting_retry: { slot: false, owner: 'scheduler', settled: false, final: false, metric: 'waiting_retry', gate: 'none',   index: 'retries',     label: ['retrying', 12],    offListing: false },
  admitted:      { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'pending',       gate: 'none',                                                   offListing: false },
  creating:      { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'pending',       gate: 'none',                                                   offListing: false },
  pending:       { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'pending',       gate: 'none',                                                   offListing: true },
  progressing:   { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'progressing',   gate: 'none',                                                   offListing: true },
  reconciling:   { slot: true,  owner: 'scheduler', settled: false, final: false, metric: 'pending',       gate: 'none',   index: 'reconciling',                           offListing: false },
  verifying:     { slot: false, owner: 'scheduler', settled: false, final: false, metric: 'verifying',     gate: 'none',   index: 'verifying',   label: ['verifying', 2],    offListing: true,  rollback: ['upgraded', 2] },
  succeeded:     { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'succeeded',     gate: 'good',                         label: ['ok', 1],           offListing: true,  rollback: ['upgraded', 1] },
  failed:        { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'failed',        gate: 'bad',                          label: ['failed', 3],       offListing: false, rollback: ['wrong', 4] },
  timed_out:     { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'timed_out',     gate: 'bad',                          label: ['timed_out', 4],    offListing: false, rollback: ['wrong', 5] },
  unhealthy:     { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'unhealthy',     gate: 'bad',                          label: ['unhealthy', 5],    offListing: true,  rollback: ['both', 3] },
  not_alive:     { slot: false, owner: 'scheduler', settled: true,  final: false, metric: 'not_alive',     gate: 'sample',                       label: ['not_alive', 10],   offListing: false },
  rejected:      { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'rejected',      gate: 'sample',                       label: ['rejected', 11],    offListing: false },
  error:         { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'error',         gate: 'bad',                          label: ['error', 6],        offListing: false },
  manual:        { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'manual',        gate: 'none',                         label: ['worklist', 7],     offListing: false },
  unknown:       { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'unknown',       gate: 'none',                         label: ['unknown', 8],      offListing: false },
  quarantined:   { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'quarantined',   gate: 'none',                         label: ['quarantined', 9],  offListing: false },
  skipped:       { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'skipped',       gate: 'none',                         label: ['skipped', 13],     offListing: false },
  aborted:       { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'aborted',       gate: 'none',                         label: ['aborted', 14],     offListing: false },
};

const where = (test: (i: StateInfo) => boolean) => COLLECTOR_STATES.filter((s) => test(INFO[s]));

/** States that hold an in-flight slot (the Collector may have an unfinished task). */
export const SLOT_STATES: readonly CollectorState[] = where((i) => i.slot);
/** States with an outcome (final, or not_alive until a scan sees the Collector alive). */
export const SETTLED_STATES: readonly CollectorState[] = where((i) => i.settled);
/** States that never change again. */
export const FINAL_STATES: readonly CollectorState[] = where((i) => i.final);
/** States without an outcome yet: the rollout has work left. */
export const ACTIVE_STATES: readonly CollectorState[] = where((i) => !i.settled);
/** Active states past `queued`: admitted at least once, no outcome yet (a wave waits for them). */
export const STARTED_ACTIVE_STATES: readonly CollectorState[] = where(
  (i) => !i.settled && i.index !== 'queued',
);

/** States as the dashboard and `status` show them: the table's `metric` column, in its order. */
export const METRIC_STATES: readonly MetricState[] = [
  ...new Set(COLLECTOR_STATES.map((s) => INFO[s].metric)),
];
/** Surely off the rollout's listing: a task runs, or the build was reached. */
export const OFF_LISTING_STATES: readonly CollectorState[] = where((i) => i.offListing);
/** The states the table's `rollback` column gives one of `kinds`, in its rank. */
const rollbackStates = (...kinds: string[]): readonly CollectorState[] =>
  COLLECTOR_STATES.flatMap((s) => {
    const r = INFO[s].rollback;
    return r && kinds.includes(r[0]) ? [{ s, rank: r[1] }] : [];
  })
    .sort((a, b) => a.rank - b.rank)
    .map((x) => x.s);
/** The states `rollback` may take back (their task ran): `--only` chooses among them. */
export const ROLLBACK_STATES = rollbackStates('upgraded', 'both', 'wrong');
/** What `rollback` takes without `--only`/`--all`: what went wrong. */
export const DEFAULT_ROLLBACK_STATES = rollbackStates('both', 'wrong');
/** What `onTrip: rollback-wave` takes of the tripped wave: upgraded, or unhealthy on the build. */
export const WAVE_ROLLBACK_STATES = rollbackStates('upgraded', 'both');
/** Outcomes the failure gate may judge by name (`failureGate.<state>`): the bad ones and those only in the sample. */
export const GATED_STATES: readonly CollectorState[] = where((i) => i.gate === 'bad' || i.gate === 'sample');
/** The labels of `status`'s summary, by metric state, in the order it shows them. */
export const STATE_LABELS: readonly (readonly [MetricState, string])[] = COLLECTOR_STATES.flatMap((s) => {
  const label = INFO[s].label;
  return label && INFO[s].metric === s ? [{ s: s as MetricState, label }] : [];
})
  .sort((a, b) => a.label[1] - b.label[1])
  .map(({ s, label }) => [s, label[0]] as const);

export const holdsSlot = (s: CollectorState): boolean => INFO[s].slot;
export const isSettled = (s: CollectorState): boolean => INFO[s].settled;
export const isFinal = (s: CollectorState): boolean => INFO[s].final;
export const ownerOf = (s: CollectorState): Owner => INFO[s].owner;
/** A BullMQ job drives the Collector (the job repair re-creates a missing one). */
export const needsJob = (s: CollectorState): boolean => INFO[s].owner === 'worker';
export const indexOf = (s: CollectorState): StateInfo['index'] => INFO[s].index;
export const gateClass = (s: CollectorState): StateInfo['gate'] => INFO[s].gate;
export function metricState(s: string): MetricState {
  return (INFO as Record<string, StateInfo | undefined>)[s]?.metric ?? 'pending';
}

export function isCollectorState(s: string): s is CollectorState {
  return (COLLECTOR_STATES as readonly string[]).includes(s);
}

/** Counts per state summed per metric state, every metric state present. */
export function countsByMetricState(counts: Readonly<Record<string, number>>): Record<MetricState, number> {
  const out = Object.fromEntries(METRIC_STATES.map((m) => [m, 0])) as Record<MetricState, number>;
  for (const [state, n] of Object.entries(counts)) out[metricState(state)] += n;
  return out;
}

export type StateCounts = Partial<Record<CollectorState, number>>;

export function sumStates(counts: StateCounts, states: readonly CollectorState[]): number {
  return states.reduce((n, s) => n + (counts[s] ?? 0), 0);
}
