/**
 * Leader election on a real Redis, with several locks on separate connections (as separate
 * processes would have): one leads, a lock left to expire is taken over, a release hands it on at
 * once, renewal keeps it, and nobody renews or releases a lock that is no longer theirs.
 * The TTL is real time; the tests that wait for an expiry use a TTL of a few tens of ms.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import { createKeys } from '../../../src/rollout/index.js';
import { LeaderLock } from '../../../src/rollout/tick/index.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const connections: Redis[] = [];

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

function locks(n: number, ttlMs: number): LeaderLock[] {
  const key = createKeys(ctx.prefix).leader;
  return Array.from({ length: n }, () => {
    const redis = createRedis(ctx.url, { name: 'lock-test' });
    connections.push(redis);
    return new LeaderLock(redis, key, ttlMs);
  });
}

const leaderKey = () => createKeys(ctx.prefix).leader;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('LeaderLock', () => {
  it('lets exactly one of several locks lead, at once and on every later round', async () => {
    const all = locks(5, 10_000);
    const first = await Promise.all(all.map((l) => l.tryAcquire()));
    expect(first.filter(Boolean)).toHaveLength(1);
    const leader = all[first.indexOf(true)] as LeaderLock;
    expect(await ctx.redis.get(leaderKey())).toBe(leader.token);
    for (let round = 0; round < 3; round++) {
      const again = await Promise.all(all.map((l) => l.tryAcquire()));
      expect(again).toEqual(first);
    }
    expect(all.map((l) => l.isLeader)).toEqual(first);
  });

  it('renewal resets the time-to-live, so a leader that keeps renewing is not taken over', async () => {
    const [a, b] = locks(2, 10_000) as [LeaderLock, LeaderLock];
    expect(await a.tryAcquire()).toBe(true);
    // As if most of the TTL had passed without a round.
    await ctx.redis.pexpire(leaderKey(), 500);
    expect(await a.tryAcquire()).toBe(true);
    const ttl = await ctx.redis.pttl(leaderKey());
    expect(ttl).toBeGreaterThan(9_000);
    expect(ttl).toBeLessThanOrEqual(10_000);
    expect(await b.tryAcquire()).toBe(false);
    expect(await ctx.redis.get(leaderKey())).toBe(a.token);
  });

  it('after the TTL expires without renewal, another lock takes over; the old leader follows', async () => {
    const [a, b] = locks(2, 30) as [LeaderLock, LeaderLock];
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    let tookOver = false;
    const started = Date.now();
    for (let i = 0; i < 100 && !tookOver; i++) {
      await pause(5);
      tookOver = await b.tryAcquire();
    }
    expect(tookOver).toBe(true);
    expect(Date.now() - started).toBeGreaterThanOrEqual(20);
    expect(b.isLeader).toBe(true);
    // a is still convinced it leads until its next round, which finds out.
    expect(a.isLeader).toBe(true);
    expect(await a.tryAcquire()).toBe(false);
    expect(a.isLeader).toBe(false);
    expect(await ctx.redis.get(leaderKey())).toBe(b.token);
  });

  it('an old leader does not renew or delete the new leader’s key', async () => {
    const [a, b] = locks(2, 10_000) as [LeaderLock, LeaderLock];
    expect(await a.tryAcquire()).toBe(true);
    // a's key disappears (expired while a was paused), b takes it.
    await ctx.redis.del(leaderKey());
    expect(await b.tryAcquire()).toBe(true);
    await a.release();
    expect(await ctx.redis.get(leaderKey())).toBe(b.token);
    expect(await b.tryAcquire()).toBe(true);
  });

  it('release lets another take it at once', async () => {
    const [a, b] = locks(2, 10_000) as [LeaderLock, LeaderLock];
    expect(await a.tryAcquire()).toBe(true);
    expect(await b.tryAcquire()).toBe(false);
    await a.release();
    expect(a.isLeader).toBe(false);
    expect(await ctx.redis.exists(leaderKey())).toBe(0);
    expect(await b.tryAcquire()).toBe(true);
    // Releasing a lock not held is a no-op.
    await a.release();
    expect(await ctx.redis.get(leaderKey())).toBe(b.token);
  });

  it('gives every lock its own token', () => {
    const all = locks(3, 1000);
    expect(new Set(all.map((l) => l.token)).size).toBe(3);
  });
});
