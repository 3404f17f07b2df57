/**
 * Admission of a rollout's queued Collectors into the upgrade queue. A Collector is admitted while
 * the rollout holds fewer than `maxInFlight` slots, its wave is open (at a wave's boundary the next
 * wave waits for the earlier ones to finish) and its maintenance window is open in its time zone.
 * It moves `queued` → `admitted` by compare-and-set, then gets a job; the waiting set (admission
 * order) drops it once enqueued.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Logger } from '../lib/logger.js';
import { isWindowOpen } from '../policy/is-window-open.js';
import type { Policy } from '../policy/schema.js';
import { waveLimits } from '../policy/wave-limits.js';
import type { UpgradeJobData } from '../worker/upgrade-processor.js';
import { enqueueUpgrades } from '../worker/upgrade-queue.js';
import type { InflightSlots } from './inflight-slots.js';
import type { Keys } from './keys.js';
import {
  ACTIVE_STATES,
  type CollectorResult,
  type CollectorState,
  type ResultStore,
  SLOT_STATES,
} from './result-store.js';
import type { RolloutRecord } from './rollout-store.js';
import { IN_PROGRESS, sumStates } from './sum-states.js';

export interface AdmitDeps {
  redis: Redis;
  keys: Keys;
  slots: InflightSlots;
  results: ResultStore;
  queue: Queue<UpgradeJobData>;
  logger: Logger;
}

/** Admits queued Collectors while slots, the current wave and the windows allow. */
export async function admitQueued(
  deps: AdmitDeps,
  rollout: RolloutRecord,
  policy: Policy,
  counts: Partial<Record<CollectorState, number>>,
  now: number,
): Promise<void> {
  const { redis, keys, slots, results, queue } = deps;
  const total = sumStates(counts, [
    ...ACTIVE_STATES,
    'succeeded',
    'failed',
    'timed_out',
    'not_alive',
    'rejected',
  ]);
  const queued = counts.queued ?? 0;
  if (queued === 0) return;
  const started = total - queued;
  const limits = waveLimits(policy.waves, total);
  // At a wave's boundary, the next wave waits until every Collector of the earlier ones is done.
  const atBoundary = limits.includes(started) && sumStates(counts, IN_PROGRESS) > 0;
  const cap = atBoundary ? started : (limits.find((l) => l > started) ?? total);
  const free = Math.min(rollout.maxInFlight - (await slots.count(rollout.id)), cap - started);
  if (free <= 0) return;
  const window = Math.max(free * 4, 100) - 1;
  const candidates = (await redis.zrange(keys.waiting(rollout.id), '0', String(window))).map(Number);
  const records = await results.getMany(rollout.id, candidates);
  // Ids left in the waiting set by a crash after their admission are dropped from it here:
  // only Collectors read as queued may take a slot.
  const stale = candidates.filter((id) => records.get(id)?.state !== 'queued');
  if (stale.length) await redis.zrem(keys.waiting(rollout.id), ...stale.map(String));
  const open = candidates.filter((id) => {
    const r = records.get(id);
    return r?.state === 'queued' && isWindowOpen(policy.windows, now, r.timeZone);
  });
  const got = await slots.acquire(rollout.id, open.slice(0, free), rollout.maxInFlight);
  const admitted: number[] = [];
  for (const id of got) {
    const r = records.get(id) as CollectorResult;
    if (!(await results.put(rollout.id, { ...r, state: 'admitted', admittedAt: now }, 'queued'))) {
      // It moved on since we read it; give the slot back only if it holds none by right.
      const fresh = await results.get(rollout.id, id);
      if (!fresh || !SLOT_STATES.includes(fresh.state)) await slots.release(rollout.id, id);
      await redis.zrem(keys.waiting(rollout.id), String(id));
      continue;
    }
    admitted.push(id);
  }
  if (admitted.length === 0) return;
  await enqueueUpgrades(queue, rollout.id, admitted);
  await redis.zrem(keys.waiting(rollout.id), ...admitted.map(String));
  deps.logger.debug({ rollout: rollout.id, admitted: admitted.length }, 'admitted');
}
