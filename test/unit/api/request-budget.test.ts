import { describe, expect, it } from 'vitest';
import { createMemoryRequestBudget } from '../../../src/api/memory-request-budget.js';
import {
  afterRateLimited,
  agedPriority,
  type BudgetLease,
  budgetWindowMs,
  currentFactor,
  FULL_RATE,
  REQUEST_PRIORITY,
  rateWait,
  resolveBudgetLimits,
  slotsPerWindow,
} from '../../../src/api/request-budget.js';
import { createManualClock, type ManualClock } from '../../../src/lib/clock.js';

const limits = resolveBudgetLimits({ perSecond: 4, concurrent: 10, marginRatio: 0.05, marginMs: 5 });
const W = budgetWindowMs(limits); // 1055

/** Moves a manual clock forward in small steps, letting waiting promises run, until `done()`. */
async function runUntil(
  clock: ManualClock,
  done: () => boolean,
  stepMs = 5,
  maxSteps = 20_000,
): Promise<void> {
  for (let i = 0; i < maxSteps && !done(); i++) {
    await new Promise((r) => setImmediate(r));
    clock.advance(stepMs);
  }
  await new Promise((r) => setImmediate(r));
}

describe('budget window', () => {
  it('pads the one-second window, in real ms at the time scale', () => {
    expect(W).toBeCloseTo(1055);
    expect(budgetWindowMs({ ...limits, timeScale: 10 })).toBeCloseTo(110);
  });

  it('rounds a fractional rate up to whole slots and stretches the window to match (never below a second)', () => {
    const half = resolveBudgetLimits({ perSecond: 0.5, marginRatio: 0, marginMs: 0 });
    expect(slotsPerWindow(half)).toBe(1);
    expect(budgetWindowMs(half)).toBe(2000);
    const twoAndHalf = resolveBudgetLimits({ perSecond: 2.5, marginRatio: 0, marginMs: 0 });
    expect(slotsPerWindow(twoAndHalf)).toBe(3);
    expect(budgetWindowMs(twoAndHalf)).toBe(1200);
  });

  it('never lets one second of the service hold more than it allows, whatever the rate', () => {
    // Requests sent as early as the log allows, 300 of them; then the busiest second counted.
    const busiest = (perSecond: number) => {
      const l = resolveBudgetLimits({ perSecond, marginRatio: 0, marginMs: 0 });
      const log: number[] = [];
      let now = 0;
      for (let i = 0; i < 300; i++) {
        now += rateWait(log, now, FULL_RATE, l);
        log.push(now);
      }
      let most = 0;
      for (let i = 0, j = 0; i < log.length; i++) {
        while ((log[i] as number) - (log[j] as number) >= 1000) j++;
        most = Math.max(most, i - j + 1);
      }
      return {
        most,
        rate: (1000 * (log.length - 1)) / ((log[log.length - 1] as number) - (log[0] as number)),
      };
    };
    // 4/s × the default share: four per 1.25 s (three per 937 ms put six in a second).
    expect(slotsPerWindow(resolveBudgetLimits({ perSecond: 3.2 }))).toBe(4);
    expect(busiest(3.2).most).toBeLessThanOrEqual(4);
    for (const perSecond of [0.3, 1, 1.5, 2.5, 2.9, 3.2, 3.5, 3.99, 4]) {
      const b = busiest(perSecond);
      expect(b.most, `${perSecond}/s`).toBeLessThanOrEqual(4);
      // ... and the rate is what was asked (the first burst aside), not less.
      expect(b.rate, `${perSecond}/s`).toBeGreaterThan(perSecond * 0.97);
      expect(b.rate, `${perSecond}/s`).toBeLessThanOrEqual(perSecond * 1.02);
    }
  });

  it('refuses nonsense limits', () => {
    expect(() => resolveBudgetLimits({ timeScale: 0 })).toThrow(/timeScale/);
    expect(() => resolveBudgetLimits({ perSecond: -1 })).toThrow(/perSecond/);
    expect(() => resolveBudgetLimits({ decrease: 1 })).toThrow(/decrease/);
    expect(() => resolveBudgetLimits({ concurrent: 1.5 })).toThrow(/concurrent/);
  });
});

describe('rateWait (sliding log)', () => {
  it('admits N at once, then waits until the oldest of the last N is a window old', () => {
    expect(rateWait([], 0, FULL_RATE, limits)).toBe(0);
    expect(rateWait([0, 0, 0], 0, FULL_RATE, limits)).toBe(0);
    expect(rateWait([0, 0, 0, 0], 0, FULL_RATE, limits)).toBe(Math.ceil(W));
    expect(rateWait([0, 100, 200, 300], 500, FULL_RATE, limits)).toBe(Math.ceil(W - 500));
    expect(rateWait([0, 100, 200, 300], 1100, FULL_RATE, limits)).toBe(0);
  });

  it('stretches the window while the AIMD factor is below 1', () => {
    const halved = afterRateLimited(FULL_RATE, 0, limits, 0);
    expect(halved.factor).toBe(0.5);
    expect(rateWait([0, 0, 0, 0], 0, halved, limits)).toBe(Math.ceil(2 * W));
  });

  it('waits out a Retry-After pause', () => {
    const paused = afterRateLimited(FULL_RATE, 0, limits, 3000);
    expect(rateWait([], 0, paused, limits)).toBe(3000);
  });
});

describe('AIMD', () => {
  it('halves on a 429, once per burst, and not below minFactor', () => {
    const slow = { ...limits, recoveryPerWindow: 1e-12 };
    let s = afterRateLimited(FULL_RATE, 0, slow, 0);
    expect(s.factor).toBe(0.5);
    s = afterRateLimited(s, 10, slow, 0); // the other 429s of the same burst
    expect(s.factor).toBe(0.5);
    const seen: number[] = [];
    let t = 0;
    for (let i = 0; i < 5; i++) {
      t += budgetWindowMs(slow) / s.factor + 1;
      s = afterRateLimited(s, t, slow, 0);
      seen.push(Number(s.factor.toFixed(6)));
    }
    expect(seen).toEqual([0.25, 0.125, 0.1, 0.1, 0.1]);
  });

  it('recovers linearly, recoveryPerWindow per window', () => {
    const s = afterRateLimited(FULL_RATE, 0, limits, 0);
    expect(currentFactor(s, 0, limits)).toBe(0.5);
    expect(currentFactor(s, 2 * W, limits)).toBeCloseTo(0.6);
    expect(currentFactor(s, 10 * W, limits)).toBe(1);
  });
});

describe('memory request budget', () => {
  it('never lets more than N requests into any window, and runs close to the limit', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({ ...limits, clock });
    const times: number[] = [];
    const total = 40;
    const all = Array.from({ length: total }, () =>
      budget.acquire().then(async (lease) => {
        times.push(clock.now());
        await lease.release();
      }),
    );
    await runUntil(clock, () => times.length === total);
    await Promise.all(all);
    expect(times).toHaveLength(total);
    for (let i = 0; i + 4 < times.length; i++)
      expect((times[i + 4] as number) - (times[i] as number)).toBeGreaterThanOrEqual(W);
    const rate = ((total - 4) / ((times.at(-1) as number) - (times[0] as number))) * 1000;
    expect(rate).toBeGreaterThan(0.9 * 4);
  });

  it('counts a slot from when its request was written out, not from when it was granted', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({
      perSecond: 1,
      concurrent: 0,
      marginRatio: 0,
      marginMs: 0,
      clock,
    });
    const first = await budget.acquire();
    clock.advance(300); // a slow connection set-up
    first.sent();
    await first.release();
    let at = -1;
    const p = budget.acquire().then((l) => {
      at = clock.now();
      return l.release();
    });
    await runUntil(clock, () => at >= 0, 10);
    await p;
    expect(at).toBe(1300);
  });

  it('holds concurrent requests to the lease limit, first come first served', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 2, clock });
    const a = await budget.acquire();
    const b = await budget.acquire();
    const order: string[] = [];
    const c = budget.acquire().then((l) => {
      order.push('c');
      return l;
    });
    const d = budget.acquire().then((l) => {
      order.push('d');
      return l;
    });
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual([]);
    await a.release();
    const lc: BudgetLease = await c;
    expect(order).toEqual(['c']);
    await b.release();
    await d;
    expect(order).toEqual(['c', 'd']);
    await lc.release();
  });

  it('gives the next lease to the most urgent waiter: a create before listing pages and status reads queued earlier', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 1, clock });
    const held = await budget.acquire(undefined, REQUEST_PRIORITY.list);
    const order: string[] = [];
    const wait = (name: string, priority: number) =>
      budget.acquire(undefined, priority).then(async (l) => {
        order.push(name);
        await l.release();
      });
    // The head of the line waits for the lease; behind it, two pages and then a create.
    const head = wait('page 1', REQUEST_PRIORITY.list);
    await new Promise((r) => setImmediate(r));
    const rest = [
      wait('page 2', REQUEST_PRIORITY.list),
      wait('page 3', REQUEST_PRIORITY.list),
      wait('status', REQUEST_PRIORITY.status),
      wait('create', REQUEST_PRIORITY.create),
    ];
    await held.release();
    await Promise.all([head, ...rest]);
    // The head keeps its turn; then the create, and the rest first come, first served.
    expect(order).toEqual(['page 1', 'create', 'page 2', 'page 3', 'status']);
  });

  it('lets a listing page that has waited two windows go before the creates', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({
      perSecond: 4,
      concurrent: 1,
      marginRatio: 0,
      marginMs: 0,
      clock,
    });
    const window = budgetWindowMs(resolveBudgetLimits({ perSecond: 4, marginRatio: 0, marginMs: 0 })); // 1000
    const got: string[] = [];
    // Each lease is given back at once but the head's.
    const take = (name: string, priority: number) =>
      budget.acquire(undefined, priority).then(async (l) => {
        got.push(name);
        if (name !== 'head') await l.release();
        return l;
      });
    const settle = () => new Promise((r) => setImmediate(r));
    // The lease is held; the head of the line waits for it, a page behind the head, and a window
    // later a create.
    let lease = await budget.acquire(undefined, REQUEST_PRIORITY.create);
    const head = take('head', REQUEST_PRIORITY.status);
    await settle();
    const page = take('page', REQUEST_PRIORITY.list);
    clock.advance(window);
    const createA = take('create A', REQUEST_PRIORITY.create);
    await settle();
    // The head gets the lease; the page has waited one window: the create is next.
    await lease.release();
    lease = await head;
    // Two windows: the page is next, before the create that came after it.
    clock.advance(window);
    const createB = take('create B', REQUEST_PRIORITY.create);
    await settle();
    await lease.release();
    await Promise.all([createA, page, createB]);
    expect(got).toEqual(['head', 'create A', 'page', 'create B']);
  });

  it("ages only the rollouts' reads: creates, health-event and inventory reads keep their place", () => {
    expect(agedPriority(REQUEST_PRIORITY.list, 2000, 1000)).toBe(REQUEST_PRIORITY.aged);
    expect(agedPriority(REQUEST_PRIORITY.status, 1999, 1000)).toBe(REQUEST_PRIORITY.status);
    expect(agedPriority(REQUEST_PRIORITY.create, 60_000, 1000)).toBe(REQUEST_PRIORITY.create);
    expect(agedPriority(REQUEST_PRIORITY.health, 60_000, 1000)).toBe(REQUEST_PRIORITY.health);
    expect(agedPriority(REQUEST_PRIORITY.inventory, 60_000, 1000)).toBe(REQUEST_PRIORITY.inventory);
    expect(agedPriority(REQUEST_PRIORITY.list, 60_000, Number.POSITIVE_INFINITY)).toBe(REQUEST_PRIORITY.list);
  });

  it('slows down after a 429 and honours Retry-After in the service time scale', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({ ...limits, timeScale: 10, clock });
    await (await budget.acquire()).release();
    await budget.rateLimited(2000); // 2 s of service time = 200 ms real at scale 10
    expect(await budget.factor()).toBe(0.5);
    let got = -1;
    const p = budget.acquire().then((l) => {
      got = clock.now();
      return l.release();
    });
    await runUntil(clock, () => got >= 0, 1);
    await p;
    expect(got).toBe(200);
  });

  it('fails an acquire that waits longer than maxWaitMs', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 1, maxWaitMs: 100, clock });
    const held = await budget.acquire();
    let error: unknown;
    const p = budget.acquire().catch((e: unknown) => {
      error = e;
    });
    await runUntil(clock, () => error !== undefined, 10, 50);
    await p;
    expect(error).toMatchObject({ code: 'FLEET_ERR_API_BUDGET' });
    await held.release();
  });

  it('gives up waiting when the caller aborts', async () => {
    const clock = createManualClock(0);
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 1, clock });
    const held = await budget.acquire();
    const ac = new AbortController();
    const p = budget.acquire(ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    await held.release();
  });
});
