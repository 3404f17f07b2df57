/**
 * One rehearsal, one clock (issue #26): a scaled clock set by the simulator's now, told at a
 * wall-clock instant, reads the simulator's time from then on; a clock that already agrees (within
 * a request's latency on it) is left alone, and the wall clock is never moved.
 */
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { alignableClock, alignSharedClock, originFor } from '../../../src/lib/shared-clock.js';

/** The few commands alignSharedClock sends, recorded. */
function fakeRedis() {
  const sets: [string, string][] = [];
  const redis = {
    async set(key: string, value: string) {
      sets.push([key, value]);
      return 'OK';
    },
  } as unknown as Redis;
  return { redis, sets };
}

describe('the deployment clock set by the simulator’s', () => {
  it('originFor gives the origin at which a scaled clock reads the simulator’s now', () => {
    const wall = 1_800_000_000_000;
    const simNow = wall + 45 * 60_000; // the simulator 45 simulated minutes ahead
    const origin = originFor(120, simNow, wall);
    expect(origin + (wall - origin) * 120).toBeCloseTo(simNow, -2);
  });

  it('moves a clock 45 simulated minutes behind onto the simulator’s, and writes the record', async () => {
    const { redis, sets } = fakeRedis();
    const clock = alignableClock(120, Date.now() - 1000);
    const wallAt = Date.now();
    const simNow = clock.now() + 45 * 60_000;
    const moved = await alignSharedClock(redis, 'k:clock', clock, simNow, wallAt);
    expect(moved).toBeGreaterThan(44 * 60_000);
    expect(Math.abs(clock.now() - (simNow + (Date.now() - wallAt) * 120))).toBeLessThan(5_000);
    expect(sets).toHaveLength(1);
    expect(JSON.parse(sets[0]?.[1] as string)).toEqual({ scale: 120, origin: expect.any(Number) });
  });

  it('leaves alone a clock that agrees within a request’s latency, and the wall clock', async () => {
    const { redis, sets } = fakeRedis();
    const clock = alignableClock(120);
    expect(await alignSharedClock(redis, 'k:clock', clock, clock.now() + 5_000, Date.now())).toBe(0);
    const wall = alignableClock(1);
    expect(await alignSharedClock(redis, 'k:clock', wall, Date.now() + 3_600_000, Date.now())).toBe(0);
    expect(sets).toEqual([]);
  });
});
