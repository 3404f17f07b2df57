/**
 * Follows the rollouts of some policies in Redis until each has finished (converged, or halted
 * with nothing under way), reporting progress on the way. Used by `run --once` and the demo.
 */
import type { Logger } from '../../lib/logger.js';
import { isRedisUnavailable } from '../../lib/redis/redis-unavailable.js';
import type { Policy } from '../../policy/schema.js';
import {
  type RolloutStatus,
  readFleetStatus,
  SETTLED_STATES,
  SLOT_STATES,
  sumStates,
} from '../../rollout/index.js';
import type { Daemon } from './start-daemon.js';

/**
 * Whether nothing of a rollout can move until a person acts: every organization's part that
 * still has Collectors to move waits for its credentials to be fixed (refused, or not allowed to
 * manage Collectors).
 */
export function blockedByCredentials(r: RolloutStatus): boolean {
  const open = r.byOrg.filter((p) => p.total > p.done);
  return open.length > 0 && open.every((p) => p.problem === 'credentials') && r.inflight === 0;
}

/** Rollouts of `policies` that have not finished; `current` maps a policy to its rollout id. */
export function unfinished(
  rollouts: readonly RolloutStatus[],
  policies: readonly Policy[],
  current: Map<string, string>,
): string[] {
  const waiting: string[] = [];
  for (const p of policies) {
    if (!p.enabled) continue;
    const id = current.get(p.name);
    const r = rollouts.find((x) => x.id === id);
    if (!r) waiting.push(p.name);
    // A halted rollout is done once the tasks it had under way have ended: it admits nothing more.
    else if (blockedByCredentials(r)) continue;
    else if (r.phase === 'halted' ? sumStates(r.counts, SLOT_STATES) > 0 : r.phase !== 'converged')
      waiting.push(r.id);
  }
  return waiting;
}

/** Every selected Collector of these rollouts succeeded. */
export function allSucceeded(rollouts: readonly RolloutStatus[]): boolean {
  return rollouts.every(
    (r) => r.phase !== 'halted' && SETTLED_STATES.every((s) => s === 'succeeded' || !r.counts[s]),
  );
}

export interface WatchOptions {
  daemon: Pick<Daemon, 'redis' | 'keys' | 'rollouts'>;
  policies: () => readonly Policy[];
  /** Real ms between two looks. */
  intervalMs: number;
  /** Called after every look with the policies' rollouts. */
  onProgress?: (rollouts: RolloutStatus[]) => void;
  /** Stops watching early (returns undefined). */
  stopped?: () => boolean;
  /** Where a look that failed because Redis was away is told (once per outage). */
  logger?: Pick<Logger, 'warn' | 'info'>;
}

/** Real ms between looks while Redis does not answer: doubling from the interval, at most 5 s. */
const MAX_RETRY_MS = 5000;

/**
 * Resolves to the finished rollouts, or undefined when stopped first. A look that fails because
 * Redis is away (a failover, a restart) is tried again with a growing pause: the process's guard
 * (guard-daemon.ts) is what ends a wait that lasts; any other error is thrown.
 */
export async function watchRollouts(options: WatchOptions): Promise<RolloutStatus[] | undefined> {
  const { daemon, logger } = options;
  let waitMs = options.intervalMs;
  let failing = false;
  for (;;) {
    if (options.stopped?.()) return undefined;
    await new Promise((r) => setTimeout(r, waitMs));
    let status: Awaited<ReturnType<typeof readFleetStatus>>;
    let current: Map<string, string>;
    try {
      status = await readFleetStatus(daemon);
      current = await daemon.rollouts.currentIds();
    } catch (err) {
      if (!isRedisUnavailable(err)) throw err;
      if (!failing)
        logger?.warn({ err: (err as Error).message }, 'rollouts not readable: Redis is away; looking again');
      failing = true;
      waitMs = Math.min(waitMs * 2, MAX_RETRY_MS);
      continue;
    }
    if (failing) logger?.info('rollouts readable again');
    failing = false;
    waitMs = options.intervalMs;
    const ours = status.rollouts.filter((r) => [...current.values()].includes(r.id));
    options.onProgress?.(ours);
    if (unfinished(status.rollouts, options.policies(), current).length === 0) return ours;
  }
}
