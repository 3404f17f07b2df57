/**
 * The private Redis of one machine. Without REDIS_URL, `run` keeps the deployment's state in a
 * redis-server of its own, with append-only persistence in `<dataDir>/redis`; after `run` has
 * stopped, the operator commands start a redis-server from that folder for as long as they need
 * it. One server at a time may serve the folder (two would append to one file), so whoever starts
 * one holds `<dataDir>/redis.lock` (`{pid, role, name}`) until its server has stopped:
 *
 *   free ──take (created exclusively; a dead process's lock is taken over)──► held by run | held by a command
 *   held by run ──its URL in <dataDir>/redis-url──► commands use that server and start none
 *   held by a command ──another process waits and writes <dataDir>/redis.wanted──► the holder
 *       hands over at its next look (`status --watch`), or simply ends (every other command)
 *   held ──stop: URL file removed, redis-server stopped, lock removed──► free
 * A free folder goes first to the process that waited for it (redis.wanted). A second `run` on a
 * held folder is refused. A redis-server left serving the folder by a `run` that was killed is
 * used by the commands, and shut down by the next `run` before it starts its own. A lock written
 * on another host (a shared volume) counts as held: its process cannot be looked at from here.
 * Two processes that find the same dead lock at the same instant could both take it over; that
 * needs a crash and two starts within milliseconds, and is not guarded against.
 */
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { FleetError } from '../errors.js';
import type { Logger } from '../logger.js';
import { answerWithin, closeRedis, createRedis, formatSeconds, probeRedis } from './create-redis.js';
import { ensureRedis, NO_REDIS_MESSAGE } from './redis-server.js';

export const PRIVATE_REDIS_URL_FILE = 'redis-url';

export interface PrivateRedisPaths {
  /** The data folder, absolute (FLEET_UPGRADE_DATA_DIR, default `.data`). */
  dataDir: string;
  /** The redis-server's own folder (`--dir`). */
  dir: string;
  /** The URL of the server a `run` started, while it runs. */
  urlFile: string;
  lockFile: string;
  wantedFile: string;
}

export function privateRedisPaths(dataDir: string): PrivateRedisPaths {
  const abs = resolve(dataDir);
  return {
    dataDir: abs,
    dir: join(abs, 'redis'),
    urlFile: join(abs, PRIVATE_REDIS_URL_FILE),
    lockFile: join(abs, 'redis.lock'),
    wantedFile: join(abs, 'redis.wanted'),
  };
}

/** Whether the folder holds a private Redis's append-only data (Redis 7's folder, or an older file). */
export function hasPrivateRedisData(dir: string): boolean {
  return existsSync(join(dir, 'appendonlydir')) || existsSync(join(dir, 'appendonly.aof'));
}

export interface LockHolder {
  pid: number;
  role: 'run' | 'command';
  /** The command, for messages: `run`, `status`. */
  name: string;
  host: string;
}

export interface PrivateRedis {
  url: string;
  /** Whether this process started the server (and stops it in `stop`). */
  started: boolean;
  /** Another process waits for the folder: hand it over (stop, then open again). */
  wanted(): boolean;
  stop(): Promise<void>;
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

function alive(holder: Pick<LockHolder, 'pid' | 'host'>): boolean {
  if (holder.host !== hostname()) return true; // a shared folder: we cannot tell, so it is held
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The live holder of the folder's lock, if any (a lock being written counts for 5 s). */
export function lockHolder(paths: PrivateRedisPaths): LockHolder | undefined {
  if (!existsSync(paths.lockFile)) return undefined;
  const holder = readJson<LockHolder>(paths.lockFile);
  if (holder && typeof holder.pid === 'number') return alive(holder) ? holder : undefined;
  try {
    const young = Date.now() - statSync(paths.lockFile).mtimeMs < 5000;
    return young ? { pid: 0, role: 'command', name: 'fleet-upgrade', host: hostname() } : undefined;
  } catch {
    return undefined;
  }
}

function tryLock(paths: PrivateRedisPaths, me: LockHolder): LockHolder | undefined {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(paths.lockFile, JSON.stringify(me), { flag: 'wx' });
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = lockHolder(paths);
    if (holder) return holder;
    rmSync(paths.lockFile, { force: true }); // a dead process's lock
  }
  return lockHolder(paths) ?? { ...me, pid: 0 };
}

function unlock(paths: PrivateRedisPaths): void {
  if (readJson<LockHolder>(paths.lockFile)?.pid === process.pid) rmSync(paths.lockFile, { force: true });
}

function ask(paths: PrivateRedisPaths, me: LockHolder): void {
  writeFileSync(paths.wantedFile, JSON.stringify(me));
}

function unask(paths: PrivateRedisPaths): void {
  if (readJson<LockHolder>(paths.wantedFile)?.pid === process.pid) rmSync(paths.wantedFile, { force: true });
}

function isWanted(paths: PrivateRedisPaths): boolean {
  const waiter = readJson<LockHolder>(paths.wantedFile);
  return waiter !== undefined && waiter.pid !== process.pid && alive(waiter);
}

function me(role: LockHolder['role'], name: string): LockHolder {
  return { pid: process.pid, role, name, host: hostname() };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const who = (h: LockHolder) => `\`fleet-upgrade ${h.name}\`${h.pid ? ` (pid ${h.pid})` : ''}`;

function readUrl(paths: PrivateRedisPaths): string | undefined {
  try {
    return readFileSync(paths.urlFile, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Starts redis-server on the folder; the caller holds the lock. `run`'s is detached (a process
 * group of its own): a terminal's Ctrl-C reaches `run` only, which stops it after its own shutdown.
 * A command's dies with it on Ctrl-C, as the command does.
 */
async function startOnFolder(paths: PrivateRedisPaths, logger: Logger, detached = false) {
  try {
    return await ensureRedis({
      logger,
      dataDir: paths.dir,
      appendOnly: true,
      detached,
      env: { ...process.env, REDIS_URL: '' },
    });
  } catch (err) {
    if (err instanceof FleetError && err.message === NO_REDIS_MESSAGE && hasPrivateRedisData(paths.dir))
      throw new FleetError(
        'FLEET_ERR_REDIS_UNAVAILABLE',
        `The private Redis's data is in ${paths.dir}, but no redis-server is on PATH to open it: install redis-server, or set REDIS_URL.`,
      );
    throw err;
  }
}

/**
 * A redis-server left serving this folder by a `run` that died (its URL still answers and its
 * `dir` is this folder) is shut down, so that it and ours never append to one file.
 */
async function stopLeftover(paths: PrivateRedisPaths, logger: Logger): Promise<void> {
  const url = readUrl(paths);
  if (!url || (await probeRedis(url, 1000)) !== undefined) return;
  const redis = createRedis(url, { name: 'leftover', connectTimeoutMs: 2000 });
  // A leftover that stops answering half-way is left alone (the catch below), not waited for.
  const told = { where: `The redis-server left at ${url}`, what: 'CONFIG GET dir', advice: 'left alone.' };
  try {
    const [, dir] = (await answerWithin(redis.config('GET', 'dir'), told)) as [string, string];
    if (realpathSync(dir) !== realpathSync(paths.dir)) return;
    logger.warn({ redis: url, dir }, 'stopping the private redis-server left by a run that died');
    await answerWithin(redis.shutdown(), { ...told, what: 'SHUTDOWN' }).catch(() => undefined);
    for (let i = 0; i < 100 && (await probeRedis(url, 500)) === undefined; i++) await sleep(100);
  } catch {
    // not ours to judge: leave it
  } finally {
    await closeRedis(redis, 500);
  }
}

/**
 * For `run`: takes the folder (waiting up to `waitMs` for a command that holds it to hand it
 * over), starts redis-server on it and writes its URL for the commands. `stop()` undoes it.
 */
export async function startPrivateRedis(options: {
  dataDir: string;
  logger: Logger;
  waitMs?: number;
}): Promise<PrivateRedis> {
  const { logger } = options;
  const paths = privateRedisPaths(options.dataDir);
  mkdirSync(paths.dataDir, { recursive: true });
  const mine = me('run', 'run');
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  let told = false;
  try {
    for (let holder = tryLock(paths, mine); holder; holder = tryLock(paths, mine)) {
      if (holder.role === 'run')
        throw new FleetError(
          'FLEET_ERR_REDIS_IN_USE',
          `${who(holder)} already serves the private Redis in ${paths.dir}: stop it first, or give both processes REDIS_URL to share one Redis, or this one another FLEET_UPGRADE_DATA_DIR.`,
        );
      if (Date.now() > deadline)
        throw new FleetError(
          'FLEET_ERR_REDIS_IN_USE',
          `${who(holder)} holds the private Redis in ${paths.dir} and did not hand it over: stop it, then start \`run\` again.`,
        );
      ask(paths, mine);
      if (!told)
        logger.info(
          { holder: holder.name, pid: holder.pid },
          'waiting for a command to hand over the private Redis',
        );
      told = true;
      await sleep(100);
    }
  } finally {
    unask(paths);
  }
  try {
    await stopLeftover(paths, logger);
    rmSync(paths.urlFile, { force: true });
    const ensured = await startOnFolder(paths, logger, true);
    writeFileSync(paths.urlFile, `${ensured.url}\n`);
    return {
      url: ensured.url,
      started: true,
      wanted: () => false,
      stop: async () => {
        rmSync(paths.urlFile, { force: true });
        await ensured.stop();
        unlock(paths);
      },
    };
  } catch (err) {
    unlock(paths);
    throw err;
  }
}

/**
 * For the operator commands: the server of a running `run` (its URL file answers), or else one
 * started here on the folder's data, stopped by `stop()`. Undefined when the folder holds no
 * data and no `run` is starting. Waits up to `waitMs` for a process that holds the folder.
 */
export async function findPrivateRedis(options: {
  dataDir: string;
  logger: Logger;
  /** The command, for the lock and for messages. */
  name: string;
  waitMs?: number;
}): Promise<PrivateRedis | undefined> {
  const paths = privateRedisPaths(options.dataDir);
  const mine = me('command', options.name);
  const waitMs = options.waitMs ?? 15_000;
  const deadline = Date.now() + waitMs;
  try {
    for (;;) {
      const url = readUrl(paths);
      if (url && (await probeRedis(url, 1000)) === undefined)
        return { url, started: false, wanted: () => false, stop: async () => {} };
      const holder = lockHolder(paths);
      if (!holder) {
        if (!hasPrivateRedisData(paths.dir)) return undefined;
        // A process that waits for the folder (a `run` above all) goes first.
        if (!isWanted(paths) && !tryLock(paths, mine)) return await startHere(paths, options.logger);
      }
      if (Date.now() > deadline) {
        const h = holder ?? lockHolder(paths);
        if (h?.role === 'run' && url)
          throw new FleetError(
            'FLEET_ERR_REDIS_TIMEOUT',
            `The private Redis of ${who(h)} at ${url} (data in ${paths.dir}) did not answer PING within ${formatSeconds(waitMs)}: stop that run if it is stuck, or set REDIS_URL.`,
          );
        throw new FleetError(
          'FLEET_ERR_REDIS_IN_USE',
          h?.role === 'run'
            ? `${who(h)} holds the private Redis in ${paths.dir} but gave no address in ${paths.urlFile}: try again, or set REDIS_URL.`
            : `${h ? who(h) : 'Another fleet-upgrade command'} is using the private Redis in ${paths.dir}: try again when it has ended.`,
        );
      }
      if (holder?.role === 'command') ask(paths, mine);
      await sleep(100);
    }
  } finally {
    unask(paths);
  }
}

async function startHere(paths: PrivateRedisPaths, logger: Logger): Promise<PrivateRedis> {
  try {
    rmSync(paths.urlFile, { force: true }); // a `run` that died left it; its server does not answer
    const ensured = await startOnFolder(paths, logger);
    return {
      url: ensured.url,
      started: true,
      wanted: () => isWanted(paths),
      stop: async () => {
        await ensured.stop();
        unlock(paths);
      },
    };
  } catch (err) {
    unlock(paths);
    throw err;
  }
}
