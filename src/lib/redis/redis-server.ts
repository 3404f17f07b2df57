/**
 * Finds the Redis that `run` (and `demo`) need, in this order:
 *   1. REDIS_URL, when set (it must answer PING; no fallback hides a wrong URL);
 *   2. a private `redis-server` from PATH on a free loopback port, in a temp dir or `dataDir`;
 *   3. otherwise one error sentence saying how to get Redis.
 * Nothing else: the product never installs packages nor starts containers. The tests, the demo
 * script and the benchmarks add those two as further fallbacks, outside src/
 * (scripts/provision-redis.mjs), and then call this.
 * The private server dies with this process (exit hook) or on `stop()`. `detached` puts it in a
 * process group of its own, so that a terminal's Ctrl-C (sent to the foreground group) reaches
 * only its owner, which stops it last, after its own shutdown (`run`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { FleetError } from '../errors.js';
import { type Logger, redactUrl } from '../logger.js';
import { stopChild } from '../stop-child.js';
import { pingRedis } from './create-redis.js';

export type RedisSource = 'env' | 'local';

export interface EnsuredRedis {
  url: string;
  source: RedisSource;
  /** Stops a Redis we started (no-op for REDIS_URL). */
  stop(): Promise<void>;
}

export interface EnsureRedisOptions {
  logger: Logger;
  /** Directory for a private server's files (default: a fresh temp dir, removed at stop). */
  dataDir?: string;
  /** Private server: `appendonly yes`, so that a restart keeps the state (default false). */
  appendOnly?: boolean;
  /** Private server: in a process group of its own, out of reach of the terminal's signals (default false). */
  detached?: boolean;
  /** Environment to read REDIS_URL and PATH from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Replaceable steps, for tests of the order. */
  deps?: Partial<EnsureRedisDeps>;
}

export interface EnsureRedisDeps {
  ping(url: string): Promise<string | undefined>;
  findExecutable(name: string, env: NodeJS.ProcessEnv): string | undefined;
  startLocal(binary: string, options: LocalRedisOptions): Promise<Omit<EnsuredRedis, 'source'>>;
}

export interface LocalRedisOptions {
  logger: Logger;
  dataDir?: string;
  appendOnly?: boolean;
  detached?: boolean;
}

export const NO_REDIS_MESSAGE =
  'No Redis available: install redis-server (e.g. `apt-get install redis-server` or `brew install redis`) ' +
  'or set REDIS_URL to a running Redis.';

export async function ensureRedis(options: EnsureRedisOptions): Promise<EnsuredRedis> {
  const { logger } = options;
  const env = options.env ?? process.env;
  const deps: EnsureRedisDeps = { ...defaultDeps, ...options.deps };

  const fromEnv = env.REDIS_URL?.trim();
  if (fromEnv) {
    const failure = await deps.ping(fromEnv);
    if (failure !== undefined)
      throw new FleetError(
        'FLEET_ERR_REDIS_UNAVAILABLE',
        `REDIS_URL (${redactUrl(fromEnv)}) does not answer PING: ${failure}. ` +
          'Start that Redis, or unset REDIS_URL to let fleet-upgrade start its own.',
      );
    logger.debug({ redis: redactUrl(fromEnv) }, 'using redis from REDIS_URL');
    return { url: fromEnv, source: 'env', stop: async () => {} };
  }

  const binary = deps.findExecutable('redis-server', env);
  if (!binary) throw new FleetError('FLEET_ERR_REDIS_UNAVAILABLE', NO_REDIS_MESSAGE);
  const local: LocalRedisOptions = {
    logger,
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    appendOnly: options.appendOnly ?? false,
    ...(options.detached ? { detached: true } : {}),
  };
  return { ...(await deps.startLocal(binary, local)), source: 'local' };
}

export function findExecutable(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A free TCP port on the loopback interface (the OS picks it). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Starts `redis-server` on a free loopback port and waits (bounded) until it answers PING. */
export async function startLocalRedis(
  binary: string,
  options: LocalRedisOptions,
): Promise<Omit<EnsuredRedis, 'source'>> {
  const { logger } = options;
  const ownDir = options.dataDir === undefined;
  const dir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'fleet-redis-')));
  if (!ownDir) await mkdir(dir, { recursive: true });
  let lastError = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freeLoopbackPort();
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--daemonize', 'no'];
    args.push('--appendonly', options.appendOnly ? 'yes' : 'no', '--loglevel', 'warning');
    if (ownDir) args.push('--save', '');
    const child = spawn(binary, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-2000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const url = `redis://127.0.0.1:${port}`;
    const ready = await waitForRedis(url, child, 10_000);
    if (ready) {
      // The server must not outlive us, nor keep our event loop alive. SIGTERM: it writes its
      // append-only file and ends by itself, also when we exit at once (a second Ctrl-C).
      const killOnExit = () => child.kill('SIGTERM');
      process.once('exit', killOnExit);
      child.unref();
      child.stdout?.destroy();
      child.stderr?.destroy();
      logger.info({ redis: url, dir, pid: child.pid }, 'started private redis-server');
      return {
        url,
        stop: async () => {
          process.removeListener('exit', killOnExit);
          await stopChild(child);
          if (ownDir) await rm(dir, { recursive: true, force: true });
        },
      };
    }
    await stopChild(child);
    lastError = output.trim() || `exit code ${child.exitCode}`;
    if (!/address already in use/i.test(output)) break; // a port race is the only reason to retry
  }
  if (ownDir) await rm(dir, { recursive: true, force: true });
  throw new FleetError('FLEET_ERR_REDIS_UNAVAILABLE', `redis-server (${binary}) did not start: ${lastError}`);
}

async function waitForRedis(url: string, child: ChildProcess, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    if ((await pingRedis(url, 500)) === undefined) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

const defaultDeps: EnsureRedisDeps = {
  ping: (url) => pingRedis(url, 2000),
  findExecutable,
  startLocal: startLocalRedis,
};
