/**
 * What one deployment's keys hold in Redis: MEMORY USAGE (exact, SAMPLES 0) of every key under a
 * prefix, grouped by kind (a rollout's records, its indexes, BullMQ, the rest), and INFO's
 * used_memory for a before/after difference.
 */
import type { Redis } from 'ioredis';

export async function usedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

export interface Footprint {
  keys: number;
  bytes: number;
  byGroup: Record<string, { keys: number; bytes: number }>;
}

function groupOf(key: string): string {
  if (key.includes(':bull:')) return 'bullmq';
  const m = /\{fleet-upgrade\}:([a-z-]+)(?::|$)/.exec(key);
  return m?.[1] ?? 'other';
}

export async function redisFootprint(redis: Redis, prefix: string): Promise<Footprint> {
  const out: Footprint = { keys: 0, bytes: 0, byGroup: {} };
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const bytes = Number((await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      const g = groupOf(key);
      const entry = out.byGroup[g] ?? { keys: 0, bytes: 0 };
      entry.keys++;
      entry.bytes += bytes;
      out.byGroup[g] = entry;
      out.keys++;
      out.bytes += bytes;
    }
  } while (cursor !== '0');
  return out;
}
