/**
 * Follows the rollouts of some policies in Redis until each has finished (converged, or halted
 * with nothing under way), reporting progress on the way. Used by `run --once` and the demo.
 */
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
}

/** Resolves to the finished rollouts, or undefined when stopped first. */
export async function watchRollouts(options: WatchOptions): Promise<RolloutStatus[] | undefined> {
  const { daemon } = options;
  for (;;) {
    if (options.stopped?.()) return undefined;
    await new Promise((r) => setTimeout(r, options.intervalMs));
    const status = await readFleetStatus(daemon);
    const current = await daemon.rollouts.currentIds();
    const ours = status.rollouts.filter((r) => [...current.values()].includes(r.id));
    options.onProgress?.(ours);
    if (unfinished(status.rollouts, options.policies(), current).length === 0) return ours;
  }
}
