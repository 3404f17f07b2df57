/**
 * The operator commands with the daemon gone, through the built CLI (run `npm run build` first):
 * after `run --once` with its private Redis (no REDIS_URL), `status`, `report`, `history`,
 * `pause` and `resume` start a redis-server from the data folder and stop it again; a `run`
 * that starts while `status --watch` holds that folder gets it handed over, and a `status --watch`
 * on a `run` that stops says so in one sentence, then reads the folder itself. Without Redis,
 * `status` says so in one sentence and exits 1; `status --watch` says so and keeps trying.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/logger.js';
import { pingRedis } from '../../../src/lib/redis/create-redis.js';
import { findExecutable, freeLoopbackPort, startLocalRedis } from '../../../src/lib/redis/redis-server.js';
import { serversOn } from '../../support/redis-processes.js';
import { CLI, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;
const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
  await harness?.close();
  harness = undefined;
});

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 60_000);
  return { code, out: child.output() };
}

/** `fleet-upgrade <args>` with exactly `env` (and PATH, HOME). */
function spawnWith(env: NodeJS.ProcessEnv, args: string[]): ChildProcess & { output(): string } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return Object.assign(child, { output: () => out });
}

async function until(what: string, check: () => boolean, timeoutMs: number, show: () => string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`${what} not seen within ${timeoutMs} ms:\n${show()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const fleet = () => ({
  builds: ['19.400-5', '19.470-4'],
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  collectors: [1, 2, 3].map((id) => ({
    id,
    name: `web-${id}`,
    hostName: `web-${id}.example`,
    osName: 'Linux',
    version: '19.400-5',
    outcome: 'succeed' as const,
    upgradeSeconds: 30,
  })),
  behaviour: { incrementalAbove: 0 },
});

const hasRedisServer = findExecutable('redis-server') !== undefined;

describe.skipIf(!hasRedisServer)('operator commands while the daemon is down (private Redis)', () => {
  it('after run --once: status, report, history, pause and resume open the data folder and close it', async () => {
    harness = await startHarness({
      fleet: fleet(),
      timeScale: 300,
      policy: { name: 'all', poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    delete h.env.REDIS_URL;
    const dataDir = h.env.FLEET_UPGRADE_DATA_DIR as string;
    const redisDir = join(dataDir, 'redis');

    const run = await cli(h, ['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    expect(run.code, run.out).toBe(0);
    expect(existsSync(join(redisDir, 'appendonlydir'))).toBe(true);
    expect(existsSync(join(dataDir, 'redis-url'))).toBe(false);
    expect(existsSync(join(dataDir, 'redis.lock'))).toBe(false);
    expect(serversOn(redisDir)).toEqual([]);

    const status = await cli(h, ['status']);
    expect(status.code, status.out).toBe(0);
    const lines = status.out.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^No daemon is running/);
    expect(status.out).toMatch(/all@19\.470-4\s+converged\s+\[########\] 3\/3\s+0\/\d+\s+3 ok/);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(80);

    const json = await cli(h, ['status', '--json']);
    expect(json.code, json.out).toBe(0);
    expect(JSON.parse(json.out).rollouts[0]).toMatchObject({
      id: 'all@19.470-4',
      phase: 'converged',
      counts: { succeeded: 3 },
    });

    const report = await cli(h, ['report', 'all@19.470-4', '--format', 'csv']);
    expect(report.code, report.out).toBe(0);
    expect(
      report.out
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(',').slice(0, 6).join(',')),
    ).toEqual([1, 2, 3].map((id) => `${id},web-${id},web-${id}.example,19.400-5,19.470-4,succeeded`));

    const pause = await cli(h, ['pause', 'all@19.470-4']);
    expect(pause.code, pause.out).toBe(0);
    expect(pause.out).toMatch(/all@19\.470-4 paused by \S+@\S+/);
    const paused = await cli(h, ['status']);
    expect(paused.out).toMatch(/all@19\.470-4\s+paused/);
    expect(paused.out).toMatch(
      / {2}paused by \S+@\S+ at [^\n]*UTC —\n? *`fleet-upgrade resume all@19\.470-4`/,
    );

    const resume = await cli(h, ['resume', 'all@19.470-4']);
    expect(resume.code, resume.out).toBe(0);
    expect(resume.out).toMatch(/resumed by .*: released the pause/);

    const history = await cli(h, ['history', 'all@19.470-4']);
    expect(history.code, history.out).toBe(0);
    expect(history.out).toMatch(/rollout\.converged/);
    expect(history.out).toMatch(/rollout\.paused[\s\S]*rollout\.resumed/);

    // Every command stopped the redis-server it started, and left the folder free.
    expect(serversOn(redisDir)).toEqual([]);
    expect(existsSync(join(dataDir, 'redis.lock'))).toBe(false);
  }, 120_000);

  it('a run that starts while status --watch holds the data folder gets it handed over', async () => {
    harness = await startHarness({
      fleet: fleet(),
      timeScale: 300,
      policy: { name: 'all', poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    delete h.env.REDIS_URL;
    const dataDir = h.env.FLEET_UPGRADE_DATA_DIR as string;
    const first = await cli(h, ['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    expect(first.code, first.out).toBe(0);

    const watch = h.spawnCli(['status', '--watch', '--interval', '0.2']);
    await until(
      'the watch on its own private Redis',
      () => /all@19\.470-4\s+converged/.test(watch.output()),
      20_000,
      watch.output,
    );
    expect(existsSync(join(dataDir, 'redis.lock'))).toBe(true);
    expect(serversOn(join(dataDir, 'redis'))).toHaveLength(1);

    // Never two redis-servers on one folder: sampled while the run starts, works and stops.
    let most = 0;
    const sampler = setInterval(() => {
      most = Math.max(most, serversOn(join(dataDir, 'redis')).length);
    }, 20);
    const again = await cli(h, ['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    clearInterval(sampler);
    expect(again.code, again.out).toBe(0);
    expect(most).toBe(1);
    // The watch gave the folder over and went on reading (the run's Redis, then its own again).
    const seen = watch.output().length;
    await until(
      'the watch drawing again',
      () => /converged/.test(watch.output().slice(seen)),
      20_000,
      watch.output,
    );
    expect(watch.output()).not.toMatch(/max retries|Connection is closed|ECONNREFUSED/i);
    watch.kill('SIGINT');
    expect(await exitOf(watch, 20_000)).toBe(0);
    expect(serversOn(join(dataDir, 'redis'))).toEqual([]);
    expect(existsSync(join(dataDir, 'redis.lock'))).toBe(false);
  }, 120_000);

  it('status --watch on a run that stops: one sentence saying so, then the table again from the data folder', async () => {
    harness = await startHarness({
      fleet: fleet(),
      timeScale: 300,
      policy: { name: 'all', poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    delete h.env.REDIS_URL;
    const dataDir = h.env.FLEET_UPGRADE_DATA_DIR as string;
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    await until('the run', () => existsSync(join(dataDir, 'redis-url')), 20_000, run.output);
    const watch = h.spawnCli(['status', '--watch', '--interval', '0.2']);
    await until(
      "the watch on the run's Redis",
      () => /all@19\.470-4\s+(running|converged)/.test(watch.output()),
      20_000,
      watch.output,
    );
    expect(watch.output()).not.toMatch(/No daemon is running/);

    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);
    const stoppedAt = watch.output().length;
    await until(
      'the sentence',
      () => /stopped answering.*Trying again in \d+ s/.test(watch.output().slice(stoppedAt)),
      20_000,
      watch.output,
    );
    // Then it reads the data folder itself: the table again, with no daemon leading it.
    const toldAt = watch.output().length;
    await until(
      'the table from the data folder',
      () => /No daemon is running[\s\S]*all@19\.470-4/.test(watch.output().slice(toldAt)),
      20_000,
      watch.output,
    );
    expect(watch.output()).not.toMatch(/max retries|Connection is closed|ECONNREFUSED|Error:|\n\s+at /i);
    expect(watch.exitCode).toBeNull();
    watch.kill('SIGINT');
    expect(await exitOf(watch, 20_000)).toBe(0);
    expect(serversOn(join(dataDir, 'redis'))).toEqual([]);
  }, 120_000);
});

describe('clear words when Redis is away', () => {
  it('status against a Redis that does not answer prints one sentence and exits 1', async () => {
    const port = await freeLoopbackPort();
    const status = spawnWith({ REDIS_URL: `redis://127.0.0.1:${port}` }, ['status']);
    expect(await exitOf(status, 30_000)).toBe(1);
    const out = status.output().trim();
    expect(out.split('\n')).toHaveLength(1);
    expect(out).toBe(
      `fleet-upgrade: Redis at redis://127.0.0.1:${port} (REDIS_URL) does not answer (nothing listens there): start it, or set REDIS_URL to the deployment's Redis.`,
    );
  }, 40_000);

  it('without REDIS_URL and without a private Redis, status names the variable and the folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-nodata-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const status = spawnWith({ FLEET_UPGRADE_DATA_DIR: dir }, ['status']);
    expect(await exitOf(status, 30_000)).toBe(1);
    const out = status.output().trim();
    expect(out).toContain(`no private Redis of \`fleet-upgrade run\` was found in ${join(dir, 'redis')}`);
    expect(out).toMatch(/Set REDIS_URL/);
  }, 40_000);

  it.skipIf(!hasRedisServer)(
    'status --watch says in words that Redis went away, keeps trying, and draws again once it is back',
    async () => {
      const logger = createLogger({ level: 'silent' });
      const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-watch-'));
      cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
      const binary = findExecutable('redis-server') as string;
      const server = await startLocalRedis(binary, { logger, dataDir: dir });
      cleanups.push(() => server.stop());
      const watch = spawnWith({ REDIS_URL: server.url, FLEET_UPGRADE_DATA_DIR: dir }, [
        'status',
        '--watch',
        '--interval',
        '0.2',
      ]);
      await until('the first drawing', () => /no rollouts/.test(watch.output()), 20_000, watch.output);
      await server.stop();
      await until(
        'the sentence',
        () => /does not answer \(nothing listens there\).*Trying again in \d+ s/.test(watch.output()),
        20_000,
        watch.output,
      );
      expect(watch.output()).toMatch(/Last seen at \d\d:\d\d:\d\d UTC:\nno rollouts/);
      expect(watch.output()).not.toMatch(/max retries|Connection is closed|ECONNREFUSED/i);
      expect(watch.exitCode).toBeNull();
      // Redis back on the same port: the watch draws the table again.
      const port = new URL(server.url).port;
      const back = spawn(binary, ['--port', port, '--bind', '127.0.0.1', '--save', '', '--dir', dir], {
        stdio: 'ignore',
      });
      cleanups.push(() => {
        back.kill('SIGKILL');
      });
      for (let i = 0; i < 100 && (await pingRedis(server.url, 200)) !== undefined; i++)
        await new Promise((r) => setTimeout(r, 100));
      const seen = watch.output().length;
      await until(
        'drawing again',
        () => /no rollouts/.test(watch.output().slice(seen)),
        40_000,
        watch.output,
      );
      watch.kill('SIGINT');
      expect(await exitOf(watch, 20_000)).toBe(0);
    },
    60_000,
  );
});
