/**
 * Redis goes away in the middle of a rollout (SIGKILL) and comes back from its append-only
 * file: the orchestrator reconnects, and every Collector still reaches an outcome with no second
 * task. Redis is a private redis-server of this test, so the others keep theirs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pingRedis } from '../../../src/lib/redis/create-redis.js';
import { stopChild } from '../../../src/lib/stop-child.js';
import { rehearsalFleet } from '../../support/rehearsal-fleet.js';
import { converged, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;
let redis: ChildProcess | undefined;
let dir: string | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (redis) await stopChild(redis);
  redis = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

async function startRedis(port: number, data: string): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      data,
      '--appendonly',
      'yes',
      '--appendfsync',
      'always',
      '--save',
      '',
    ],
    { stdio: 'ignore' },
  );
  for (let i = 0; i < 100; i++) {
    if ((await pingRedis(`redis://127.0.0.1:${port}`, 200)) === undefined) return child;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('redis-server did not start');
}

describe('Redis restarted mid-rollout', () => {
  it('loses nothing: every Collector reaches an outcome, none gets a second task', async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-redis-restart-'));
    const port = await freePort();
    redis = await startRedis(port, dir);
    harness = await startHarness({
      redisUrl: `redis://127.0.0.1:${port}`,
      timeScale: 300,
      fleet: rehearsalFleet(120, 9),
      policy: { name: 'restart', maxInFlight: 30, poll: { initial: '30s', max: '2m' } },
    });
    await harness.startRun();
    const h = harness;
    await h.waitFor((s) => (s.rollouts[0]?.done ?? 0) >= 30, 60_000);
    redis.kill('SIGKILL');
    await new Promise((r) => redis?.once('exit', r));
    await new Promise((r) => setTimeout(r, 1000));
    redis = await startRedis(port, dir);
    const status = await h.waitFor(converged, 90_000);
    expect(status.rollouts[0]?.total).toBe(120);
    const records = await h.records();
    expect(records.filter((r) => r.state !== 'succeeded' && r.state !== 'failed')).toEqual([]);
    const sim = new Map((await h.simCollectors()).map((c) => [c.id, c]));
    expect([...sim.values()].filter((c) => c.tasks.length > 1).map((c) => c.id)).toEqual([]);
    for (const r of records) {
      const last = sim.get(r.id)?.tasks.at(-1);
      expect(last?.result === 'succeeded' ? 'succeeded' : 'failed', `collector ${r.id}`).toBe(r.state);
    }
    expect((await h.simStats()).maxConcurrentTasks).toBeLessThanOrEqual(30);
  }, 150_000);
});
