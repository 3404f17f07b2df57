/**
 * Issue 25, part 1: a process rides a Redis outage out, and gives up only past
 * `redis.giveUpAfter`. A `worker` of the built CLI on a private redis-server: the server is
 * stopped; 5 s later the worker still runs (and says once that Redis does not answer); with
 * `FLEET_UPGRADE_REDIS_GIVE_UP_AFTER=10s` it then exits 1 by itself, with one line that names
 * the setting. (Riding out shorter outages with everything still running: sentinel-faults.test.ts.)
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/logger.js';
import { findExecutable, startLocalRedis } from '../../../src/lib/redis/redis-server.js';
import { startSimulator } from '../../../src/simulator/start-simulator.js';
import { spawnCliChild } from '../../support/cli-child.js';
import { exitOf } from '../../support/rollout-harness.js';

const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

async function setUp() {
  const binary = findExecutable('redis-server');
  if (!binary) throw new Error('redis-server is not on PATH');
  const logger = createLogger({ level: 'silent', name: 'test' });
  const redis = await startLocalRedis(binary, { logger, appendOnly: true });
  cleanups.push(() => redis.stop());
  const sim = await startSimulator({
    fleet: { builds: ['19.400-5', '19.470-4'], generate: { count: 5, seed: 1 } },
    timeScale: 60,
  });
  cleanups.push(() => sim.close());
  const children: Parameters<typeof spawnCliChild>[2] = [];
  cleanups.push(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
  const worker = spawnCliChild(
    ['worker', '--listen', '127.0.0.1:0'],
    {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REDIS_URL: redis.url,
      FLEET_UPGRADE_KEY_PREFIX: `giveup-${process.pid}:`,
      FLEET_UPGRADE_REDIS_GIVE_UP_AFTER: '10s',
      SUMOLOGIC_BASE_URL: sim.baseUrl,
      SUMOLOGIC_ACCESSID: 'demo',
      SUMOLOGIC_ACCESSKEY: 'demo-secret',
      LOG_LEVEL: 'info',
    },
    children,
  );
  const deadline = Date.now() + 20_000;
  while (!worker.output().includes('worker started')) {
    if (Date.now() > deadline || worker.exitCode !== null)
      throw new Error(`worker did not start:\n${worker.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { redis, worker };
}

describe('a Redis outage', () => {
  it('longer than redis.giveUpAfter: the worker rides it out, then exits 1 with one line naming the setting', async () => {
    const { redis, worker } = await setUp();
    const stoppedAt = Date.now();
    await redis.stop();
    await new Promise((r) => setTimeout(r, 5000));
    expect(worker.exitCode, worker.output()).toBeNull();
    expect(worker.output()).toContain('redis does not answer; riding it out');
    const code = await exitOf(worker, 25_000);
    const tookMs = Date.now() - stoppedAt;
    expect(code, worker.output()).toBe(1);
    expect(tookMs).toBeGreaterThanOrEqual(10_000);
    const gaveUp = worker
      .output()
      .split('\n')
      .filter((l) => l.includes('redis.giveUpAfter'));
    expect(gaveUp, worker.output()).toHaveLength(1);
    expect(worker.output()).not.toMatch(/unhandled error|Unhandled/);
  }, 60_000);
});
