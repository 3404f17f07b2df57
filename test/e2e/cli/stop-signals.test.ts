/**
 * How `run` with its private Redis (no REDIS_URL) ends on a signal, through the built CLI (run
 * `npm run build` first) against the simulator over HTTP: Ctrl-C as a terminal sends it (SIGINT
 * to the whole process group) and SIGTERM to the process stop it within seconds, exit 0, with the
 * private redis-server stopped last and the data folder left for the commands; a second Ctrl-C
 * ends it at once (130), as Ctrl-C does while it still waits for the data folder; and a stop
 * whose Redis has gone away is bounded too (exit 1).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findExecutable } from '../../../src/lib/redis/redis-server.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { hasProc, processGroupOf, serversGone, serversOn } from '../../support/redis-processes.js';
import { CLI, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode !== null || c.signalCode !== null || !c.pid) continue;
    try {
      process.kill(-c.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const dir = harness?.env.FLEET_UPGRADE_DATA_DIR;
  // A redis-server a failed test left on the folder: stopped, not left to other tests.
  if (dir) for (const pid of serversOn(join(dir, 'redis'))) process.kill(pid, 'SIGKILL');
  await harness?.close();
  harness = undefined;
});

/** Collectors whose upgrade takes 10 simulated minutes: still under way when the signal comes. */
const fleet = (latencyMs = 0): FleetFileInput => ({
  builds: ['19.400-5', '19.470-4'],
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  collectors: [1, 2, 3, 4].map((id) => ({
    id,
    name: `web-${id}`,
    hostName: `web-${id}.example`,
    osName: 'Linux',
    version: '19.400-5',
    outcome: 'succeed' as const,
    upgradeSeconds: 600,
  })),
  behaviour: { incrementalAbove: 0 },
  faults: { latencyMs },
});

/** `run` as a terminal starts it: a process group of its own (the shell's job), output kept. */
function spawnRun(h: Harness): ChildProcess & { output(): string } {
  const child = spawn(process.execPath, [CLI, 'run', '--policy', h.policyFile, '--listen', '127.0.0.1:0'], {
    env: h.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  return Object.assign(child, { output: () => out });
}

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  limitMs: number,
  show: () => string,
) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`${what} not seen within ${limitMs} ms:\n${show().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Real ms from `start` until the child exits (bounded by `limitMs`), with its exit code. */
async function timedExit(child: ChildProcess, limitMs: number): Promise<{ code: number | null; ms: number }> {
  const start = Date.now();
  const code = await exitOf(child, limitMs);
  return { code, ms: Date.now() - start };
}

async function startMidRollout(latencyMs = 0) {
  harness = await startHarness({
    fleet: fleet(latencyMs),
    timeScale: 60,
    policy: { name: 'all', poll: { initial: '20s', max: '1m' } },
  });
  const h = harness;
  delete h.env.REDIS_URL; // the private Redis, in the harness's data folder
  const redisDir = join(h.env.FLEET_UPGRADE_DATA_DIR as string, 'redis');
  const run = spawnRun(h);
  await until('the private redis-server', () => serversOn(redisDir).length === 1, 20_000, run.output);
  return { h, run, redisDir, server: serversOn(redisDir)[0] as number };
}

const canRun = findExecutable('redis-server') !== undefined && hasProc;

describe.skipIf(!canRun)('run stopped by a signal (private Redis)', () => {
  it('Ctrl-C to the process group mid-rollout: the private redis-server is not hit, run stops within seconds, exit 0', async () => {
    const { h, run, redisDir, server } = await startMidRollout();
    await until('tasks under way', async () => (await h.simStats()).tasksCreated >= 4, 30_000, run.output);
    // The terminal's Ctrl-C goes to the foreground process group: the server must not be in it.
    expect(processGroupOf(server)).not.toBe(processGroupOf(run.pid as number));

    process.kill(-(run.pid as number), 'SIGINT');
    const { code, ms } = await timedExit(run, 20_000);
    expect(code, run.output()).toBe(0);
    expect(ms).toBeLessThan(5000);
    expect(await serversGone(redisDir, 3000)).toEqual([]);
    const dataDir = h.env.FLEET_UPGRADE_DATA_DIR as string;
    expect(existsSync(join(dataDir, 'redis.lock'))).toBe(false);
    expect(existsSync(join(dataDir, 'redis-url'))).toBe(false);
    // Its stop was clean: nothing failed or timed out for lack of Redis.
    expect(run.output()).not.toMatch(/shutdown step (failed|timed out)|ECONNREFUSED/);

    // The data outlives run: status starts the private Redis from the folder and reads it.
    const status = spawn(process.execPath, [CLI, 'status'], {
      env: h.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(status);
    let out = '';
    status.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    expect(await exitOf(status, 30_000)).toBe(0);
    expect(out).toMatch(/^No daemon is running/);
    expect(out).toMatch(/all@19\.470-4\s+running/);
    expect(await serversGone(redisDir, 3000)).toEqual([]);
  }, 90_000);

  it('SIGTERM to the process mid-rollout: stops within seconds, exit 0, the private redis-server stopped', async () => {
    const { h, run, redisDir } = await startMidRollout();
    await until('tasks under way', async () => (await h.simStats()).tasksCreated >= 4, 30_000, run.output);
    process.kill(run.pid as number, 'SIGTERM');
    const { code, ms } = await timedExit(run, 20_000);
    expect(code, run.output()).toBe(0);
    expect(ms).toBeLessThan(5000);
    expect(await serversGone(redisDir, 3000)).toEqual([]);
    expect(existsSync(join(h.env.FLEET_UPGRADE_DATA_DIR as string, 'redis.lock'))).toBe(false);
  }, 90_000);

  it('a second Ctrl-C during a slow stop exits at once with 130, and the private redis-server still ends', async () => {
    // Every answer of the service takes 10 real s: the scheduler's round is waiting on one, and
    // the stop waits for that round (up to its step's limit).
    const { h, run, redisDir } = await startMidRollout(600_000);
    // The first request is the start's look at the service's clock (a rehearsal: issue 26), given
    // up after 5 s; the second is the scheduler's round, which the stop waits for.
    await until(
      'a request of the scheduler under way',
      async () => (await h.simStats()).requests.total >= 2,
      30_000,
      run.output,
    );
    process.kill(-(run.pid as number), 'SIGINT');
    await new Promise((r) => setTimeout(r, 1000));
    expect(run.exitCode, run.output()).toBeNull(); // still stopping
    process.kill(-(run.pid as number), 'SIGINT');
    const { code, ms } = await timedExit(run, 20_000);
    expect(code, run.output()).toBe(130);
    expect(ms).toBeLessThan(2000);
    expect(await serversGone(redisDir, 5000)).toEqual([]);
  }, 90_000);

  it('Ctrl-C while run still waits for the data folder ends it at once, exit 0, no redis-server started', async () => {
    harness = await startHarness({ fleet: fleet(), timeScale: 60, policy: { name: 'all' } });
    const h = harness;
    delete h.env.REDIS_URL;
    const dataDir = h.env.FLEET_UPGRADE_DATA_DIR as string;
    // A command (this test's process) holds the folder and never hands it over: run waits.
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(
      join(dataDir, 'redis.lock'),
      JSON.stringify({ pid: process.pid, role: 'command', name: 'status --watch', host: hostname() }),
    );
    h.env.LOG_LEVEL = 'info';
    const run = spawnRun(h);
    await until(
      'the wait',
      () => /waiting for a command to hand over/.test(run.output()),
      20_000,
      run.output,
    );
    process.kill(-(run.pid as number), 'SIGINT');
    const { code, ms } = await timedExit(run, 20_000);
    expect(code, run.output()).toBe(0);
    expect(ms).toBeLessThan(3000);
    expect(serversOn(join(dataDir, 'redis'))).toEqual([]);
  }, 60_000);

  it('a stop whose Redis has gone away is bounded: exit 1 within the limit, saying so', async () => {
    const { h, run, server } = await startMidRollout();
    await until('tasks under way', async () => (await h.simStats()).tasksCreated >= 4, 30_000, run.output);
    process.kill(server, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    process.kill(-(run.pid as number), 'SIGINT');
    const { code, ms } = await timedExit(run, 30_000);
    expect(code, run.output()).toBe(1);
    expect(ms).toBeLessThan(13_000); // the stop's limit is 10 s
    expect(run.output()).toMatch(/shutdown step (failed|timed out)|stop did not end in time/);
  }, 90_000);
});
