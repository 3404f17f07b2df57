/**
 * What moves a Collector from one state (collector-state.ts) to the next: the events, the
 * transition table (every allowed move), and `transition`, a pure function from a record and an
 * event to the move. The store (collector-store.ts) writes moves atomically and refuses any move
 * that is not in the table; the worker, the scheduler and the operator actions turn what
 * happened into these events.
 *
 * The main path, on one line so that a test checks each arrow against the table:
 *   queued ─admit─► admitted ─send─► creating ─created─► pending ─status─► progressing ─verify─► verifying ─verified─► succeeded
 * A create that goes unanswered, creating ─task_unknown─► reconciling, is settled by the listings.
 * The one way out of a final state is the operator's `retry`: failed ─operator_retry─► waiting_retry
 * (and from every state of RETRYABLE_STATES).
 *
 * Every move, by event (generated from TRANSITIONS: test/unit/rollout/transition-diagram.test.ts):
 *
 *   discover         (new) ─► queued
 *   admit            queued, waiting_retry ─► admitted
 *   send             admitted ─► creating
 *   withdraw         admitted, creating ─► waiting_retry
 *   resend           creating ─► creating
 *   created          creating, reconciling ─► pending
 *   not_alive        creating ─► waiting_retry | not_alive
 *   create_error     creating ─► waiting_retry | error
 *   rejected         creating ─► rejected
 *   org_refused      creating ─► waiting_retry
 *   task_unknown     creating ─► reconciling
 *   status           pending, progressing ─► pending | progressing
 *   status_error     pending ─► pending | reconciling | timed_out
 *                    progressing ─► progressing | reconciling | timed_out
 *   succeeded        pending, progressing, reconciling ─► succeeded
 *   verify           pending, progressing, reconciling ─► verifying
 *   verify_later     verifying ─► verifying
 *   seen_on_build    verifying ─► verifying
 *   verified         verifying ─► succeeded
 *   unhealthy        verifying ─► unhealthy
 *   cause_retry      pending, progressing ─► waiting_retry
 *   manual           pending, progressing ─► manual
 *   quarantine       queued, waiting_retry ─► quarantined
 *   known_issue      queued, waiting_retry ─► manual | skipped
 *   supersede        verifying ─► succeeded
 *                    queued, waiting_retry, admitted, reconciling ─► skipped
 *   failed           pending, progressing, reconciling ─► failed
 *   timed_out        pending, progressing, reconciling ─► timed_out
 *   outcome_unknown  reconciling ─► unknown
 *   seen_alive       not_alive ─► queued
 *   retarget         queued ─► queued
 *                    waiting_retry ─► waiting_retry
 *   abort            queued, waiting_retry, admitted ─► aborted
 *   operator_retry   failed, timed_out, not_alive, error, rejected, unhealthy, manual, quarantined, unknown ─► waiting_retry
 *
 */
import { ATTEMPT_LOG_SIZE, type AttemptEntry, type CollectorRecord } from './collector-record.js';
import { type CollectorState, isSettled } from './collector-state.js';

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
  // A send taken back before the create went out (its pre-write unconfirmed): no attempt was made.
  if (event.type === 'withdraw' && r.state === 'creating') return log.slice(0, -1);
  const last = log[log.length - 1];
  if (!last) return r.attemptLog;
  const answer =
    event.type === 'create_error' ? (event.transient ? 'transient_error' : 'error') : ANSWER_OF[event.type];
  const patch: Partial<AttemptEntry> = {};
  if (answer && !last.answer) patch.answer = answer;
  if (event.type === 'created') patch.taskId = event.taskId;
  if (isSettled(next.state) && next.state !== r.state)
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
  /** `pickedAt`: when a worker took up the job (what the job waited in the queue, and then for the budget). */
  | { type: 'send'; pickedAt?: number }
  /** A create found unanswered within the ambiguity window is sent again: the same attempt. */
  | { type: 'resend' }
  /**
   * The create was not sent after all: from `admitted`, the rollout stopped admitting; from
   * `creating`, the replicas did not confirm its pre-write (the attempt is taken back). Back to
   * wait, slot given back.
   */
  | { type: 'withdraw'; message: string }
  | { type: 'created'; taskId: string; requestTime: number; createdBy: string }
  | { type: 'not_alive'; message: string }
  /** A create answered with an error; `transient` for 5xx, 429 and network faults. */
  | { type: 'create_error'; transient: boolean; message: string }
  /** A vendor code that will not change: collector.invalid, collector.type.invalid, collector.version.invalid. */
  | { type: 'rejected'; message: string }
  /**
   * A task may run whose id we do not know: `proven` when the service showed that our create made
   * one (an unreadable 202, collector.in.upgrading to a create sent again after one that went
   * unanswered); not when a create went unanswered, nor for collector.in.upgrading answered to a
   * first create (a task runs, not ours).
   */
  | { type: 'task_unknown'; proven: boolean; message: string }
  /**
   * What became of a create or a task cannot be known (the listing offers the Collector again, or
   * past the deadline shows nothing, and no task of ours was proven): the outcome `unknown`.
   */
  | { type: 'outcome_unknown'; message: string }
  /**
   * The organization refused the create (credentials refused, or not allowed to manage
   * Collectors): no fault of the Collector's, so no error is counted; it waits, and the
   * organization's part waits until its service answers again (orgs/org-health.ts).
   */
  | { type: 'org_refused'; message: string }
  /** A status read: the task is unfinished (0, 1 or 6). */
  | { type: 'status'; status: number }
  /**
   * A status read gave nothing usable; `exhausted`: no more reads are worth it (past the task's
   * deadline): the listings tell what became of the task.
   */
  | { type: 'status_error'; notFound: boolean; message: string; exhausted?: boolean }
  | { type: 'succeeded'; status?: number }
  /** The task succeeded; the listings must now show the Collector alive on the build (verify). */
  | { type: 'verify'; status?: number; dueAt: number }
  /** A verification pass did not see it alive on the build yet (`message`: what it saw): look again at `dueAt`. */
  | { type: 'verify_later'; message: string; dueAt: number }
  /** A verification pass saw it alive on the build for the first time (the mark is its lastSeenAlive). */
  | { type: 'seen_on_build'; mark: number; dueAt: number }
  /** Verified: seen alive on the build, its heartbeat advancing through the bake. */
  | { type: 'verified'; message?: string }
  /**
   * Not seen alive on the build in time, stopped heartbeating, on another build, or a new health
   * event (`failureClass` `health:<trackerId>`, listings/health-verdicts.ts).
   */
  | { type: 'unhealthy'; message: string; failureClass?: string }
  /** The task failed and its failure class's action is `retry`: a new attempt after `backoffMs`. */
  | { type: 'cause_retry'; message: string; failureClass: string; backoffMs: number; status?: number }
  /** The task failed and its failure class's action is `manual`: on the worklist, not judged by the gate. */
  | { type: 'manual'; message: string; failureClass: string; status?: number }
  /** Its cohort failed significantly above the gate: held while the other cohorts go on. */
  | { type: 'quarantine'; message: string }
  /**
   * A known issue of the rollout's build matches it (policy `knownIssues`): it never gets a task
   * for the build; `skip` leaves it out, `manual` puts it on the worklist, the note as its message.
   */
  | { type: 'known_issue'; action: 'skip' | 'manual'; note: string }
  | { type: 'failed'; message: string; status?: number; failureClass?: string }
  | { type: 'timed_out'; message: string; status?: number }
  /** A scan lists a not_alive Collector alive again. */
  | { type: 'seen_alive' }
  /**
   * Its organization's build moved on while it waited (`latest` resolves in each organization's
   * build list, and one may offer the rollout's build later than another): it goes to the new
   * one, keeping its place in the queue. Only before its create was sent.
   */
  | { type: 'retarget'; to: string; kind?: string }
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
  ['creating', 'withdraw', 'waiting_retry'],
  ['creating', 'resend', 'creating'],
  ['creating', 'created', 'pending'],
  // A step that found the create too old and reconciles it can lose the race to the answer.
  ['reconciling', 'created', 'pending'],
  ['creating', 'not_alive', 'waiting_retry'],
  ['creating', 'not_alive', 'not_alive'],
  ['creating', 'create_error', 'waiting_retry'],
  ['creating', 'create_error', 'error'],
  ['creating', 'rejected', 'rejected'],
  ['creating', 'org_refused', 'waiting_retry'],
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
  ['queued', 'known_issue', 'skipped'],
  ['queued', 'known_issue', 'manual'],
  ['waiting_retry', 'known_issue', 'skipped'],
  ['waiting_retry', 'known_issue', 'manual'],
  ['verifying', 'supersede', 'succeeded'],
  ['progressing', 'succeeded', 'succeeded'],
  ['reconciling', 'succeeded', 'succeeded'],
  ['pending', 'failed', 'failed'],
  ['progressing', 'failed', 'failed'],
  ['reconciling', 'failed', 'failed'],
  ['pending', 'timed_out', 'timed_out'],
  ['progressing', 'timed_out', 'timed_out'],
  ['reconciling', 'timed_out', 'timed_out'],
  ['reconciling', 'outcome_unknown', 'unknown'],
  ['not_alive', 'seen_alive', 'queued'],
  ['queued', 'retarget', 'queued'],
  ['waiting_retry', 'retarget', 'waiting_retry'],
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
  ['unknown', 'operator_retry', 'waiting_retry'],
];

/** Outcomes an operator may ask a new attempt for (`retry --only`): the table's `operator_retry` rows. */
export const RETRYABLE_STATES: readonly CollectorState[] = TRANSITIONS.filter(
  ([, event]) => event === 'operator_retry',
).map(([from]) => from as CollectorState);

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

/** The failure class of a Collector a known issue of the build held (policy `knownIssues`). */
export const KNOWN_ISSUE_CLASS = 'known_issue';

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
      return to('creating', {
        createSentAt: now,
        firstSentAt: now,
        attempts: r.attempts + 1,
        ...(event.pickedAt === undefined ? {} : { pickedAt: event.pickedAt }),
      });
    case 'resend':
      return to('creating', { createSentAt: now });
    case 'withdraw':
      if (r.state === 'creating')
        return to('waiting_retry', {
          message: event.message,
          attempts: Math.max(0, r.attempts - 1),
          createSentAt: undefined,
          firstSentAt: undefined,
          ...retryAt(0),
        });
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
    case 'org_refused':
      return to('waiting_retry', { message: event.message, ...retryAt(settings.errorBackoffMs) });
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
      if (n >= limit || event.exhausted)
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
      return final('unhealthy', event.message, {
        verifyDueAt: undefined,
        ...(event.failureClass ? { failureClass: event.failureClass } : {}),
      });
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
    case 'known_issue':
      return final(event.action === 'skip' ? 'skipped' : 'manual', event.note, {
        failureClass: KNOWN_ISSUE_CLASS,
        nextAttemptAt: undefined,
      });
    case 'failed':
      return final('failed', event.message, {
        ...statusPatch(r, event.status),
        ...(event.failureClass ? { failureClass: event.failureClass } : {}),
      });
    case 'timed_out':
      return final('timed_out', event.message, statusPatch(r, event.status));
    case 'outcome_unknown':
      return final('unknown', event.message);
    case 'seen_alive':
      return to('queued', {
        notAliveAnswers: 0,
        finishedAt: undefined,
        message: 'seen alive again by a scan',
      });
    case 'retarget':
      if (event.to === r.to) return refuse();
      return to(r.state, { to: event.to, ...(event.kind === undefined ? {} : { kind: event.kind }) });
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
