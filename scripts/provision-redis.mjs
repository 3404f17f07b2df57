// @ts-check
/**
 * Redis for the tests, the demo and the benchmarks, found or provisioned in this order:
 *   1. REDIS_URL, when set;
 *   2. a `redis-server` on PATH, started privately;
 *   3. a `redis:7-alpine` container through testcontainers (a devDependency), when a
 *      Docker-compatible engine answers a one-second probe;
 *   4. as root with apt-get: `apt-get install redis-server` (Debian's), then as in 2;
 *   5. otherwise one sentence saying how to get Redis.
 * Steps 1 and 2 are the product's own (`ensureRedis` in src/lib/redis/redis-server.ts, all that `run`
 * does); 3 and 4 live here, out of the product, because only a developer's machine may start
 * containers or install packages.
 *
 * `prepareRedis` checks whether 1 or 2 will find a Redis, else does 3 or 4, and answers the
 * environment in which the product's `ensureRedis` finds it (the container's URL in REDIS_URL, the
 * installed redis-server on PATH): scripts/demo.mjs runs the demo process in it. `provisionRedis`
 * then calls `ensureRedis` itself (passed in: a plain script cannot import the TypeScript sources)
 * and answers `{ url, source, stop }`, for the test global setup and the benchmarks.
 *
 * Plain ESM, so that node runs it before anything is built; types in provision-redis.d.mts.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, existsSync } from 'node:fs';
import { request } from 'node:http';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

/**
 * @import { PrepareRedisDeps, PrepareRedisOptions, PreparedRedis, ProvisionLogger,
 *   ProvisionRedisOptions, ProvisionedRedis } from './provision-redis.d.mts'
 */

export const NO_REDIS_MESSAGE =
  'No Redis available: install redis-server (e.g. `apt-get install redis-server` or `brew install redis`), ' +
  'start a container runtime (Docker or Podman), or set REDIS_URL to a running Redis.';

/** Where Debian's package puts the server, for a PATH that lacks /usr/bin. */
const APT_BIN_DIR = '/usr/bin';

/**
 * @param {PrepareRedisOptions} [options]
 * @returns {Promise<PreparedRedis>}
 */
export async function prepareRedis(options = {}) {
  const env = options.env ?? process.env;
  const logger = options.logger ?? stderrLogger;
  /** @type {PrepareRedisDeps} */
  const deps = { ...defaultDeps, ...options.deps };
  const none = async () => {};

  if (env.REDIS_URL?.trim()) return { source: 'env', env, stop: none };
  if (deps.findExecutable('redis-server', env)) return { source: 'local', env, stop: none };

  if (await deps.probeContainerRuntime(env)) {
    logger.info({}, 'starting redis in a container (testcontainers)');
    const container = await deps.startContainer({ appendOnly: options.appendOnly ?? false });
    return { source: 'container', env: { ...env, REDIS_URL: container.url }, stop: container.stop };
  }

  if (deps.isRoot() && deps.findExecutable('apt-get', env)) {
    logger.warn({}, 'no redis found: installing redis-server with apt-get');
    await deps.aptInstall(logger, env);
    if (deps.findExecutable('redis-server', env)) return { source: 'apt', env, stop: none };
    if (deps.findExecutable('redis-server', { PATH: APT_BIN_DIR })) {
      const PATH = env.PATH ? `${APT_BIN_DIR}${delimiter}${env.PATH}` : APT_BIN_DIR;
      return { source: 'apt', env: { ...env, PATH }, stop: none };
    }
  }

  throw redisUnavailable(NO_REDIS_MESSAGE);
}

/**
 * @template {ProvisionLogger} L
 * @param {ProvisionRedisOptions<L>} options
 * @returns {Promise<ProvisionedRedis>}
 */
export async function provisionRedis(options) {
  const { ensureRedis, logger, dataDir, appendOnly } = options;
  const prepared = await prepareRedis(options);
  try {
    const found = await ensureRedis({ logger, env: prepared.env, dataDir, appendOnly: appendOnly ?? false });
    return {
      url: found.url,
      source: prepared.source,
      stop: async () => {
        await found.stop();
        await prepared.stop();
      },
    };
  } catch (err) {
    await prepared.stop();
    throw err;
  }
}

/**
 * @param {string} name
 * @param {NodeJS.ProcessEnv} env
 * @returns {string | undefined}
 */
function findExecutable(name, env) {
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

/**
 * Whether a Docker-compatible engine answers `GET /_ping` within a second, at DOCKER_HOST or a
 * usual socket. Cheap on purpose: testcontainers itself takes long to give up.
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<boolean>}
 */
export async function probeContainerRuntime(env = process.env) {
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

/**
 * @param {{ socketPath: string } | { host: string, port: number }} target
 * @returns {Promise<boolean>}
 */
function pingDocker(target) {
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

/** @type {PrepareRedisDeps['startContainer']} */
async function startContainer(options) {
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

/** @type {PrepareRedisDeps['aptInstall']} */
async function aptInstall(logger, env) {
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  await runCommand('apt-get', ['update'], aptEnv, 300_000, logger);
  await runCommand(
    'apt-get',
    ['install', '-y', '--no-install-recommends', 'redis-server'],
    aptEnv,
    600_000,
    logger,
  );
}

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {number} timeoutMs
 * @param {ProvisionLogger} logger
 * @returns {Promise<void>}
 */
function runCommand(cmd, args, env, timeoutMs, logger) {
  return new Promise((resolve, reject) => {
    logger.info({ cmd: [cmd, ...args].join(' ') }, 'running');
    const child = spawn(cmd, args, { env, stdio: ['ignore', 'ignore', 'pipe'], timeout: timeoutMs });
    let stderr = '';
    child.stderr?.on('data', (/** @type {Buffer} */ c) => {
      stderr = (stderr + c.toString()).slice(-2000);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          redisUnavailable(
            `${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`}): ${stderr.trim()}. ${NO_REDIS_MESSAGE}`,
          ),
        );
    });
  });
}

/**
 * The product's code for this failure, so that callers can switch on it as on `ensureRedis`'s.
 * @param {string} message
 */
function redisUnavailable(message) {
  return Object.assign(new Error(message), { code: 'FLEET_ERR_REDIS_UNAVAILABLE' });
}

/** @type {ProvisionLogger} */
const stderrLogger = {
  info: (details, msg) => writeLine(details, msg),
  warn: (details, msg) => writeLine(details, msg),
};

/**
 * @param {object} details
 * @param {string} msg
 */
function writeLine(details, msg) {
  const extra = Object.keys(details).length ? ` ${JSON.stringify(details)}` : '';
  process.stderr.write(`fleet-upgrade: ${msg}${extra}\n`);
}

/** @type {PrepareRedisDeps} */
const defaultDeps = {
  findExecutable,
  probeContainerRuntime,
  startContainer,
  isRoot: () => process.getuid?.() === 0,
  aptInstall,
};
