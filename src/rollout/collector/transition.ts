/**
 * What moves a Collector from one state (collector-state.ts) to the next: the events, the
 * transition table (every allowed move), and `transition`, a pure function from a record and an
 * event to the move. The store (collector-store.ts) writes moves atomically and refuses any move
 * that is not in the table; the worker, the scheduler and the operator actions turn what
 * happened into these events.
 *
 * The events and the table are transition-table.ts's; what an attempt's log keeps, attempt-log.ts's.
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
import { logAttempt } from './attempt-log.js';
import type { CollectorRecord } from './collector-record.js';
import type { CollectorState } from './collector-state.js';
import { type CollectorEvent, type CollectorEventType, isAllowed } from './transition-table.js';

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
