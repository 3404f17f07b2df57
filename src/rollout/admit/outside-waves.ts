/**
 * Collectors outside the policy's waves: those found below its `minimumBuild`, which are moved
 * first, in a wave of their own (admitted ahead of every other, without wave room, whatever the
 * windows, freezes and schedule), and those a known issue of the build held before they started
 * (`knownIssues`). The waves' caps and progress count the others only, so that neither consumes
 * the room of the policy's first wave (its canaries). Their numbers are the rollout's counters
 * (kept by the Collector store's Lua); those below the minimum still queued are counted from the
 * head of the queue.
 */
import type { CollectorStore } from '../collector/index.js';
import type { RolloutRecord } from '../life/index.js';

export interface OutsideWaves {
  /** Collectors outside the waves, found so far. */
  total: number;
  /** Of them, those still queued (below the minimum, not admitted yet). */
  queued: number;
}

export const NONE_OUTSIDE: OutsideWaves = { total: 0, queued: 0 };

export async function outsideWaves(
  store: Pick<CollectorStore, 'queuedBelowMinimum'>,
  rollout: Pick<RolloutRecord, 'id' | 'belowMinimum' | 'knownIssueSkipped' | 'knownIssueManual'>,
): Promise<OutsideWaves> {
  const below = rollout.belowMinimum ?? 0;
  const total = below + (rollout.knownIssueSkipped ?? 0) + (rollout.knownIssueManual ?? 0);
  if (total === 0) return NONE_OUTSIDE;
  return { total, queued: below > 0 ? await store.queuedBelowMinimum(rollout.id) : 0 };
}
