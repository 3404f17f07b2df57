/**
 * The door of src/rollout: everything outside this folder imports from here and nowhere else
 * (test/unit/architecture/walls.test.ts holds that). What it opens onto:
 * - the state: the stores of rollouts, Collectors and events on one Redis, and the keys;
 * - the daemon's scheduler: the leader lock, the loop and one tick;
 * - operator actions (pause, resume, abort, promote, retry, forget, rollback, one-off upgrades);
 * - reading the fleet's status, and the vocabulary of states and phases that status, metrics,
 *   the HTTP API and the worker speak.
 * The rooms behind it: collector/ (a Collector's states, moves and store), life/ (a rollout's
 * phases, record, store and event log), tick/ (leader, loop, the order of one tick), admit/,
 * gates/, listings/, operator/ (see docs/how-it-works.md).
 */

export { cohortKey, parseCohortKey } from './collector/cohort-key.js';
export * from './collector/collector-state.js';
export {
  type ApplyOptions,
  type ApplyOutcome,
  CollectorStore,
  type StepView,
} from './collector/collector-store.js';
export { createKeys, type Keys } from './keys.js';
export {
  EventLog,
  HISTORY_LIMIT,
  type RecordedEvent,
  ROLLOUT_EVENT_TYPES,
  type RolloutEvent,
  type RolloutEventType,
} from './life/event-log.js';
export {
  type FleetStatus,
  type RolloutStatus,
  readFleetStatus,
  rolloutStatus,
} from './life/read-fleet-status.js';
export {
  admits,
  describePhase,
  isPolicyPause,
  PAUSE_REASONS,
  ROLLOUT_PHASES,
  type RolloutPhase,
} from './life/rollout-phase.js';
export {
  policyOf,
  type RolloutRecord,
  type RolloutSettings,
  RolloutStore,
  rolloutId,
  type WaveProgress,
} from './life/rollout-store.js';
export {
  abort,
  type ControlDeps,
  ControlError,
  type ControlResult,
  forget,
  pause,
  promote,
  RETRYABLE_STATES,
  resume,
  retry,
} from './operator/control.js';
export { ONE_OFF_MAX_COLLECTORS, OneOffPolicies } from './operator/one-off-policies.js';
export {
  DEFAULT_ROLLBACK_STATES,
  ROLLBACK_STATES,
  requestRollback,
  rollbackStates,
} from './operator/rollback.js';
export { LeaderLock } from './tick/leader-lock.js';
export {
  DEFAULT_RETENTION_MS,
  MAX_BACKOFF_MS,
  resolveTarget,
  Scheduler,
  type SchedulerDeps,
  settingsOf,
} from './tick/scheduler.js';
export { KICK_DELAY_MS, type SchedulerLoop, startSchedulerLoop } from './tick/scheduler-loop.js';
