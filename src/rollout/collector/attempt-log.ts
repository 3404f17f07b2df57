/**
 * A Collector's attempt log after a move (its last ATTEMPT_LOG_SIZE attempts, collector-record.ts):
 * a new entry when a create is sent, then the service's answer, the task id and the outcome on the
 * latest. Pure; transition.ts calls it for every move.
 */
import { ATTEMPT_LOG_SIZE, type AttemptEntry, type CollectorRecord } from './collector-record.js';
import { isSettled } from './collector-state.js';
import type { CollectorEvent, CollectorEventType } from './transition-table.js';

const ANSWER_OF: Partial<Record<CollectorEventType, string>> = {
  created: 'created',
  not_alive: 'not_alive',
  rejected: 'rejected',
  task_unknown: 'unknown',
};

/** The attempt log after a move: a new entry at `send`, the answer and the outcome on the latest. */
export function logAttempt(
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
