/**
 * Every Redis key the orchestrator writes, in one place. All keys share one hash tag (`{...}`)
 * so that the Lua scripts that touch several of them work on Redis Cluster too, and so that a
 * test can give every run its own prefix.
 */
export interface Keys {
  /** Prefix of BullMQ's own keys (passed as BullMQ's `prefix` option). */
  readonly bullPrefix: string;
  /** ZSET of rollout ids, scored by start time. */
  readonly rollouts: string;
  rollout(rolloutId: string): string;
  /** STRING: the id of a policy's current rollout. */
  policyRollout(policy: string): string;
  /** HASH collectorId → JSON CollectorResult. */
  results(rolloutId: string): string;
  /** HASH state → number of Collectors in it. */
  counts(rolloutId: string): string;
  /** ZSET of Collector ids in state queued, scored by discovery order: the admission order. */
  waiting(rolloutId: string): string;
  /** SET of Collector ids that hold an in-flight slot of a policy (shared by its rollouts). */
  inflight(policy: string): string;
  /** LIST of recent upgrade durations (ms, request to final status), newest first. */
  durations(rolloutId: string): string;
  /** STRING: the token of the scheduler that leads. */
  readonly leader: string;
  /** HASH of processes that run workers: id → JSON heartbeat. */
  readonly processes: string;
}

/**
 * `prefix` separates deployments (or tests) that share one Redis, e.g. `staging:`; the hash tag
 * after it is fixed.
 */
export function createKeys(prefix = ''): Keys {
  const base = `${prefix}{fleet-upgrade}`;
  return {
    bullPrefix: `${base}:bull`,
    rollouts: `${base}:rollouts`,
    rollout: (id) => `${base}:rollout:${id}`,
    policyRollout: (policy) => `${base}:policy:${policy}:rollout`,
    results: (id) => `${base}:results:${id}`,
    counts: (id) => `${base}:counts:${id}`,
    waiting: (id) => `${base}:waiting:${id}`,
    inflight: (id) => `${base}:inflight:${id}`,
    durations: (id) => `${base}:durations:${id}`,
    leader: `${base}:leader`,
    processes: `${base}:processes`,
  };
}
