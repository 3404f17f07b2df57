/**
 * Every Redis key and channel the orchestrator uses, in one place. All keys share one hash tag
 * (`{...}`) so that the Lua scripts that touch several of them work on Redis Cluster too, and so
 * that a test can give every run its own prefix.
 */
export interface Keys {
  /** Prefix of BullMQ's own keys (passed as BullMQ's `prefix` option). */
  readonly bullPrefix: string;
  /**
   * Prefix of the API request budget's keys. Under it the budget's keys carry a tag of their own
   * (src/api/redis-request-budget.ts), which Redis Cluster ignores: it hashes the first tag, so
   * they share the slot of every other key (harmless: each budget script touches only its keys).
   */
  readonly apiBudget: string;
  /** ZSET of rollout ids, scored by start time. */
  readonly rollouts: string;
  /** HASH policy name → id of its current rollout. */
  readonly policies: string;
  /** SET of rollouts that are no longer current but hold tasks of unknown id the scheduler resolves. */
  readonly followed: string;
  /** HASH name → JSON of a one-off policy (`fleet-upgrade upgrade --collector ...`). */
  readonly oneOffs: string;
  /** HASH source rollout → JSON rollback request (rollback.ts), taken by the scheduler's next tick. */
  readonly rollbackRequests: string;
  /**
   * HASH rollout id → JSON of the holds it had when it was forgotten (its quarantined cohorts):
   * a rollout started again under that id starts with them (rollout-store.ts `start`).
   */
  readonly forgotten: string;
  /** HASH of one rollout: phase, settings, counters (rollout-store.ts). */
  rollout(rolloutId: string): string;
  /** HASH collectorId → JSON CollectorRecord. */
  results(rolloutId: string): string;
  /** HASH state → number of Collectors in it. */
  counts(rolloutId: string): string;
  /** HASH `<wave>:<state>` → number of the wave's Collectors in it (the gate judges each wave). */
  waveCounts(rolloutId: string): string;
  /** ZSET of Collectors in `queued`, scored by their place in the admission order. */
  queued(rolloutId: string): string;
  /** ZSET of Collectors in `waiting_retry`, scored by the clock time of their next attempt. */
  retries(rolloutId: string): string;
  /** ZSET of Collectors in `reconciling`, scored by the clock time they went there. */
  reconciling(rolloutId: string): string;
  /** ZSET of Collectors in `verifying`, scored by the clock time a verification pass is due for them. */
  verifying(rolloutId: string): string;
  /** HASH `<cohort>|<state>` → Collectors of that cohort in that state (cohort gates). */
  cohortCounts(rolloutId: string): string;
  /** SET of `<rollout>#<collector key>` holding an in-flight slot of a policy (shared by its rollouts). */
  slots(policy: string): string;
  /** SET of the members of `slots(policy)` that are Collectors of organization `org` (maxInFlightPerOrg). */
  orgSlots(policy: string, org: string): string;
  /** HASH `<org>|<state>` → Collectors of that organization in that state. */
  orgCounts(rolloutId: string): string;
  /**
   * HASH `<org>|<outcome>` → times a Collector of that organization reached that settled state
   * (never decreased: fleet_upgrade_results_total), `<org>|verdict:<verdict>` → the health
   * events' verdicts among them (fleet_upgrade_health_verdicts_total), and `<org>|reopened:<state>`
   * → moves out of that settled state (a not_alive Collector alive again, an operator's retry).
   * Kept by apply-moves-15.lua in the step that writes the move.
   */
  outcomes(rolloutId: string): string;
  /** HASH organization → JSON of its current problem (rollout/orgs/org-health.ts); absent when healthy. */
  readonly orgHealth: string;
  /** HASH build → clock ms this deployment first saw it in organization `org`'s build list (`minAge`). */
  buildsSeen(org: string): string;
  /** HASH policy → JSON of the build it waits to start and why (`minAge`, `after`: tick/choose-build.ts). */
  readonly targetWaits: string;
  /** HASH process → JSON of its current problems and their expiry (rollout/problems/daemon-problems.ts). */
  readonly daemonProblems: string;
  /** LIST of recent upgrade durations (ms, request to final status), newest first. */
  durations(rolloutId: string): string;
  /** HASH duration kind (OS × build distance) → JSON list of its latest durations (ms), newest last. */
  kindDurations(rolloutId: string): string;
  /** LIST of a rollout's events (JSON), oldest first: its audit trail (event-log.ts). */
  history(rolloutId: string): string;
  /** STREAM of every rollout event, for delivery to webhooks at least once (src/notify). */
  readonly outbox: string;
  /** STREAM of audit records (audit-log.ts): every control request and policy file change. */
  readonly audit: string;
  /** HASH of audit records dropped: `cap` (the size cap), `retention` (older than `audit.retention`). */
  readonly auditDropped: string;
  /** STRING: the token of the scheduler that leads. */
  readonly leader: string;
  /** HASH of processes that run workers: id → JSON heartbeat. */
  readonly processes: string;
  /** STRING: the deployment's clock (time scale and origin) that every process shares. */
  readonly clock: string;
  /** Channel: a rollout id is published on it when one of its Collectors gives a slot back. */
  readonly slotFreedChannel: string;
  /** STRING `1` once the primary reported a replica: creates then wait for one (lib/redis/replica-wait.ts). */
  readonly replicated: string;
  /** HASH of one organization's inventory of the whole fleet: its last pass, schedule, compliance (src/inventory). */
  inventory(org: string): string;
  /** STRING: the token of the process that keeps the inventory (one at a time, as the scheduler). */
  readonly inventoryLeader: string;
}

/**
 * `prefix` separates deployments (or tests) that share one Redis, e.g. `staging:`; the hash tag
 * after it is fixed.
 */
export function createKeys(prefix = ''): Keys {
  const base = `${prefix}{fleet-upgrade}`;
  return {
    bullPrefix: `${base}:bull`,
    apiBudget: `${base}:`,
    rollouts: `${base}:rollouts`,
    policies: `${base}:policies`,
    followed: `${base}:followed`,
    oneOffs: `${base}:one-offs`,
    rollbackRequests: `${base}:rollback-requests`,
    forgotten: `${base}:forgotten`,
    rollout: (id) => `${base}:rollout:${id}`,
    results: (id) => `${base}:results:${id}`,
    counts: (id) => `${base}:counts:${id}`,
    waveCounts: (id) => `${base}:wave-counts:${id}`,
    queued: (id) => `${base}:queued:${id}`,
    retries: (id) => `${base}:retries:${id}`,
    reconciling: (id) => `${base}:reconciling:${id}`,
    verifying: (id) => `${base}:verifying:${id}`,
    cohortCounts: (id) => `${base}:cohorts:${id}`,
    slots: (policy) => `${base}:slots:${policy}`,
    orgSlots: (policy, org) => `${base}:org-slots:${policy}:${org}`,
    orgCounts: (id) => `${base}:org-counts:${id}`,
    outcomes: (id) => `${base}:outcomes:${id}`,
    orgHealth: `${base}:org-health`,
    buildsSeen: (org) => `${base}:builds-seen:${org}`,
    targetWaits: `${base}:target-waits`,
    daemonProblems: `${base}:daemon-problems`,
    durations: (id) => `${base}:durations:${id}`,
    kindDurations: (id) => `${base}:kind-durations:${id}`,
    history: (id) => `${base}:history:${id}`,
    outbox: `${base}:outbox`,
    audit: `${base}:audit`,
    auditDropped: `${base}:audit-dropped`,
    leader: `${base}:leader`,
    processes: `${base}:processes`,
    clock: `${base}:clock`,
    slotFreedChannel: `${base}:slot-freed`,
    replicated: `${base}:replicated`,
    inventory: (org) => `${base}:inventory:${org}`,
    inventoryLeader: `${base}:inventory-leader`,
  };
}

/**
 * Every key `forget` of rollout `id` touches, in the order of forget-rollout-22.lua's KEYS: the
 * rollout's own keys, which it deletes, then the shared ones it removes the rollout from. One list,
 * so that a key added to a rollout is added here once (a test checks its length against the file's).
 */
export function forgetRolloutKeys(k: Keys, id: string): string[] {
  return [
    k.rollout(id),
    k.results(id),
    k.counts(id),
    k.waveCounts(id),
    k.queued(id),
    k.retries(id),
    k.reconciling(id),
    k.verifying(id),
    k.cohortCounts(id),
    k.orgCounts(id),
    k.durations(id),
    k.kindDurations(id),
    k.history(id),
    k.outcomes(id),
    k.rollouts,
    k.followed,
    k.oneOffs,
    k.policies,
    k.rollbackRequests,
    k.forgotten,
    k.audit,
    k.auditDropped,
  ];
}

/**
 * The keys apply-moves-15.lua (collector-store.ts `apply`) touches, in the order of its KEYS, for
 * moves of rollout `id` of `policy` in organization `org` (a test checks the count and the index
 * codes against the file's).
 */
export function applyMovesKeys(k: Keys, id: string, policy: string, org: string): string[] {
  return [
    k.results(id),
    k.counts(id),
    k.slots(policy),
    k.queued(id),
    k.retries(id),
    k.reconciling(id),
    k.rollout(id),
    k.durations(id),
    k.waveCounts(id),
    k.verifying(id),
    k.cohortCounts(id),
    k.orgCounts(id),
    k.orgSlots(policy, org),
    k.kindDurations(id),
    k.outcomes(id),
  ];
}
