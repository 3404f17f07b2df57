/**
 * The global in-flight limit on a real Redis, taken by several clients at once (as several worker
 * processes and the scheduler would): never more holders than the limit, members keep their
 * slot, release frees one for the next.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis.js';
import { InflightSlots } from '../../../src/rollout/inflight-slots.js';
import { createKeys } from '../../../src/rollout/keys.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const connections: Redis[] = [];
const ROLLOUT = 'linux-fleet@19.470-4';

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

/** `n` InflightSlots, each on its own connection. */
function clients(n: number): InflightSlots[] {
  return Array.from({ length: n }, () => {
    const redis = createRedis(ctx.url, { name: 'slots-test' });
    connections.push(redis);
    return new InflightSlots(redis, createKeys(ctx.prefix));
  });
}

describe('InflightSlots', () => {
  it('gives slots in order up to the limit and no further', async () => {
    const [slots] = clients(1) as [InflightSlots];
    expect(await slots.acquire(ROLLOUT, [5, 3, 9, 1], 3)).toEqual([5, 3, 9]);
    expect(await slots.count(ROLLOUT)).toBe(3);
    expect(await slots.acquire(ROLLOUT, [1, 2], 3)).toEqual([]);
    expect((await slots.members(ROLLOUT)).sort((a, b) => a - b)).toEqual([3, 5, 9]);
    expect(await slots.acquire(ROLLOUT, [], 3)).toEqual([]);
  });

  it('lets members keep their slot, even when the set is full', async () => {
    const [slots] = clients(1) as [InflightSlots];
    await slots.acquire(ROLLOUT, [1, 2], 2);
    expect(await slots.acquire(ROLLOUT, [3, 2, 4, 1], 2)).toEqual([2, 1]);
    expect(await slots.count(ROLLOUT)).toBe(2);
  });

  it('respects a lowered limit: no new slot while above it, members kept', async () => {
    const [slots] = clients(1) as [InflightSlots];
    await slots.acquire(ROLLOUT, [1, 2, 3, 4], 4);
    expect(await slots.acquire(ROLLOUT, [5, 1], 2)).toEqual([1]);
    expect(await slots.count(ROLLOUT)).toBe(4);
  });

  it('release frees a slot for the next one; releasing a non-member is harmless', async () => {
    const [slots] = clients(1) as [InflightSlots];
    await slots.acquire(ROLLOUT, [1, 2], 2);
    await slots.release(ROLLOUT, 99);
    expect(await slots.count(ROLLOUT)).toBe(2);
    await slots.release(ROLLOUT, 1);
    expect(await slots.acquire(ROLLOUT, [3, 4], 2)).toEqual([3]);
    expect((await slots.members(ROLLOUT)).sort()).toEqual([2, 3]);
  });

  it('keeps rollouts apart', async () => {
    const [slots] = clients(1) as [InflightSlots];
    await slots.acquire(ROLLOUT, [1, 2], 2);
    expect(await slots.acquire('other@19.450-12', [1, 2], 2)).toEqual([1, 2]);
  });

  it('never exceeds the limit with concurrent acquire calls from several clients', async () => {
    const all = clients(5);
    const limit = 7;
    const got = await Promise.all(
      all.flatMap((slots, c) =>
        Array.from({ length: 10 }, (_, k) =>
          // Overlapping id ranges: several clients ask for the same Collectors.
          slots.acquire(ROLLOUT, [c * 3 + k, c * 3 + k + 1, 100 + c * 10 + k], limit),
        ),
      ),
    );
    const holders = new Set(got.flat());
    expect(await all[0]?.count(ROLLOUT)).toBe(limit);
    expect(holders.size).toBe(limit);
    expect(new Set(await all[0]?.members(ROLLOUT))).toEqual(holders);
  });

  it('holds the limit through many rounds of acquire and release from several clients', async () => {
    const all = clients(4);
    const limit = 5;
    let maxSeen = 0;
    await Promise.all(
      all.map(async (slots, c) => {
        for (let round = 0; round < 25; round++) {
          const ids = [c * 1000 + round, c * 1000 + round + 500];
          const mine = await slots.acquire(ROLLOUT, ids, limit);
          maxSeen = Math.max(maxSeen, await slots.count(ROLLOUT));
          for (const id of mine) await slots.release(ROLLOUT, id);
        }
      }),
    );
    expect(maxSeen).toBeGreaterThan(0);
    expect(maxSeen).toBeLessThanOrEqual(limit);
    expect(await all[0]?.count(ROLLOUT)).toBe(0);
  });
});
