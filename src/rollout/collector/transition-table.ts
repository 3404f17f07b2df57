/**
 * What happens to a Collector (`CollectorEvent`: the worker and the scheduler turn service answers
 * into these) and the transition table: every (from, event, to) that may happen, the one source of
 * the moves (transition.ts makes them; the store refuses any other; the diagram in transition.ts's
 * header is generated from it and checked by test/unit/rollout/transition-diagram.test.ts).
 */
import type { CollectorState } from './collector-state.js';

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
