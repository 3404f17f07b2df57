/**
 * Issue #3's "done when": three client processes share one Redis budget against a simulator
 * limited to 4 requests per simulated second and 10 concurrent requests, at time scale 4
 * (16 requests per real second), with 0.05–0.75 s (real) of added latency per request. The
 * simulator must count no 429 after the first simulated second, and together the processes must
 * reach at least 80% of the limit.
 *
 * The simulator runs in a process of its own, as a service does: inside the vitest worker, the
 * runner's event loop and garbage collector delayed its admissions by up to ~90 ms, which no
 * client can tell from its own requests being early. The budget pads each window to absorb the
 * remaining delay between a request leaving and the service counting it (measured up to ~25 ms
 * real on two busy cores, more when the machine is oversubscribed); at time scale 4 a window is
 * 250 ms real, so a 15% pad (42.5 ms) covers that with room to spare, and the ceiling is still
 * ~85% of the limit.
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startLineChild, stopLineChildren } from '../../support/line-child.js';
import { useTestRedis } from '../../support/redis.js';
import { startSeparateSimulator } from '../../support/separate-simulator.js';
import { OPS, testFleet } from '../../support/simulator.js';

const ctx = useTestRedis();
afterEach(stopLineChildren);

const script = (name: string) => fileURLToPath(new URL(`../../support/${name}`, import.meta.url));
const TIME_SCALE = 4;
const PER_SECOND = 4;
const DURATION_MS = 4000; // 16 simulated seconds
const MARGIN_RATIO = 0.15;

interface WorkerReport {
  sentInWindow: number;
  attempts: number;
  errors: number;
  rateLimitedAtMs: number[];
  budgetWaitMsAvg: number;
}

describe('request budget shared by three processes', () => {
  it('keeps the simulator free of 429s after the first second at ≥80% of its limit', {
    timeout: 60_000,
  }, async () => {
    const fleet = testFleet({
      generate: { count: 50, seed: 2 },
      faults: { rateLimit: { perSecond: PER_SECOND, concurrent: 10 }, latencyMs: { min: 200, max: 3000 } },
    });
    const sim = await startSeparateSimulator(fleet, TIME_SCALE);
    const env = {
      BASE_URL: sim.baseUrl,
      REDIS_URL: ctx.url,
      KEY_PREFIX: ctx.prefix,
      ACCESS_ID: OPS.accessId,
      ACCESS_KEY: OPS.accessKey,
      TIME_SCALE: String(TIME_SCALE),
      PER_SECOND: String(PER_SECOND),
      MARGIN_RATIO: String(MARGIN_RATIO),
      CONCURRENT: '10',
      LOOPS: '6',
    };
    const workers = [0, 1, 2].map(() => startLineChild(script('budget-worker.ts'), env));
    for (const w of workers) expect(await w.next()).toBe('ready');

    const before = await sim.stats();
    const start = Date.now() + 100;
    for (const w of workers) w.send(`go ${start} ${DURATION_MS}`);
    const reports = (await Promise.all(workers.map((w) => w.next()))).map(
      (l) => JSON.parse(l) as WorkerReport,
    );
    const after = await sim.stats();

    const simulatedSeconds = (DURATION_MS * TIME_SCALE) / 1000;
    const sent = reports.reduce((n, r) => n + r.sentInWindow, 0);
    const rate = sent / simulatedSeconds;
    const lateLimited = reports.flatMap((r) => r.rateLimitedAtMs).filter((ms) => ms * TIME_SCALE > 1000);
    const summary = {
      sent,
      simulatorRequests: after.requests.total - before.requests.total,
      ratePerSimulatedSecond: Number(rate.toFixed(2)),
      shareOfLimit: Number((rate / PER_SECOND).toFixed(3)),
      rateLimited: after.rateLimited - before.rateLimited,
      lateRateLimited: lateLimited.length,
      perProcess: reports.map((r) => r.sentInWindow),
      errors: reports.map((r) => r.errors),
      budgetWaitMsAvg: reports.map((r) => Math.round(r.budgetWaitMsAvg)),
    };
    console.log(`shared budget: ${JSON.stringify(summary)}`);

    expect(lateLimited).toEqual([]);
    expect(after.rateLimited - before.rateLimited).toBe(
      reports.reduce((n, r) => n + r.rateLimitedAtMs.length, 0),
    );
    expect(rate).toBeGreaterThanOrEqual(0.8 * PER_SECOND);
    expect(reports.every((r) => r.sentInWindow > 0 && r.errors === 0)).toBe(true);
    expect(after.requests.total - before.requests.total).toBeGreaterThanOrEqual(sent);
  });
});
