/**
 * The door of src/rollout: everything outside this folder imports from here and nowhere else
 * (test/unit/architecture/walls.test.ts holds that). What it opens onto:
 * - the state: the stores of rollouts and Collectors on one Redis, their history, and the keys;
 * - the daemon's scheduler: the leader lock, the loop and one tick;
 * - operator actions (pause, resume, abort, promote, retry, forget, rollback, one-off upgrades);
 * - the daemon's own problems (problems/), kept in Redis with an expiry for `status`;
 * - reading the fleet's status, and the vocabulary of states, phases and events that status,
 *   the metrics, the HTTP API, the webhooks and the worker speak;
 * - what the worker needs to move a Collector: its record, the transitions, the store.
 * The rooms behind it, each with a door of its own: collector/ (a Collector's states, moves and
 * store), life/ (a rollout's phases, record, events, store), tick/ (leader, loop, the order of
 * one tick), admit/, gates/, listings/, operator/ (see docs/how-it-works.md).
 * It exports only what is used outside src/rollout; a name only tests use comes from a room's own
 * door or from the test door, testing.ts.
 *
 * Words used throughout:
 * - room: a folder of src/rollout with a door of its own (its index.ts), through which alone the
 *   other rooms and the tests enter it (walls.test.ts);
 * - slot: one of a rollout's `maxInFlight` (and per organization `maxInFlightPerOrg`) places; a
 *   Collector holds one from its admission until its task ends (SLOT_STATES);
 * - admission: the admitter's move of a queued or waiting Collector into a free slot
 *   (queued ─admit─► admitted), in the rollout's current wave;
 * - settled: a Collector with an outcome for reports, `done` and convergence: a final state, or
 *   `not_alive` (which reopens when a scan sees it alive); final states change only by `retry`;
 * - one-off: an upgrade of named Collectors (`fleet-upgrade upgrade`, POST /upgrades) run as a
 *   rollout of a policy of its own, not of a policy file;
 * - ring: a policy that follows another (`after.policy`): a build starts in it only once it has
 *   converged and soaked in the earlier ring;
 * - wave: a step of a rollout's plan (policy `waves`: cumulative sizes); the next wave starts once
 *   every Collector of the earlier ones has an outcome and the failure gate holds (or on `promote`);
 * - part: the share of a rollout in one organization (its build, its slots, its health): one
 *   organization's part waits while its service fails, the others go on.
 */

export {
  type ApplyOptions,
  type CollectorEvent,
  type CollectorRecord,
  type CollectorState,
  CollectorStore,
  collectorKey,
  countsByMetricState,
  DEFAULT_ORG,
  DEFAULT_ROLLBACK_STATES,
  gateClass,
  isSettled,
  keyOf,
  METRIC_STATES,
  type MetricState,
  metricState,
  type OutcomeTally,
  orgOf,
  ownerOf,
  RETRYABLE_STATES,
  ROLLBACK_STATES,
  SETTLED_STATES,
  SLOT_STATES,
  STATE_LABELS,
  type StateCounts,
  type StoreListeners,
  sumStates,
  transition,
} from './collector/index.js';
export { createKeys, type Keys } from './keys.js';
// A rollout's report, row by row (the CLI's `report` and GET /rollouts/{id}/report).
export {
  AUDIT_MAX_RECORDS,
  AUDIT_RETENTION_MS,
  type AuditBounds,
  type AuditEntry,
  type AuditFilter,
  AuditLog,
  type AuditNote,
  type AuditRecord,
  admits,
  buildOf,
  csvCell,
  DEFAULT_AUDIT_BOUNDS,
  describeRollbackAccount,
  describeUnmatched,
  EventLog,
  FINDING_WORDS,
  type FleetStatus,
  HISTORY_LIMIT,
  type OneOffView,
  type OrgPartStatus,
  OUTBOX_LIMIT,
  orgsOf,
  PAUSE_REASONS,
  REPORT_COLUMNS,
  type RecordedEvent,
  ROLLOUT_EVENT_TYPES,
  ROLLOUT_PHASES,
  type RollbackAccount,
  type RolloutEvent,
  type RolloutEventType,
  type RolloutPhase,
  type RolloutRecord,
  type RolloutSettings,
  type RolloutStatus,
  RolloutStore,
  readFleetStatus,
  readRollbackAccounts,
  rolloutStatus,
  type StepView,
  scopeRollbacks,
  sortReportRecords,
  type TargetWait,
  toCsvRow,
  toJsonRow,
  toWorklistCsvRow,
  toWorklistRow,
  type UnmatchedCollector,
  unmatchedCsvRow,
  WORKLIST_COLUMNS,
  WORKLIST_STATES,
} from './life/index.js';
export { sendsHealthEvents } from './listings/index.js';
// One-off upgrades: what a one-off asks the service first (`upgrade`, POST /upgrades), its policy.
export {
  checkOneOffWith,
  describeFinding,
  ONE_OFF_MAX_COLLECTORS,
  type OneOffCheck,
  OneOffPolicies,
  whereOf,
} from './one-off/index.js';
export {
  abort,
  approvalsOf,
  approve,
  type ControlDeps,
  ControlError,
  type ControlResult,
  forget,
  type PolicyView,
  pause,
  promote,
  requestRollback,
  resume,
  retry,
  retryable,
  rollbackStates,
} from './operator/index.js';
export {
  OrgHealth,
  type OrgProblem,
  type OrgProblemKind,
  orgProblemOf,
} from './orgs/index.js';
export {
  DAEMON_PROBLEM_KINDS,
  type DaemonProblem,
  DaemonProblems,
  PROBLEM_HEARTBEAT_MS,
  PROBLEM_TTL_MS,
  ProblemBook,
} from './problems/index.js';
export { policyOf, rolloutId } from './rollout-id.js';
export {
  chooseBuild,
  DEFAULT_RETENTION_MS,
  LeaderLock,
  readBuildsSeen,
  resolveTarget,
  Scheduler,
  type SchedulerDeps,
  type SchedulerLoop,
  startSchedulerLoop,
} from './tick/index.js';
