/**
 * Issue #3's "done when": three client processes share one Redis budget against a simulator
 * limited to 4 requests per simulated second and 10 concurrent requests, at time scale 10
 * (40 requests per real second). The simulator must count no 429 after the first simulated
 * second, and together the processes must reach at least 80% of the limit.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestRedis } from '../../support/redis.js';
import { OPS, startTestSimulator, stopTestSimulators, testFleet } from '../../support/simulator.js';

const ctx = useTestRedis();
const children: ChildProcess[] = [];
const worker = fileURLToPath(new URL('../../support/budget-worker.ts', import.meta.url));

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  await stopTestSimulators();
});

const TIME_SCALE = 10;
const PER_SECOND = 4;
const DURATION_MS = 3000; // 30 simulated seconds

interface WorkerReport {
  sentInWindow: number;
  attempts: number;
  errors: number;
  rateLimitedAtMs: number[];
  budgetWaitMsAvg: number;
}

function startWorker(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', worker], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-4000);
  });
  // Lines are buffered: a worker may speak while the test is still waiting on another one.
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (l) => {
    lines.push(l);
    wake?.();
  });
  child.on('exit', () => wake?.());
  /** The next line the worker prints, waiting at most `limitMs`. */
  const next = async (limitMs = 20_000): Promise<string> => {
    const deadline = Date.now() + limitMs;
    while (lines.length === 0) {
      if (child.exitCode !== null) throw new Error(`budget worker exited (${child.exitCode}): ${stderr}`);
      if (Date.now() >= deadline)
        throw new Error(`budget worker said nothing within ${limitMs} ms: ${stderr}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, Math.max(1, deadline - Date.now()));
      });
    }
    return lines.shift() as string;
  };
  return { child, next, stderr: () => stderr };
}

describe('request budget shared by three processes', () => {
  it('keeps the simulator free of 429s after the first second at ≥80% of its limit', {
    timeout: 60_000,
  }, async () => {
    const t = await startTestSimulator(
      testFleet({
        generate: { count: 50, seed: 2 },
        faults: {
          rateLimit: { perSecond: PER_SECOND, concurrent: 10 },
          latencyMs: { min: 200, max: 3000 },
        },
      }),
      { timeScale: TIME_SCALE },
    );
    const env = {
      BASE_URL: t.sim.baseUrl,
      REDIS_URL: ctx.url,
      KEY_PREFIX: ctx.prefix,
      ACCESS_ID: OPS.accessId,
      ACCESS_KEY: OPS.accessKey,
      TIME_SCALE: String(TIME_SCALE),
      PER_SECOND: String(PER_SECOND),
      CONCURRENT: '10',
      LOOPS: '6',
    };
    const workers = [startWorker(env), startWorker(env), startWorker(env)];
    for (const w of workers) expect(await w.next()).toBe('ready');

    const before = await t.stats();
    const start = Date.now() + 100;
    for (const w of workers) w.child.stdin?.write(`go ${start} ${DURATION_MS}\n`);
    const reports = (await Promise.all(workers.map((w) => w.next()))).map(
      (l) => JSON.parse(l) as WorkerReport,
    );
    const after = await t.stats();

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
      rateLimitedBy: after.rateLimitedBy,
      maxConcurrentTasks: after.maxConcurrentTasks,
      lateRateLimited: lateLimited.length,
      perProcess: reports.map((r) => r.sentInWindow),
      errors: reports.map((r) => r.errors),
      budgetWaitMsAvg: reports.map((r) => Math.round(r.budgetWaitMsAvg)),
    };
    console.log(`shared budget: ${JSON.stringify(summary)}`);

    expect(lateLimited).toEqual([]);
    expect(rate).toBeGreaterThanOrEqual(0.8 * PER_SECOND);
    expect(reports.every((r) => r.sentInWindow > 0)).toBe(true);
    expect(reports.every((r) => r.errors === 0)).toBe(true);
    expect(after.requests.total - before.requests.total).toBeGreaterThanOrEqual(sent);
  });
});
