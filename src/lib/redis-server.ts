/**
 * Finds or provisions the Redis that the tests, the demo and `run` need, in this order:
 *   1. REDIS_URL, when set (it must answer PING; no fallback hides a wrong URL);
 *   2. a private `redis-server` from PATH on a free loopback port, in a temp dir or `dataDir`;
 *   3. a `redis` container through testcontainers, when a container runtime answers a cheap probe;
 *   4. when running as root with apt-get: `apt-get install redis-server`, then as in 2;
 *   5. otherwise one error sentence saying how to get Redis.
 * The private server dies with this process (exit hook) or on `stop()`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { FleetError } from './errors.js';
import { type Logger, redactUrl } from './logger.js';
import { pingRedis } from './redis.js';
import { stopChild } from './stop-child.js';

export type RedisSource = 'env' | 'local' | 'container' | 'apt';

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
  /** Environment to read REDIS_URL and PATH from (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** May install redis-server with apt-get when root (default true). */
  allowInstall?: boolean;
  /** Replaceable steps, for tests of the fallback order. */
  deps?: Partial<EnsureRedisDeps>;
}

export interface EnsureRedisDeps {
  ping(url: string): Promise<string | undefined>;
  findExecutable(name: string, env: NodeJS.ProcessEnv): string | undefined;
  startLocal(binary: string, options: LocalRedisOptions): Promise<Omit<EnsuredRedis, 'source'>>;
  probeContainerRuntime(env: NodeJS.ProcessEnv): Promise<boolean>;
  startContainer(options: { appendOnly: boolean }): Promise<Omit<EnsuredRedis, 'source'>>;
  isRoot(): boolean;
  aptInstall(logger: Logger): Promise<void>;
}

export interface LocalRedisOptions {
  logger: Logger;
  dataDir?: string;
  appendOnly?: boolean;
}

export const NO_REDIS_MESSAGE =
  'No Redis available: install redis-server (e.g. `apt-get install redis-server` or `brew install redis`) ' +
  'or set REDIS_URL to a running Redis.';

export async function ensureRedis(options: EnsureRedisOptions): Promise<EnsuredRedis> {
  const { logger } = options;
  const env = options.env ?? process.env;
  const deps: EnsureRedisDeps = { ...defaultDeps, ...options.deps };
  const local: LocalRedisOptions = {
    logger,
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    appendOnly: options.appendOnly ?? false,
  };

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
  if (binary) return { ...(await deps.startLocal(binary, local)), source: 'local' };

  if (await deps.probeContainerRuntime(env)) {
    logger.info('starting redis in a container (testcontainers)');
    return { ...(await deps.startContainer({ appendOnly: local.appendOnly ?? false })), source: 'container' };
  }

  if ((options.allowInstall ?? true) && deps.isRoot() && deps.findExecutable('apt-get', env)) {
    logger.warn('no redis found: installing redis-server with apt-get');
    await deps.aptInstall(logger);
    const installed = deps.findExecutable('redis-server', env) ?? firstExisting(['/usr/bin/redis-server']);
    if (installed) return { ...(await deps.startLocal(installed, local)), source: 'apt' };
  }

  throw new FleetError('FLEET_ERR_REDIS_UNAVAILABLE', NO_REDIS_MESSAGE);
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

function firstExisting(paths: readonly string[]): string | undefined {
  return paths.find((p) => existsSync(p));
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
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-2000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const url = `redis://127.0.0.1:${port}`;
    const ready = await waitForRedis(url, child, 10_000);
    if (ready) {
      // The server must not outlive us, nor keep our event loop alive.
      const killOnExit = () => child.kill('SIGKILL');
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

/**
 * Whether a Docker-compatible engine answers `GET /_ping` within a second, at DOCKER_HOST or a
 * usual socket. Cheap on purpose: testcontainers itself takes long to give up.
 */
export async function probeContainerRuntime(env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const host = env.DOCKER_HOST;
  if (host) {
    if (host.startsWith('unix://')) return pingDocker({ socketPath: host.slice('unix://'.length) });
    if (host.startsWith('tcp://')) {
      const u = new URL(`http://${host.slice('tcp://'.length)}`);
      return pingDocker({ host: u.hostname, port: Number(u.port || 2375) });
    }
    return false;
  }
  const home = homedir();
  const runtime = env.XDG_RUNTIME_DIR;
  const sockets = [
    '/var/run/docker.sock',
    join(home, '.docker/run/docker.sock'),
    join(home, '.docker/desktop/docker.sock'),
    ...(runtime ? [join(runtime, 'docker.sock'), join(runtime, 'podman/podman.sock')] : []),
    '/run/podman/podman.sock',
  ];
  for (const socketPath of sockets) {
    if (existsSync(socketPath) && (await pingDocker({ socketPath }))) return true;
  }
  return false;
}

function pingDocker(target: { socketPath: string } | { host: string; port: number }): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ ...target, path: '/_ping', method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

async function startContainer(options: { appendOnly: boolean }): Promise<Omit<EnsuredRedis, 'source'>> {
  const { GenericContainer } = await import('testcontainers');
  let builder = new GenericContainer('redis:7-alpine').withExposedPorts(6379);
  if (options.appendOnly) builder = builder.withCommand(['redis-server', '--appendonly', 'yes']);
  const container = await builder.start();
  return {
    url: `redis://${container.getHost()}:${container.getMappedPort(6379)}`,
    stop: async () => {
      await container.stop();
    },
  };
}

async function aptInstall(logger: Logger): Promise<void> {
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  await runCommand('apt-get', ['update'], env, 300_000, logger);
  await runCommand(
    'apt-get',
    ['install', '-y', '--no-install-recommends', 'redis-server'],
    env,
    600_000,
    logger,
  );
}

function runCommand(
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  logger: Logger,
): Promise<void> {
  return new Promise((resolve, reject) => {
    logger.info({ cmd: [cmd, ...args].join(' ') }, 'running');
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => {
      stderr = (stderr + c.toString()).slice(-2000);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new FleetError(
            'FLEET_ERR_REDIS_UNAVAILABLE',
            `${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}. ${NO_REDIS_MESSAGE}`,
          ),
        );
    });
  });
}

const defaultDeps: EnsureRedisDeps = {
  ping: (url) => pingRedis(url, 2000),
  findExecutable,
  startLocal: startLocalRedis,
  probeContainerRuntime,
  startContainer,
  isRoot: () => process.getuid?.() === 0,
  aptInstall,
};
