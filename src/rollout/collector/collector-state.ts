/**
 * A Collector's whole life in a rollout, in one place: its states, the events that move it, the
 * transition table, and every predicate that the rest of the code asks (holds an in-flight slot?
 * needs a job? settled? final? which metric state? how does the gate count it?). No other module
 * keeps a list of states. `transition` is pure; the store (collector-store.ts) writes its moves
 * atomically and refuses any move that is not in the table.
 *
 *                 ┌──────────────── seen_alive (a scan lists it alive) ─────────────────┐
 *                 ▼                                                                      │
 *  discover ─► queued ─admit─► admitted ─send─► creating ─created─► pending ◄─status─► progressing
 *                 ▲               │  ▲            │ │ │ ▲ (resend)     │  └─────┬──────────┘
 *                 │       withdraw│  │admit       │ │ │               │        ├─► succeeded
 *                 │               ▼  │            │ │ └─► rejected     │        ├─► failed
 *                 │          waiting_retry ◄──────┘ │     error ◄──────┤        └─► timed_out
 *                 │   (not alive, error answers)    │     not_alive ◄──┘ (attempts spent)
 *                 │                                 ▼
 *                 │                            reconciling ─(listings, deadline)─► succeeded | failed | timed_out
 *   queued, waiting_retry, admitted, reconciling ──supersede──► skipped
 *   queued, waiting_retry, admitted ──abort──► aborted
 *   failed, timed_out, not_alive, error, rejected ──operator_retry──► waiting_retry
 *
 * Invariants (held by the store, checked by test/integration/rollout/collector-life.property.test.ts):
 * - a Collector holds an in-flight slot exactly while its state is a slot state;
 * - a final state changes only by an operator's retry; `not_alive` is settled but reopens when a
 *   scan sees it alive;
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
}

/** States as the dashboard and `status` show them. */
export const METRIC_STATES = [
  'queued',
  'waiting_retry',
  'pending',
  'progressing',
  'verifying',
  'succeeded',
  'failed',
  'timed_out',
  'unhealthy',
  'not_alive',
  'rejected',
  'error',
  'manual',
  'quarantined',
  'skipped',
  'aborted',
] as const;
export type MetricState = (typeof METRIC_STATES)[number];

// biome-ignore format: a table reads best as one
const INFO: Record<CollectorState, StateInfo> = {
  queued:        { slot: false, owner: 'scheduler', settled: false, final: false, metric: 'queued',        gate: 'none', index: 'queued' },
  waiting_retry: { slot: false, owner: 'scheduler', settled: false, final: false, metric: 'waiting_retry', gate: 'none', index: 'retries' },
  admitted:      { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'pending',       gate: 'none' },
  creating:      { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'pending',       gate: 'none' },
  pending:       { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'pending',       gate: 'none' },
  progressing:   { slot: true,  owner: 'worker',    settled: false, final: false, metric: 'progressing',   gate: 'none' },
  reconciling:   { slot: true,  owner: 'scheduler', settled: false, final: false, metric: 'pending',       gate: 'none', index: 'reconciling' },
  verifying:     { slot: false, owner: 'scheduler', settled: false, final: false, metric: 'verifying',     gate: 'none', index: 'verifying' },
  succeeded:     { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'succeeded',     gate: 'good' },
  failed:        { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'failed',        gate: 'bad' },
  timed_out:     { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'timed_out',     gate: 'bad' },
  unhealthy:     { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'unhealthy',     gate: 'bad' },
  not_alive:     { slot: false, owner: 'scheduler', settled: true,  final: false, metric: 'not_alive',     gate: 'sample' },
  rejected:      { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'rejected',      gate: 'sample' },
  error:         { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'error',         gate: 'bad' },
  manual:        { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'manual',        gate: 'none' },
  quarantined:   { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'quarantined',   gate: 'none' },
  skipped:       { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'skipped',       gate: 'none' },
  aborted:       { slot: false, owner: 'nobody',    settled: true,  final: true,  metric: 'aborted',       gate: 'none' },
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

/** What a rollout records of each of its Collectors (one JSON value per Collector in Redis). */
export interface CollectorRecord {
  id: number;
  name: string;
  hostName: string;
  /** The Collector's time zone, for maintenance windows read in it. */
  timeZone?: string;
  /** Build the Collector was on when the rollout found it. */
  from: string;
  /** Build of the rollout. */
  to: string;
  state: CollectorState;
  /** Task id of the current (or last) task, as the service gave it. */
  taskId?: string;
  /** Creates sent (a resend of an unanswered create within the ambiguity window is the same attempt). */
  attempts: number;
  /** Times the admitter gave it a slot; part of its job id. */
  admissions: number;
  /** The wave (0-based) in which it was first admitted: the failure gate judges each wave. */
  wave?: number;
  /** New attempts an operator asked for (`retry`): an attempt, never a new Collector. */
  retries?: number;
  /** `collector.not.alive` answers since it was last seen alive. */
  notAliveAnswers: number;
  /** Create answers that were errors other than the vendor's codes (401, 403, 4xx, unreadable). */
  errorAnswers: number;
  /** Create answers that were transient errors (5xx, 429, network) after the client's own retries. */
  transientErrors: number;
  /** Status reads of this Collector's tasks. */
  statusReads: number;
  /** Status reads in a row that gave nothing usable (errors, task not found). */
  statusErrors: number;
  /** The service's message (failures), or ours (time-outs, errors). */
  message?: string;
  /** Epoch ms (the deployment's shared clock). */
  discoveredAt: number;
  admittedAt?: number;
  createSentAt?: number;
  /** When the create was answered (our clock): the task's start as we measure it. */
  requestTime?: number;
  finishedAt?: number;
  /** waiting_retry: when the admitter may give it a slot again. */
  nextAttemptAt?: number;
  /** reconciling: since when only the listings can tell what became of its task. */
  reconcilingSince?: number;
  /** reconciling: the service showed that a task ran (collector.in.upgrading, or we had its id). */
  taskProven?: boolean;
  /** Last task status read (0, 1, 2, 3, 6). */
  lastStatus?: number;
  /** The process (host:pid) that created the task. */
  createdBy?: string;
  /** osName, osArch of the Collector when found (cohorts), and its cohort's key under the policy's `cohorts.by`. */
  osName?: string;
  osArch?: string;
  cohort?: string;
  /** The class of its last failure's message (disk_space, network, ...: classify-failure.ts). */
  failureClass?: string;
  /** New attempts its failure class's `retry` action gave it. */
  causeRetries?: number;
  /** When a status read last found its task unfinished (our clock): the task ended after it. */
  lastUnfinishedAt?: number;
  /** verifying: when its task succeeded (our clock). */
  succeededAt?: number;
  /** verifying: the first listing that showed it alive on the build: our time, and its lastSeenAlive then. */
  seenOnBuildAt?: number;
  seenAliveMark?: number;
  /** verifying: when the next verification pass should look at it (our clock). */
  verifyDueAt?: number;
  /** Its latest attempts (at most ATTEMPT_LOG_SIZE), oldest first: what `report` shows of each. */
  attemptLog?: AttemptEntry[];
}

/** One create attempt of a Collector, as `report` shows it. */
export interface AttemptEntry {
  /** The attempt's number (the record's `attempts` when it was sent). */
  n: number;
  sentAt: number;
  /** What the service answered: created, not_alive, error, transient_error, rejected, unknown. */
  answer?: string;
  taskId?: string;
  /** How the attempt ended, when it ended the Collector's turn (a settled state). */
  outcome?: CollectorState;
  endedAt?: number;
}

/** Attempts kept per Collector: enough to read a story, small enough for 100,000 Collectors. */
export const ATTEMPT_LOG_SIZE = 5;

const ANSWER_OF: Partial<Record<CollectorEventType, string>> = {
  created: 'created',
  not_alive: 'not_alive',
  rejected: 'rejected',
  task_unknown: 'unknown',
};

/** The attempt log after a move: a new entry at `send`, the answer and the outcome on the latest. */
function logAttempt(
  r: CollectorRecord,
  event: CollectorEvent,
  next: CollectorRecord,
  now: number,
): AttemptEntry[] | undefined {
  const log = r.attemptLog ?? [];
  if (event.type === 'send') return [...log, { n: next.attempts, sentAt: now }].slice(-ATTEMPT_LOG_SIZE);
  const last = log[log.length - 1];
  if (!last) return r.attemptLog;
  const answer =
    event.type === 'create_error' ? (event.transient ? 'transient_error' : 'error') : ANSWER_OF[event.type];
  const patch: Partial<AttemptEntry> = {};
  if (answer && !last.answer) patch.answer = answer;
  if (event.type === 'created') patch.taskId = event.taskId;
  if (INFO[next.state].settled && next.state !== r.state)
    Object.assign(patch, { outcome: next.state, endedAt: now });
  // A failure its class retries: the attempt ended failed, the Collector goes on.
  if (event.type === 'cause_retry') Object.assign(patch, { outcome: 'failed', endedAt: now });
  if (Object.keys(patch).length === 0) return r.attemptLog;
  return [...log.slice(0, -1), { ...last, ...patch }];
}

/** What happens to a Collector. The worker and the scheduler turn service answers into these. */
export type CollectorEvent =
  | { type: 'discover' }
  /** The admitter gives it a slot, in the rollout's current wave (`wave`, for a first attempt). */
  | { type: 'admit'; wave?: number }
  /** A create is about to be sent. */
  | { type: 'send' }
  /** A create found unanswered within the ambiguity window is sent again: the same attempt. */
  | { type: 'resend' }
  /** The rollout stopped admitting before the create was sent: back to wait, slot given back. */
  | { type: 'withdraw'; message: string }
  | { type: 'created'; taskId: string; requestTime: number; createdBy: string }
  | { type: 'not_alive'; message: string }
  /** A create answered with an error; `transient` for 5xx, 429 and network faults. */
  | { type: 'create_error'; transient: boolean; message: string }
  /** A vendor code that will not change: collector.invalid, collector.type.invalid, collector.version.invalid. */
  | { type: 'rejected'; message: string }
  /**
   * A task may run whose id we do not know: `proven` when the service showed one
   * (collector.in.upgrading, an unreadable 202), not when a create went unanswered.
   */
  | { type: 'task_unknown'; proven: boolean; message: string }
  /** A status read: the task is unfinished (0, 1 or 6). */
  | { type: 'status'; status: number }
  /** A status read gave nothing usable. */
  | { type: 'status_error'; notFound: boolean; message: string }
  | { type: 'succeeded'; status?: number }
  /** The task succeeded; the listings must now show the Collector alive on the build (verify). */
  | { type: 'verify'; status?: number; dueAt: number }
  /** A verification pass did not see it alive on the build yet (`message`: what it saw): look again at `dueAt`. */
  | { type: 'verify_later'; message: string; dueAt: number }
  /** A verification pass saw it alive on the build for the first time (the mark is its lastSeenAlive). */
  | { type: 'seen_on_build'; mark: number; dueAt: number }
  /** Verified: seen alive on the build, its heartbeat advancing through the bake. */
  | { type: 'verified'; message?: string }
  /** Not seen alive on the build in time, stopped heartbeating, or on another build. */
  | { type: 'unhealthy'; message: string }
  /** The task failed and its failure class's action is `retry`: a new attempt after `backoffMs`. */
  | { type: 'cause_retry'; message: string; failureClass: string; backoffMs: number; status?: number }
  /** The task failed and its failure class's action is `manual`: on the worklist, not judged by the gate. */
  | { type: 'manual'; message: string; failureClass: string; status?: number }
  /** Its cohort failed significantly above the gate: held while the other cohorts go on. */
  | { type: 'quarantine'; message: string }
  | { type: 'failed'; message: string; status?: number; failureClass?: string }
  | { type: 'timed_out'; message: string; status?: number }
  /** A scan lists a not_alive Collector alive again. */
  | { type: 'seen_alive' }
  /** A newer rollout of the policy took over. */
  | { type: 'supersede'; message: string }
  /** The rollout was aborted before this Collector's create was sent. */
  | { type: 'abort'; message: string }
  /** An operator asked for one new attempt (`retry`): through the admitter, as a retry. */
  | { type: 'operator_retry'; message: string };
export type CollectorEventType = CollectorEvent['type'];

/**
 * The transition table: every (from, event, to) that may happen. `undefined` as `from` is a
 * record that does not exist yet.
 */
export const TRANSITIONS: readonly (readonly [
  CollectorState | undefined,
  CollectorEventType,
  CollectorState,
])[] = [
  [undefined, 'discover', 'queued'],
  ['queued', 'admit', 'admitted'],
  ['waiting_retry', 'admit', 'admitted'],
  ['admitted', 'send', 'creating'],
  ['admitted', 'withdraw', 'waiting_retry'],
  ['creating', 'resend', 'creating'],
  ['creating', 'created', 'pending'],
  // A step that found the create too old and reconciles it can lose the race to the answer.
  ['reconciling', 'created', 'pending'],
  ['creating', 'not_alive', 'waiting_retry'],
  ['creating', 'not_alive', 'not_alive'],
  ['creating', 'create_error', 'waiting_retry'],
  ['creating', 'create_error', 'error'],
  ['creating', 'rejected', 'rejected'],
  ['creating', 'task_unknown', 'reconciling'],
  ['pending', 'status', 'pending'],
  ['pending', 'status', 'progressing'],
  ['progressing', 'status', 'progressing'],
  ['progressing', 'status', 'pending'],
  ['pending', 'status_error', 'pending'],
  ['progressing', 'status_error', 'progressing'],
  ['pending', 'status_error', 'reconciling'],
  ['progressing', 'status_error', 'reconciling'],
  ['pending', 'status_error', 'timed_out'],
  ['progressing', 'status_error', 'timed_out'],
  ['pending', 'succeeded', 'succeeded'],
  ['pending', 'verify', 'verifying'],
  ['progressing', 'verify', 'verifying'],
  ['reconciling', 'verify', 'verifying'],
  ['verifying', 'verify_later', 'verifying'],
  ['verifying', 'seen_on_build', 'verifying'],
  ['verifying', 'verified', 'succeeded'],
  ['verifying', 'unhealthy', 'unhealthy'],
  ['pending', 'cause_retry', 'waiting_retry'],
  ['progressing', 'cause_retry', 'waiting_retry'],
  ['pending', 'manual', 'manual'],
  ['progressing', 'manual', 'manual'],
  ['queued', 'quarantine', 'quarantined'],
  ['waiting_retry', 'quarantine', 'quarantined'],
  ['verifying', 'supersede', 'succeeded'],
  ['progressing', 'succeeded', 'succeeded'],
  ['reconciling', 'succeeded', 'succeeded'],
  ['pending', 'failed', 'failed'],
  ['progressing', 'failed', 'failed'],
  ['reconciling', 'failed', 'failed'],
  ['pending', 'timed_out', 'timed_out'],
  ['progressing', 'timed_out', 'timed_out'],
  ['reconciling', 'timed_out', 'timed_out'],
  ['not_alive', 'seen_alive', 'queued'],
  ['queued', 'supersede', 'skipped'],
  ['waiting_retry', 'supersede', 'skipped'],
  ['admitted', 'supersede', 'skipped'],
  ['reconciling', 'supersede', 'skipped'],
  ['queued', 'abort', 'aborted'],
  ['waiting_retry', 'abort', 'aborted'],
  ['admitted', 'abort', 'aborted'],
  // The operator's retry: the one way out of a final state (a new attempt, never a new Collector).
  ['failed', 'operator_retry', 'waiting_retry'],
  ['timed_out', 'operator_retry', 'waiting_retry'],
  ['not_alive', 'operator_retry', 'waiting_retry'],
  ['error', 'operator_retry', 'waiting_retry'],
  ['rejected', 'operator_retry', 'waiting_retry'],
  ['unhealthy', 'operator_retry', 'waiting_retry'],
  ['manual', 'operator_retry', 'waiting_retry'],
  ['quarantined', 'operator_retry', 'waiting_retry'],
];

const ALLOWED = new Set(TRANSITIONS.map(([from, event, to]) => `${from ?? ''}|${event}|${to}`));

export function isAllowed(
  from: CollectorState | undefined,
  event: CollectorEventType,
  to: CollectorState,
): boolean {
  return ALLOWED.has(`${from ?? ''}|${event}|${to}`);
}

/** What `transition` needs of the rollout's settings (RolloutSettings holds them all). */
export interface LifeSettings {
  notAliveAttempts: number;
  notAliveBackoffMs: number;
  errorAttempts: number;
  errorBackoffMs: number;
  transientAttempts: number;
  transientBackoffMs: number;
  /** Ceiling of a grown back-off. */
  maxBackoffMs: number;
}

/** Status reads in a row without anything usable after which only the listings can tell. */
export const STATUS_ERROR_LIMIT = 5;
/** `not found` answers in a row for a task we created, after which only the listings can tell. */
export const NOT_FOUND_LIMIT = 3;

/** One write the store carries out: `next` replaces the record that was in state `from`. */
export interface Move {
  from: CollectorState | undefined;
  event: CollectorEventType;
  next: CollectorRecord;
}

export type TransitionResult = { ok: true; move: Move } | { ok: false; reason: string };

/** A back-off that doubles with `n` (1 = the first) from `base`, capped, with ±25% jitter. */
export function grownBackoff(base: number, n: number, cap: number, random: () => number): number {
  const raw = Math.min(cap, base * 2 ** Math.max(0, Math.min(n - 1, 20)));
  return Math.max(1, Math.round(raw * (0.75 + random() / 2)));
}

/**
 * The move an event makes of a record (undefined when there is none yet), at clock time `now`.
 * Pure. Refuses events that do not apply to the record's state.
 */
export function transition(
  record: CollectorRecord | undefined,
  event: CollectorEvent,
  ctx: { now: number; settings: LifeSettings; random?: () => number },
): TransitionResult {
  const { now, settings } = ctx;
  const random = ctx.random ?? Math.random;
  const from = record?.state;
  const refuse = (): TransitionResult => ({
    ok: false,
    reason: `no transition from ${from ?? 'nothing'} on ${event.type}`,
  });
  if (event.type === 'discover') return refuse(); // new records are built by newRecord()
  if (!record) return refuse();
  const r = record;
  const to = (state: CollectorState, patch: Partial<CollectorRecord> = {}): TransitionResult => {
    if (!isAllowed(from, event.type, state)) return refuse();
    const next: CollectorRecord = { ...r, ...patch, state };
    const attemptLog = logAttempt(r, event, next, now);
    if (attemptLog) next.attemptLog = attemptLog;
    return { ok: true, move: { from, event: event.type, next } };
  };
  const retryAt = (ms: number) => ({ nextAttemptAt: now + ms });
  const final = (state: CollectorState, message: string, extra: Partial<CollectorRecord> = {}) =>
    to(state, { message, finishedAt: now, ...extra });

  switch (event.type) {
    case 'admit':
      return to('admitted', {
        admittedAt: now,
        admissions: r.admissions + 1,
        nextAttemptAt: undefined,
        ...(r.wave === undefined && event.wave !== undefined ? { wave: event.wave } : {}),
      });
    case 'send':
      return to('creating', { createSentAt: now, attempts: r.attempts + 1 });
    case 'resend':
      return to('creating', { createSentAt: now });
    case 'withdraw':
      return to('waiting_retry', { message: event.message, ...retryAt(0) });
    case 'created':
      return to('pending', {
        taskId: event.taskId,
        requestTime: event.requestTime,
        createdBy: event.createdBy,
        message: '',
        reconcilingSince: undefined,
        taskProven: undefined,
        statusErrors: 0,
      });
    case 'not_alive': {
      const n = r.notAliveAnswers + 1;
      if (n >= settings.notAliveAttempts) return final('not_alive', event.message, { notAliveAnswers: n });
      return to('waiting_retry', {
        notAliveAnswers: n,
        message: event.message,
        ...retryAt(settings.notAliveBackoffMs),
      });
    }
    case 'create_error': {
      if (event.transient) {
        const n = r.transientErrors + 1;
        if (n >= settings.transientAttempts)
          return final('error', `${n} transient errors, the last: ${event.message}`, {
            transientErrors: n,
          });
        const wait = grownBackoff(settings.transientBackoffMs, n, settings.maxBackoffMs, random);
        return to('waiting_retry', { transientErrors: n, message: event.message, ...retryAt(wait) });
      }
      const n = r.errorAnswers + 1;
      if (n >= settings.errorAttempts) return final('error', event.message, { errorAnswers: n });
      const wait = grownBackoff(settings.errorBackoffMs, n, settings.maxBackoffMs, random);
      return to('waiting_retry', { errorAnswers: n, message: event.message, ...retryAt(wait) });
    }
    case 'rejected':
      return final('rejected', event.message);
    case 'task_unknown':
      return to('reconciling', { reconcilingSince: now, taskProven: event.proven, message: event.message });
    case 'status':
      return to(event.status === 6 ? 'progressing' : 'pending', {
        lastStatus: event.status,
        statusReads: r.statusReads + 1,
        statusErrors: 0,
        lastUnfinishedAt: now,
      });
    case 'status_error': {
      const n = r.statusErrors + 1;
      const reads = event.notFound ? { statusReads: r.statusReads + 1 } : {};
      const limit = event.notFound ? NOT_FOUND_LIMIT : STATUS_ERROR_LIMIT;
      if (n >= limit)
        return to('reconciling', {
          ...reads,
          statusErrors: n,
          reconcilingSince: now,
          taskProven: true,
          message: `no usable status of task ${r.taskId} in ${n} reads, the last: ${event.message}`,
        });
      return to(r.state, { ...reads, statusErrors: n });
    }
    case 'succeeded':
      return final('succeeded', '', statusPatch(r, event.status));
    case 'verify':
      return to('verifying', {
        ...statusPatch(r, event.status),
        message: '',
        succeededAt: now,
        seenOnBuildAt: undefined,
        seenAliveMark: undefined,
        verifyDueAt: event.dueAt,
      });
    case 'verify_later':
      return to('verifying', { message: event.message, verifyDueAt: event.dueAt });
    case 'seen_on_build':
      return to('verifying', {
        message: '',
        seenOnBuildAt: now,
        seenAliveMark: event.mark,
        verifyDueAt: event.dueAt,
      });
    case 'verified':
      return final('succeeded', event.message ?? '', { verifyDueAt: undefined });
    case 'unhealthy':
      return final('unhealthy', event.message, { verifyDueAt: undefined });
    case 'cause_retry':
      return to('waiting_retry', {
        ...statusPatch(r, event.status),
        message: event.message,
        failureClass: event.failureClass,
        causeRetries: (r.causeRetries ?? 0) + 1,
        ...retryAt(event.backoffMs),
      });
    case 'manual':
      return final('manual', event.message, {
        ...statusPatch(r, event.status),
        failureClass: event.failureClass,
      });
    case 'quarantine':
      return final('quarantined', event.message);
    case 'failed':
      return final('failed', event.message, {
        ...statusPatch(r, event.status),
        ...(event.failureClass ? { failureClass: event.failureClass } : {}),
      });
    case 'timed_out':
      return final('timed_out', event.message, statusPatch(r, event.status));
    case 'seen_alive':
      return to('queued', {
        notAliveAnswers: 0,
        finishedAt: undefined,
        message: 'seen alive again by a scan',
      });
    case 'supersede':
      // A Collector under verification reached the build: it stays a success, unverified.
      if (r.state === 'verifying') return final('succeeded', `unverified: ${event.message}`);
      return final('skipped', event.message);
    case 'abort':
      return final('aborted', event.message);
    case 'operator_retry':
      return to('waiting_retry', {
        retries: (r.retries ?? 0) + 1,
        notAliveAnswers: 0,
        errorAnswers: 0,
        transientErrors: 0,
        statusErrors: 0,
        causeRetries: 0,
        finishedAt: undefined,
        reconcilingSince: undefined,
        taskProven: undefined,
        message: event.message,
        ...retryAt(0),
      });
  }
}

/** A final status read counts as a read; one learned from the listings does not. */
function statusPatch(r: CollectorRecord, status: number | undefined): Partial<CollectorRecord> {
  return status === undefined ? {} : { lastStatus: status, statusReads: r.statusReads + 1, statusErrors: 0 };
}

/** The record of a Collector a scan found: `queued`, from its current build to the rollout's. */
export function newRecord(
  c: {
    id: number;
    name: string;
    hostName?: string;
    timeZone?: string;
    collectorVersion: string;
    osName?: string;
    osArch?: string;
  },
  to: string,
  now: number,
  cohort?: string,
): CollectorRecord {
  return {
    id: c.id,
    name: c.name,
    hostName: c.hostName ?? '',
    ...(c.timeZone === undefined ? {} : { timeZone: c.timeZone }),
    ...(c.osName ? { osName: c.osName } : {}),
    ...(c.osArch ? { osArch: c.osArch } : {}),
    ...(cohort ? { cohort } : {}),
    from: c.collectorVersion,
    to,
    state: 'queued',
    attempts: 0,
    admissions: 0,
    notAliveAnswers: 0,
    errorAnswers: 0,
    transientErrors: 0,
    statusReads: 0,
    statusErrors: 0,
    discoveredAt: now,
  };
}
