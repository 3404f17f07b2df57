/**
 * The Redis request budget with several instances on separate connections (as separate
 * processes would have): the sliding-window guarantee, the concurrency leases and their expiry,
 * and AIMD shared through Redis. Real time at a high time scale: each test runs well under 1 s.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createRedisRequestBudget,
  type RedisRequestBudgetOptions,
} from '../../../src/api/redis-request-budget.js';
import {
  budgetWindowMs,
  REQUEST_PRIORITY,
  type RequestBudget,
  resolveBudgetLimits,
} from '../../../src/api/request-budget.js';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const connections: Redis[] = [];

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

/** `n` budgets for one access ID, each on its own Redis connection. */
function budgets(n: number, limits: Omit<RedisRequestBudgetOptions, 'redis' | 'accessId'>) {
  return Array.from({ length: n }, () => {
    const redis = createRedis(ctx.url, { name: 'budget-test' });
    connections.push(redis);
    return createRedisRequestBudget({ redis, accessId: 'ops', keyPrefix: ctx.prefix, ...limits });
  });
}

/** Acquires in `b` as `name`, sends, releases: `order` is the order of the grants. */
function grantOrder() {
  const order: string[] = [];
  const take = async (b: RequestBudget, name: string, priority: number) => {
    const lease = await b.acquire(undefined, priority);
    order.push(name);
    lease.sent();
    await lease.release();
  };
  return { order, take };
}

describe('redis request budget', () => {
  it('lets no more than N requests from all instances into any padded window', async () => {
    const limits = { perSecond: 4, concurrent: 0, timeScale: 5 };
    const window = budgetWindowMs(resolveBudgetLimits(limits)); // 215 ms real
    const all = budgets(3, limits);
    const grants: number[] = [];
    await Promise.all(
      all.flatMap((b) =>
        Array.from({ length: 8 }, async () => {
          const lease = await b.acquire();
          grants.push(Date.now());
          await lease.release();
        }),
      ),
    );
    grants.sort((a, b) => a - b);
    expect(grants).toHaveLength(24);
    // Slots are decided on the Redis clock; these local stamps follow by a reply's latency, which a
    // busy machine stretches by tens of ms, so the exact bound is proven by the unit tests of the
    // same algorithm on a manual clock. Here: three instances share one log (unshared, or with a
    // fixed window, five grants would land ~0 ms apart), and together they run near the limit.
    for (let i = 0; i + 4 < grants.length; i++)
      expect((grants[i + 4] as number) - (grants[i] as number)).toBeGreaterThanOrEqual(0.75 * window);
    const seconds = ((grants.at(-1) as number) - (grants[0] as number)) / 1000;
    expect((grants.length - 4) / seconds).toBeGreaterThan(0.7 * 4 * 5);
  });

  it("lets another process's creates go before the listing pages of this one", async () => {
    const limits = { perSecond: 4, concurrent: 0, timeScale: 5 };
    const window = budgetWindowMs(resolveBudgetLimits(limits)); // 215 ms real: 4 slots each
    const [worker, ...schedulers] = budgets(4, limits) as RequestBudget[];
    const { order, take } = grantOrder();
    // Listing passes of 15 pages in each of three processes, a page after the other, wait for the
    // window's slots...
    const pages = schedulers.map(async (scheduler, s) => {
      for (let i = 0; i < 15; i++) await take(scheduler, `page ${s}.${i + 1}`, REQUEST_PRIORITY.list);
    });
    // ... and creates come, one by one, in another process: each takes the next slot that frees
    // (at most a page of each process, whose slot was being taken, goes between). (A page that
    // waits two windows would go first: agedPriority, the next test.)
    const passed: number[] = [];
    for (let i = 0; i < 6; i++) {
      await new Promise((r) => setTimeout(r, window / 2));
      const before = order.length;
      await take(worker as RequestBudget, `create ${i + 1}`, REQUEST_PRIORITY.create);
      passed.push(order.length - 1 - before);
    }
    await Promise.all(pages);
    expect(passed.every((n) => n <= 3)).toBe(true);
  });

  it("lets a listing page that has waited two windows go before other processes' creates", async () => {
    const limits = { perSecond: 4, concurrent: 0, timeScale: 5 };
    const window = budgetWindowMs(resolveBudgetLimits(limits)); // 215 ms real: 4 slots each
    const [scheduler, ...workers] = budgets(5, limits) as RequestBudget[];
    const { order, take } = grantOrder();
    // Ten creates queue in each of four workers (ten windows of slots, a create of each worker
    // always waiting); a page of a listing pass comes in the scheduler just after them.
    const creates = workers.flatMap((w, k) =>
      Array.from({ length: 10 }, (_, i) => take(w, `create ${k}.${i + 1}`, REQUEST_PRIORITY.create)),
    );
    await new Promise((r) => setTimeout(r, window / 10));
    await Promise.all([...creates, take(scheduler as RequestBudget, 'page', REQUEST_PRIORITY.list)]);
    // The creates go first for two windows (eight to twelve slots), then the page: not after all
    // forty (where it went before pages aged).
    const at = order.indexOf('page');
    expect(at).toBeGreaterThanOrEqual(6);
    expect(at).toBeLessThanOrEqual(20);
  });

  it('holds concurrent leases across instances to the limit', async () => {
    const all = budgets(3, { perSecond: 0, concurrent: 3 });
    let inFlight = 0;
    let most = 0;
    await Promise.all(
      all.flatMap((b) =>
        Array.from({ length: 6 }, async () => {
          const lease = await b.acquire();
          inFlight++;
          most = Math.max(most, inFlight);
          await new Promise((r) => setTimeout(r, 5));
          inFlight--;
          await lease.release();
        }),
      ),
    );
    expect(most).toBe(3);
  });

  it('reclaims the lease of a holder that died after leaseMs', async () => {
    const [dead, alive] = budgets(2, { perSecond: 0, concurrent: 1, leaseMs: 150 }) as [
      RequestBudget,
      RequestBudget,
    ];
    await dead.acquire(); // never released
    const t0 = Date.now();
    const lease = await alive.acquire();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(100);
    expect(lease.waitedMs).toBeLessThan(2000);
    await lease.release();
  });

  it('shares the AIMD factor and a Retry-After pause between instances', async () => {
    // Recovery all but off, so that the factor read below is the decreased one, however slow the machine.
    const limits = { perSecond: 4, concurrent: 0, timeScale: 20, recoveryPerWindow: 1e-6 };
    const [a, b] = budgets(2, limits) as [RequestBudget, RequestBudget];
    expect(await b.factor()).toBe(1);
    await a.rateLimited(4000); // 4 s of service time = 200 ms real
    await a.rateLimited(); // the same burst: no second decrease
    expect(await b.factor()).toBeCloseTo(0.5, 3);
    const t0 = Date.now();
    await (await b.acquire()).release();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(190);
  });

  it('keeps its keys under one cluster hash tag, with the test prefix', async () => {
    const [b] = budgets(1, { perSecond: 4, concurrent: 2 }) as [RequestBudget];
    await (await b.acquire()).release();
    await b.rateLimited();
    const keys = await ctx.redis.keys(`${ctx.prefix}*`);
    expect(keys.length).toBeGreaterThanOrEqual(2);
    for (const k of keys)
      expect(k).toMatch(new RegExp(`^${ctx.prefix}api-budget:\\{[0-9a-f]{16}\\}:(rate|aimd|leases)$`));
  });
});
