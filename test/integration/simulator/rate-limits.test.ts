/**
 * Rate limits (api-facts: 4 requests per second per user across all APIs, at most 10 concurrent
 * requests per access key, 429 in the newer error shape), in simulated time: a manual clock
 * decides when a second has passed, and simulated latency keeps requests in flight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  C,
  expectRateLimited,
  INTERN,
  OPS,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  testFleet,
  tick,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const targets = (t: TestSimulator, auth = OPS) => t.api('GET', 'collectors/upgrades/targets', { auth });

interface Tracked {
  promise: Promise<ApiResponse>;
  result?: ApiResponse;
}

function track(promise: Promise<ApiResponse>): Tracked {
  const tracked: Tracked = { promise };
  promise.then(
    (r) => {
      tracked.result = r;
    },
    () => undefined,
  );
  return tracked;
}

/**
 * Moves the manual clock on by `stepMs` at a time (letting I/O run in between, bounded) until every
 * tracked request has its answer, and returns the answers in order.
 */
async function settle(t: TestSimulator, calls: Tracked[], stepMs = 1000): Promise<ApiResponse[]> {
  for (let i = 0; i < 100 && calls.some((c) => !c.result); i++) {
    await tick(5);
    t.clock.advance(stepMs);
  }
  return Promise.all(calls.map((c) => c.promise));
}

/** Waits (a few real ms at a time, bounded) until `done()` holds. */
async function until(done: () => boolean, maxTicks = 200): Promise<void> {
  for (let i = 0; i < maxTicks && !done(); i++) await tick(5);
}

describe('requests per simulated second per user (faults.rateLimit.perSecond)', () => {
  it('perSecond 4: the 5th request inside one simulated second → 429 in the newer shape, rate.limit.exceeded', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } }));
    for (let i = 0; i < 4; i++) expect((await targets(t)).status).toBe(200);
    const res = await targets(t);
    expectRateLimited(res);
    const stats = await t.stats();
    expect(stats.rateLimited).toBe(1);
    expect(stats.requests.byStatus['429']).toBe(1);
  });

  it('after clock.advance(1000) the user is accepted again', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } }));
    for (let i = 0; i < 4; i++) expect((await targets(t)).status).toBe(200);
    expectRateLimited(await targets(t));
    t.clock.advance(1000);
    expect((await targets(t)).status).toBe(200);
  });

  it('the limit is in simulated time: without the clock moving, the user stays limited however long it takes', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } }));
    for (let i = 0; i < 4; i++) await targets(t);
    await tick(20);
    expectRateLimited(await targets(t));
    expectRateLimited(await targets(t));
  });

  it('over many simulated seconds the user gets 4 per second, no more', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } }));
    let accepted = 0;
    for (let second = 0; second < 10; second++) {
      for (let i = 0; i < 7; i++) if ((await targets(t)).status === 200) accepted++;
      t.clock.advance(1000);
    }
    expect(accepted).toBe(40);
  });

  it('the limit counts every endpoint of the user together (list, targets, create, status)', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } }));
    expect((await t.api('GET', 'collectors/upgrades/collectors')).status).toBe(200);
    expect((await targets(t)).status).toBe(200);
    const created = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
    expect(created.status).toBe(202);
    const { id } = created.json as { id: string };
    expect((await t.api('GET', `collectors/upgrades/${id}`)).status).toBe(200);
    expectRateLimited(await t.api('GET', `collectors/upgrades/${id}`));
    expectRateLimited(await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web2 } }));
    expect((await t.simCollector(C.web2)).tasks).toEqual([]);
  });

  it("the limit is per user: another user is not limited by the first one's requests", async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } }));
    for (let i = 0; i < 4; i++) await targets(t, OPS);
    expectRateLimited(await targets(t, OPS));
    for (let i = 0; i < 4; i++) expect((await targets(t, INTERN)).status).toBe(200);
    expectRateLimited(await targets(t, INTERN));
  });

  it('users[].rateLimit overrides the fleet limit for that user', async () => {
    const fleet = testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 0 } } });
    fleet.users = [
      { accessId: OPS.accessId, accessKey: OPS.accessKey },
      { accessId: INTERN.accessId, accessKey: INTERN.accessKey, rateLimit: { perSecond: 2 } },
    ];
    const t = await startTestSimulator(fleet);
    for (let i = 0; i < 2; i++) expect((await targets(t, INTERN)).status).toBe(200);
    expectRateLimited(await targets(t, INTERN));
    for (let i = 0; i < 4; i++) expect((await targets(t, OPS)).status).toBe(200);
  });

  it('perSecond 0 turns the limit off', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 0, concurrent: 0 } } }));
    for (let i = 0; i < 50; i++) expect((await targets(t)).status).toBe(200);
    expect((await t.stats()).rateLimited).toBe(0);
  });

  it('the default fleet limit is 4 per second', async () => {
    const fleet = testFleet();
    fleet.faults = { ...fleet.faults };
    delete fleet.faults.rateLimit;
    const t = await startTestSimulator(fleet);
    for (let i = 0; i < 4; i++) expect((await targets(t)).status).toBe(200);
    expectRateLimited(await targets(t));
  });
});

describe('concurrent requests per access key (faults.rateLimit.concurrent)', () => {
  it('with simulated latency keeping 2 requests in flight, a 3rd one → 429 at once; in-flight ones finish 200', async () => {
    const fleet = testFleet({ faults: { rateLimit: { perSecond: 0, concurrent: 2 }, latencyMs: 1000 } });
    const t = await startTestSimulator(fleet);
    const calls = [track(targets(t)), track(targets(t)), track(targets(t))];
    await until(() => calls.some((c) => c.result));
    await tick(20); // let any other answer that would come arrive
    const early = calls.filter((c) => c.result);
    expect(early).toHaveLength(1);
    expectRateLimited(early[0]?.result as ApiResponse);
    // The other two wait for simulated time to pass.
    const rest = await settle(
      t,
      calls.filter((c) => c !== early[0]),
    );
    expect(rest.map((r) => r.status)).toEqual([200, 200]);
    // Once they are done, the key may send again.
    const [again] = await settle(t, [track(targets(t))]);
    expect(again?.status).toBe(200);
  });

  it("the concurrency limit is per access key: another user's request is not refused", async () => {
    const fleet = testFleet({ faults: { rateLimit: { perSecond: 0, concurrent: 2 }, latencyMs: 1000 } });
    const t = await startTestSimulator(fleet);
    const ops = [track(targets(t, OPS)), track(targets(t, OPS))];
    await tick(20);
    const intern = track(targets(t, INTERN));
    await tick(20);
    expect(intern.result).toBeUndefined();
    expect(ops.every((c) => c.result === undefined)).toBe(true);
    const results = await settle(t, [intern, ...ops]);
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
  });

  it('with a scaled clock (timeScale) and latency, 14 parallel requests over a limit of 10 → some 429, at most 10 accepted', async () => {
    const fleet = testFleet({ faults: { rateLimit: { perSecond: 0, concurrent: 10 }, latencyMs: 60_000 } });
    // 60 simulated seconds of latency at 200× are 300 real ms: all 14 arrive while the first are in flight.
    const t = await startTestSimulator(fleet, { timeScale: 200 });
    const results = await Promise.all(Array.from({ length: 14 }, () => targets(t)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(10);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
    for (const r of results.filter((x) => x.status === 429)) expectRateLimited(r);
  });

  it('concurrent 0 turns the limit off', async () => {
    const fleet = testFleet({ faults: { rateLimit: { perSecond: 0, concurrent: 0 }, latencyMs: 1000 } });
    const t = await startTestSimulator(fleet);
    const calls = Array.from({ length: 15 }, () => track(targets(t)));
    await tick(30);
    expect(calls.filter((c) => c.result)).toHaveLength(0);
    const results = await settle(t, calls);
    expect(results.map((r) => r.status)).toEqual(Array(15).fill(200));
  });
});
