/**
 * The door of life/: a rollout's own life. Its phases (rollout-phase.ts), its typed record and
 * the codec of its Redis hash (rollout-record.ts), its events and their sentences
 * (rollout-events.ts), its store with the one write path (rollout-store.ts: a change and its
 * events in one atomic step; what it reads, rollout-reads.ts; the rollback requests and one-offs
 * it keeps, rollback-requests.ts and one-off-records.ts), its history (event-log.ts), and the fleet's status as read for
 * `status`, `/status` and the metrics (read-fleet-status.ts), why a policy's newest build waits to
 * start (target-waits.ts), and its report's rows (report-rows.ts: the CLI's and the HTTP API's).
 */
export * from './audit-log.js';
export * from './describe-event.js';
export * from './event-log.js';
export * from './one-off-views.js';
export * from './read-fleet-status.js';
export * from './report-rows.js';
export * from './rollback-account.js';
export * from './rollout-codec.js';
export * from './rollout-draft.js';
export * from './rollout-events.js';
export * from './rollout-phase.js';
export type { CurrentRollout, StepView } from './rollout-reads.js';
export * from './rollout-record.js';
export * from './rollout-store.js';
export {
  type MoveOptions,
  moveChange,
  type RolloutRef,
  type RolloutWrite,
  recordedEvent,
  type Written,
} from './rollout-write.js';
export * from './target-waits.js';
