/**
 * A snapshot of every rollout for `status`, `/status` and the metrics: phase, counts per state,
 * the rollout's own in-flight count (its Collectors in slot states, not its policy's), progress,
 * the Collectors each quarantined cohort holds now, and the upgrade queue's job counts.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import { parseCounts, SETTLED_STATES, SLOT_STATES, type StateCounts, sumStates } from '../collector/index.js';
import type { Keys } from '../keys.js';
import { describePhase } from './rollout-phase.js';
import type { RolloutRecord } from './rollout-record.js';
import type { RolloutStore } from './rollout-store.js';

export interface RolloutStatus extends RolloutRecord {
  counts: StateCounts;
  /** The phase as a person reads it, e.g. `paused (policy disabled)`. */
  phaseText: string;
  /** This rollout's Collectors holding an in-flight slot. */
  inflight: number;
  total: number;
  /** Collectors with an outcome. */
  done: number;
}

export interface FleetStatus {
  rollouts: RolloutStatus[];
  queue: Record<string, number>;
}

export function rolloutStatus(r: RolloutRecord, counts: StateCounts): RolloutStatus {
  const total = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
  return {
    ...r,
    counts,
    phaseText: describePhase(r.phase, r.pauseReason),
    inflight: sumStates(counts, SLOT_STATES),
    total,
    done: sumStates(counts, SETTLED_STATES),
  };
}

export async function readFleetStatus(deps: {
  redis: Redis;
  keys: Keys;
  rollouts: RolloutStore;
  queue?: Queue;
}): Promise<FleetStatus> {
  const list = await deps.rollouts.list();
  const pipe = deps.redis.pipeline();
  for (const r of list) pipe.hgetall(deps.keys.counts(r.id));
  // Rollouts with quarantined cohorts: how many of each cohort are held now.
  const held = list.filter((r) => r.quarantined?.length);
  for (const r of held) pipe.hgetall(deps.keys.cohortCounts(r.id));
  const values = list.length ? replies(await pipe.exec()) : [];
  held.forEach((r, i) => {
    const perCohort = values[list.length + i] as Record<string, string>;
    r.quarantined = r.quarantined?.map((q) => ({
      ...q,
      held: Number(perCohort[`${q.cohort}|quarantined`] ?? 0),
    }));
  });
  const rollouts = list.map((r, i) => rolloutStatus(r, parseCounts(values[i] as Record<string, string>)));
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
  return { rollouts, queue };
}
