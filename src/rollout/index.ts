/**
 * The door of src/rollout: everything outside this folder imports from here and nowhere else
 * (test/unit/architecture/walls.test.ts holds that). What it opens onto:
 * - the state: the stores of rollouts and Collectors on one Redis, their history, and the keys;
 * - the daemon's scheduler: the leader lock, the loop and one tick;
 * - operator actions (pause, resume, abort, promote, retry, forget, rollback, one-off upgrades);
 * - reading the fleet's status, and the vocabulary of states, phases and events that status,
 *   the metrics, the HTTP API, the webhooks and the worker speak;
 * - what the worker needs to move a Collector: its record, the transitions, the store.
 * The rooms behind it, each with a door of its own: collector/ (a Collector's states, moves and
 * store), life/ (a rollout's phases, record, events, store), tick/ (leader, loop, the order of
 * one tick), admit/, gates/, listings/, operator/ (see docs/how-it-works.md).
 */

export {
  ACTIVE_STATES,
  type ApplyOptions,
  type ApplyOutcome,
  type AttemptEntry,
  COLLECTOR_STATES,
  type CollectorEvent,
  type CollectorEventType,
  type CollectorRecord,
  type CollectorState,
  CollectorStore,
  cohortKey,
  countsByMetricState,
  DEFAULT_ROLLBACK_STATES,
  FINAL_STATES,
  GATED_STATES,
  gateClass,
  grownBackoff,
  holdsSlot,
  indexOf,
  isAllowed,
  isCollectorState,
  isFinal,
  isSettled,
  type LifeSettings,
  METRIC_STATES,
  type MetricState,
  type Move,
  metricState,
  NOT_FOUND_LIMIT,
  needsJob,
  newRecord,
  OFF_LISTING_STATES,
  type Owner,
  ownerOf,
  parseCohortKey,
  RETRYABLE_STATES,
  ROLLBACK_STATES,
  SETTLED_STATES,
  SLOT_STATES,
  STARTED_ACTIVE_STATES,
  STATE_LABELS,
  STATUS_ERROR_LIMIT,
  type StateCounts,
  sumStates,
  TRANSITIONS,
  transition,
  WAVE_ROLLBACK_STATES,
} from './collector/index.js';
export { createKeys, type Keys } from './keys.js';
export {
  admits,
  collectors,
  describePhase,
  EventLog,
  type EventSource,
  type FleetStatus,
  HISTORY_LIMIT,
  isPolicyPause,
  OUTBOX_LIMIT,
  PAUSE_REASONS,
  type RecordedEvent,
  ROLLOUT_EVENT_TYPES,
  ROLLOUT_PHASES,
  type RolloutEvent,
  type RolloutEventType,
  type RolloutPhase,
  type RolloutRecord,
  type RolloutSettings,
  type RolloutStatus,
  RolloutStore,
  readFleetStatus,
  rolloutStatus,
  type StepView,
  type WaveProgress,
} from './life/index.js';
export {
  abort,
  type ControlDeps,
  ControlError,
  type ControlResult,
  forget,
  ONE_OFF_MAX_COLLECTORS,
  OneOffPolicies,
  pause,
  promote,
  requestRollback,
  resume,
  retry,
  rollbackStates,
} from './operator/index.js';
export { policyOf, rolloutId } from './rollout-id.js';
export {
  DEFAULT_RETENTION_MS,
  KICK_DELAY_MS,
  LeaderLock,
  MAX_BACKOFF_MS,
  resolveTarget,
  Scheduler,
  type SchedulerDeps,
  type SchedulerLoop,
  settingsOf,
  startSchedulerLoop,
} from './tick/index.js';
