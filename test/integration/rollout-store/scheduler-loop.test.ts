/**
 * The scheduler loop in every `run` process: only the process holding the Redis lock ticks; when
 * it stops (or its lock is gone) another takes over; a failing tick is logged and the loop goes
 * on. Rounds are driven with runOnce(), the timer interval is left long.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import type { Policy } from '../../../src/policy/schema.js';
import { createKeys } from '../../../src/rollout/index.js';
import type { Scheduler } from '../../../src/rollout/tick/index.js';
import {
  KICK_DELAY_MS,
  LeaderLock,
  type SchedulerLoop,
  startSchedulerLoop,
} from '../../../src/rollout/tick/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits (bounded, a few real ms at a time) until `done()` holds. */
async function until(done: () => boolean, maxMs = 1000): Promise<boolean> {
  for (let waited = 0; waited < maxMs && !done(); waited += 2) await pause(2);
  return done();
}
const loops: SchedulerLoop[] = [];
const connections: Redis[] = [];

afterEach(async () => {
  await Promise.all(loops.splice(0).map((l) => l.stop()));
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

function loop(options: { fail?: boolean } = {}) {
  const redis = createRedis(ctx.url, { name: 'loop-test' });
  connections.push(redis);
  const lock = new LeaderLock(redis, createKeys(ctx.prefix).leader, 10_000);
  const ticks: (readonly Policy[])[] = [];
  let afterTicks = 0;
  const log = captureLogger('debug');
  const scheduler = {
    tick: async (policies: readonly Policy[]) => {
      ticks.push(policies);
      if (options.fail) throw new Error('listing failed');
    },
  } as unknown as Scheduler;
  const l = startSchedulerLoop({
    scheduler,
    lock,
    policies: () => [],
    intervalMs: 600_000,
    logger: log.logger,
    onTick: () => {
      afterTicks++;
    },
  });
  loops.push(l);
  return { loop: l, lock, ticks, log, afterTicks: () => afterTicks };
}

describe('startSchedulerLoop', () => {
  it('ticks only in the process that leads', async () => {
    const all = [loop(), loop(), loop()];
    for (let round = 0; round < 3; round++) for (const a of all) await a.loop.runOnce();
    const leaders = all.filter((a) => a.loop.isLeader);
    expect(leaders).toHaveLength(1);
    const leader = leaders[0] as (typeof all)[number];
    expect(leader.ticks.length).toBe(4); // the round at start, then three
    expect(leader.afterTicks()).toBe(4);
    for (const a of all) if (a !== leader) expect(a.ticks).toHaveLength(0);
    expect(leader.log.lines().some((l) => l.msg === 'scheduler leads')).toBe(true);
  });

  it('hands over when the leader stops: its lock is released at once', async () => {
    const a = loop();
    await a.loop.runOnce();
    const b = loop();
    await b.loop.runOnce();
    expect(a.loop.isLeader).toBe(true);
    expect(b.loop.isLeader).toBe(false);
    await a.loop.stop();
    loops.splice(loops.indexOf(a.loop), 1);
    await b.loop.runOnce();
    expect(b.loop.isLeader).toBe(true);
    expect(b.ticks.length).toBe(1);
  });

  it('follows once its lock is gone, and leads again when it can take it', async () => {
    const a = loop();
    const b = loop();
    await a.loop.runOnce();
    await b.loop.runOnce();
    const leader = a.loop.isLeader ? a : b;
    const other = leader === a ? b : a;
    // The leader's lock expires (its process paused too long) and the other takes it.
    await ctx.redis.del(createKeys(ctx.prefix).leader);
    await other.loop.runOnce();
    const ticksBefore = leader.ticks.length;
    await leader.loop.runOnce();
    expect(other.loop.isLeader).toBe(true);
    expect(leader.loop.isLeader).toBe(false);
    expect(leader.ticks.length).toBe(ticksBefore);
    expect(leader.log.lines().some((l) => l.msg === 'scheduler follows')).toBe(true);
  });

  it('logs a failing tick and keeps going', async () => {
    const a = loop({ fail: true });
    await a.loop.runOnce();
    await a.loop.runOnce();
    expect(a.ticks.length).toBe(3);
    const failures = a.log.lines().filter((l) => l.msg === 'scheduler round failed');
    expect(failures).toHaveLength(3);
    expect(failures[0]?.err).toBe('listing failed');
    expect(a.loop.isLeader).toBe(true);
  });

  it('a kick (a slot was freed) runs a round soon instead of at the next interval', async () => {
    const a = loop();
    await a.loop.runOnce();
    const before = a.ticks.length;
    const kickedAt = Date.now();
    a.loop.kick();
    expect(await until(() => a.ticks.length > before)).toBe(true);
    expect(Date.now() - kickedAt).toBeGreaterThanOrEqual(KICK_DELAY_MS - 2);
    expect(a.ticks.length).toBe(before + 1);
  });

  it('a kick in a process that follows does nothing', async () => {
    const a = loop();
    const b = loop();
    await a.loop.runOnce();
    await b.loop.runOnce();
    const follower = a.loop.isLeader ? b : a;
    follower.loop.kick();
    await pause(KICK_DELAY_MS * 3);
    expect(follower.ticks).toHaveLength(0);
  });

  // Regression test (fixed) (src/rollout/tick/scheduler-loop.ts, kick(): `schedule(KICK_DELAY_MS)` clears the pending timer
  // and starts a new one): kicks that keep coming less than KICK_DELAY_MS apart (slots freed at a
  // steady pace: a large or time-scaled rollout) push the round back every time, and the interval
  // round too, so the leader does not run at all while the stream lasts. Suggested: keep a timer
  // that is already due within KICK_DELAY_MS (a debounce with a maximum wait), and never move the
  // next round later than it was.
  it('kicks every few ms do not starve the scheduler of rounds', async () => {
    const a = loop();
    await a.loop.runOnce();
    const before = a.ticks.length;
    for (let i = 0; i < 50; i++) {
      a.loop.kick();
      await pause(2);
    }
    expect(a.ticks.length).toBeGreaterThan(before);
  });
});
