/**
 * One redis-server at a time on a private Redis's data folder (private-redis.ts), with real
 * redis-servers: a second `run` is refused, a dead process's lock is taken over, a server left
 * by a killed `run` is shut down (its data kept) before a new one starts, and the commands find
 * a running `run`'s server, or start one on the folder's data, or report that there is none.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/logger.js';
import { closeRedis, createRedis, pingRedis } from '../../../src/lib/redis/create-redis.js';
import {
  findPrivateRedis,
  type PrivateRedis,
  privateRedisPaths,
  startPrivateRedis,
} from '../../../src/lib/redis/private-redis.js';
import { findExecutable, startLocalRedis } from '../../../src/lib/redis/redis-server.js';

const logger = createLogger({ level: 'silent' });
const undo: (() => Promise<unknown> | unknown)[] = [];

afterEach(async () => {
  for (const step of undo.splice(0).reverse()) await step();
});

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-private-redis-'));
  undo.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function track<T extends PrivateRedis | undefined>(r: T): T {
  if (r) undo.push(() => r.stop());
  return r;
}

async function withClient<T>(
  url: string,
  work: (r: ReturnType<typeof createRedis>) => Promise<T>,
): Promise<T> {
  const redis = createRedis(url, { name: 'test' });
  try {
    return await work(redis);
  } finally {
    await closeRedis(redis);
  }
}

/** The pid of a process that has exited. */
function deadPid(): number {
  return spawnSync(process.execPath, ['-e', '']).pid as number;
}

describe.skipIf(!findExecutable('redis-server'))('private Redis of a data folder', () => {
  it('run: writes its URL, holds the lock, refuses a second run, frees everything at stop', async () => {
    const dir = dataDir();
    const paths = privateRedisPaths(dir);
    const run = track(await startPrivateRedis({ dataDir: dir, logger }));
    expect(run.started).toBe(true);
    expect(existsSync(paths.urlFile)).toBe(true);
    expect(existsSync(paths.lockFile)).toBe(true);
    await expect(startPrivateRedis({ dataDir: dir, logger })).rejects.toThrow(
      /already serves the private Redis in .*: stop it first, or give both processes REDIS_URL/,
    );
    // A command uses the run's server and starts none.
    const found = track(await findPrivateRedis({ dataDir: dir, logger, name: 'status' }));
    expect(found).toMatchObject({ url: run.url, started: false });
    await withClient(run.url, (r) => r.set('k', 'v'));
    await run.stop();
    expect(existsSync(paths.urlFile)).toBe(false);
    expect(existsSync(paths.lockFile)).toBe(false);
    expect(await pingRedis(run.url, 500)).toBeDefined();
    expect(existsSync(join(paths.dir, 'appendonlydir'))).toBe(true);
  });

  it('commands: nothing found in an empty folder; else a server of their own on the data, stopped after', async () => {
    const dir = dataDir();
    const paths = privateRedisPaths(dir);
    expect(await findPrivateRedis({ dataDir: dir, logger, name: 'status' })).toBeUndefined();
    const run = await startPrivateRedis({ dataDir: dir, logger });
    await withClient(run.url, (r) => r.set('k', 'kept'));
    await run.stop();

    const own = track(await findPrivateRedis({ dataDir: dir, logger, name: 'report' }));
    expect(own?.started).toBe(true);
    expect(JSON.parse(readFileSync(paths.lockFile, 'utf8'))).toMatchObject({
      pid: process.pid,
      role: 'command',
      name: 'report',
    });
    expect(existsSync(paths.urlFile)).toBe(false); // a command's server is not a run's
    expect(await withClient(own?.url as string, (r) => r.get('k'))).toBe('kept');
    await own?.stop();
    expect(existsSync(paths.lockFile)).toBe(false);
  });

  it('takes over the lock of a dead process, and shuts down the server a killed run left on the folder', async () => {
    const dir = dataDir();
    const paths = privateRedisPaths(dir);
    const leftover = await startLocalRedis(findExecutable('redis-server') as string, {
      logger,
      dataDir: paths.dir,
      appendOnly: true,
    });
    undo.push(() => leftover.stop());
    await withClient(leftover.url, (r) => r.set('k', 'from the leftover'));
    writeFileSync(paths.urlFile, `${leftover.url}\n`);
    writeFileSync(
      paths.lockFile,
      JSON.stringify({ pid: deadPid(), role: 'run', name: 'run', host: hostname() }),
    );

    // A command uses the leftover server as it is.
    const found = track(await findPrivateRedis({ dataDir: dir, logger, name: 'status' }));
    expect(found).toMatchObject({ url: leftover.url, started: false });

    const run = track(await startPrivateRedis({ dataDir: dir, logger }));
    expect(run.url).not.toBe(leftover.url);
    expect(await pingRedis(leftover.url, 500)).toBeDefined();
    expect(await withClient(run.url, (r) => r.get('k'))).toBe('from the leftover');
  });
});
