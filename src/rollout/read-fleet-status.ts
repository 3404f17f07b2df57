/**
 * A snapshot of every rollout for `status`, `/status` and the metrics: phase, counts per state,
 * in-flight slots, progress, and the upgrade queue's job counts.
 */
import type { Queue } from 'bullmq';
import type { InflightSlots } from './inflight-slots.js';
import { FINAL_STATES, type ResultStore } from './result-store.js';
import type { RolloutRecord, RolloutStore } from './rollout-store.js';

export interface RolloutStatus extends RolloutRecord {
  counts: Record<string, number>;
  inflight: number;
  total: number;
  /** Collectors with a final outcome. */
  done: number;
}

export interface FleetStatus {
  rollouts: RolloutStatus[];
  queue: Record<string, number>;
}

export async function readFleetStatus(deps: {
  rollouts: RolloutStore;
  results: ResultStore;
  slots: InflightSlots;
  queue?: Queue;
}): Promise<FleetStatus> {
  const out: RolloutStatus[] = [];
  for (const r of await deps.rollouts.list()) {
    const counts = (await deps.results.counts(r.id)) as Record<string, number>;
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const done = FINAL_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0);
    out.push({ ...r, counts, inflight: await deps.slots.count(r.id), total, done });
  }
  const queue = deps.queue
    ? ((await deps.queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'failed',
        'completed',
        'prioritized',
      )) as Record<string, number>)
    : {};
  return { rollouts: out, queue };
}
