/**
 * Redis connections for every process, and the only place in src/ that constructs one
 * (`createRedis`): the topology is decided there alone. A target (redis-target.ts) is one server
 * (a URL), a primary found through Sentinel (ioredis asks the sentinels for the primary at every
 * connection, follows a failover and re-checks the role it reached), or a Cluster (ioredis
 * follows MOVED/ASK and slot moves). Every key of a deployment carries one hash tag
 * (rollout/keys.ts), so on a Cluster they live in one slot: the Lua scripts, MULTI and the
 * pipelines work there as on one server ("Cluster gives availability here, not sharding").
 * A Cluster client is handed out typed as `Redis`: it answers the same commands for keys of one
 * slot; what differs (a command without keys that must reach the slot's primary, such as WAIT or
 * INFO; SCAN, which is per node) goes through `nodeFor` and `primariesOf`.
 * It sets the ioredis options we rely on for each use (a lasting connection, BullMQ's, a one-shot
 * look) and logs connection trouble without ever printing a password (`describeRedis`).
 * `probeRedis` takes a one-shot look at a target.
 */
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import { FleetError } from '../errors.js';
import type { Logger } from '../logger.js';
import { withTimeout } from '../with-timeout.js';
import { pingWithin } from './ping-within.js';
import { asTarget, describeRedis, type RedisTarget, urlWithoutCredentials } from './redis-target.js';

export type { Redis, RedisTarget };

export interface RedisConnectionOptions {
  logger?: Logger;
  /** Shown in `CLIENT LIST` and in our logs, e.g. `api-budget` or `worker`. */
  name?: string;
  /**
   * BullMQ needs `maxRetriesPerRequest: null` on the connections of its workers (commands wait
   * for Redis to come back instead of failing). Other users fail a command after a few retries.
   */
  forBullmq?: boolean;
  /**
   * A connection for one look, then closed (probeRedis): opened on its first command, never
   * retried, no offline queue, no name, and a short disconnect; the options above do not apply.
   */
  oneShot?: boolean;
  /** Fail the first connection after this many ms (default 5000). */
  connectTimeoutMs?: number;
  /** Do not connect until the first command (default false: connect now). */
  lazyConnect?: boolean;
  /** Passed through to ioredis for anything not covered above (for a Cluster: to each node's connection). */
  extra?: RedisOptions;
}

/**
 * Opens a connection to `target` (a redis:// or rediss:// URL, or a target of redis-target.ts)
 * with the options of its use. The one place that decides the topology.
 */
export function createRedis(target: RedisTarget | string, options: RedisConnectionOptions = {}): Redis {
  const t = asTarget(target);
  const use = options.oneShot ? oneShotOptions(options) : lastingOptions(options);
  const auth = {
    ...(t.username ? { username: t.username } : {}),
    ...(t.password ? { password: t.password } : {}),
  };
  let redis: Redis;
  if (t.kind === 'cluster') {
    const cluster = new Cluster(t.nodes, clusterOptions({ ...use, ...auth }, options));
    // The same commands for keys of one slot; see the header for what differs.
    redis = cluster as unknown as Redis;
  } else if (t.kind === 'sentinel') {
    redis = new Redis({
      ...use,
      ...auth,
      sentinels: t.sentinels,
      name: t.name,
      role: 'master',
      ...(t.sentinelPassword ? { sentinelPassword: t.sentinelPassword } : {}),
      // Not ioredis's failoverDetector: its +switch-master can arrive while a reconnection is
      // under way, which then ends the connection for good ("Connection is closed."). A failover
      // is noticed when the old primary's connection drops, or by READONLY (reconnectOnError).
      sentinelRetryStrategy: options.oneShot ? () => null : (times) => Math.min(times * 200, 2000),
    });
  } else {
    redis = new Redis(t.url, { ...use, ...auth });
  }
  const logger = options.logger;
  if (!options.oneShot)
    keepConnected(redis, (fields, message) =>
      logger?.warn({ redis: describeRedis(t), name: options.name, ...fields }, message),
    );
  if (logger) {
    // One line per distinct error message, not one per reconnection attempt.
    const where = describeRedis(t);
    let lastMessage = '';
    redis.on('error', (err: Error) => {
      if (err.message === lastMessage) return;
      lastMessage = err.message;
      logger.warn({ redis: where, name: options.name, err: err.message }, 'redis connection error');
    });
    redis.on('ready', () => {
      if (lastMessage) logger.info({ redis: where, name: options.name }, 'redis connection restored');
      lastMessage = '';
    });
    if (t.kind === 'cluster') {
      // A Cluster client reports a node's trouble as `node error` and stays `ready` meanwhile: it
      // is restored once a refresh of the slots names none of the failed nodes as a primary (a
      // replica took their slots over, or they came back).
      const cluster = redis as unknown as Cluster;
      const failed = new Set<string>();
      cluster.on('node error', (err: Error, node: string) => {
        if (!failed.has(node) || err.message !== lastMessage)
          logger.warn({ redis: where, name: options.name, node, err: err.message }, 'redis connection error');
        failed.add(node);
        lastMessage = err.message;
      });
      cluster.on('refresh', () => {
        if (failed.size === 0) return;
        if (cluster.slots.some((owners) => owners?.[0] !== undefined && failed.has(owners[0]))) return;
        logger.info({ redis: where, name: options.name, failed: [...failed] }, 'redis connection restored');
        failed.clear();
        lastMessage = '';
      });
    }
  } else {
    // Without a listener, ioredis prints unhandled error events to stderr; the caller sees the
    // failure on its commands instead.
    redis.on('error', () => {});
  }
  return redis;
}

/** Connections closed by their owner (closeRedis, BullMQ's close, a `disconnect()`): they stay closed. */
const closedByOwner = new WeakSet<object>();

/**
 * A lasting connection never ends by itself. ioredis ends one for good (status `end`, every
 * later command answered `Connection is closed.`) when a reconnection is cut short, e.g. a
 * `disconnect(true)` asked for by READONLY while the sentinels are still being asked for the
 * primary; nothing in ioredis connects it again. Here an end that its owner did not ask for
 * (neither `disconnect()` nor `quit()`) is followed by a new connection, after a growing delay
 * (200 ms to 5 s).
 */
function keepConnected(redis: Redis, warn: (fields: Record<string, unknown>, message: string) => void): void {
  const disconnect = redis.disconnect.bind(redis);
  const quit = redis.quit.bind(redis);
  redis.disconnect = ((reconnect?: boolean) => {
    if (!reconnect) closedByOwner.add(redis);
    return disconnect(reconnect);
  }) as typeof redis.disconnect;
  redis.quit = ((...args: Parameters<typeof redis.quit>) => {
    closedByOwner.add(redis);
    return quit(...args);
  }) as typeof redis.quit;
  let ends = 0;
  redis.on('ready', () => {
    ends = 0;
  });
  redis.on('end', () => {
    if (closedByOwner.has(redis)) return;
    const delayMs = Math.min(200 * 2 ** ends, 5000);
    ends++;
    warn({ delayMs }, 'redis connection ended without being closed: connecting again');
    setTimeout(() => {
      if (closedByOwner.has(redis) || redis.status !== 'end') return;
      redis.connect().catch(() => undefined);
    }, delayMs).unref();
  });
}

/** Whether `redis` is a Cluster client (createRedis of a `cluster` target). */
export function isCluster(redis: Redis): boolean {
  return (redis as unknown as { isCluster?: boolean }).isCluster === true;
}

/**
 * The connection that carries commands for `key`: `redis` itself, or on a Cluster the client's
 * own connection to the primary serving the key's slot (undefined while the slots are unknown).
 * A command without keys that must reach that primary (WAIT, INFO replication) is sent on it.
 */
export function nodeFor(redis: Redis, key: string): Redis | undefined {
  if (!isCluster(redis)) return redis;
  const cluster = redis as unknown as Cluster;
  const nodeKey = cluster.slots[keySlot(key)]?.[0];
  if (!nodeKey) return undefined;
  return cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === nodeKey);
}

/** The primaries to look at for a walk of every key (SCAN is per node): `redis`, or each primary of a Cluster. */
export function primariesOf(redis: Redis): Redis[] {
  return isCluster(redis) ? (redis as unknown as Cluster).nodes('master') : [redis];
}

/** The Cluster hash slot of `key` (CRC16/XMODEM of its hash tag, or of the whole key, mod 16384). */
export function keySlot(key: string): number {
  const open = key.indexOf('{');
  let part = key;
  if (open !== -1) {
    const close = key.indexOf('}', open + 1);
    if (close > open + 1) part = key.slice(open + 1, close);
  }
  let crc = 0;
  for (const byte of Buffer.from(part, 'utf8')) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16384;
}

function clusterOptions(use: RedisOptions, options: RedisConnectionOptions): ClusterOptions {
  const {
    retryStrategy: _perNode,
    lazyConnect,
    enableOfflineQueue,
    enableReadyCheck: _ready,
    ...perNode
  } = use;
  return {
    redisOptions: perNode,
    lazyConnect: lazyConnect ?? false,
    enableOfflineQueue: enableOfflineQueue ?? true,
    // Not the Cluster's ready check (CLUSTER INFO says `fail` while a replica is being promoted):
    // when it fails, ioredis reconnects on its own but leaves the promise of `connect()` pending
    // for ever, and BullMQ's worker awaits that promise after its watchdog reset the blocking
    // connection: the worker then never fetches a job again. Commands sent while the slot has no
    // primary are retried instead (retryDelayOnClusterDown).
    enableReadyCheck: false,
    scaleReads: 'master',
    // A primary that dies is replaced by its replica within the cluster's node timeout and an
    // election: commands are retried meanwhile (32 × 250 ms), then fail like any other.
    maxRedirections: 32,
    retryDelayOnFailover: 250,
    retryDelayOnClusterDown: 250,
    retryDelayOnTryAgain: 250,
    clusterRetryStrategy: options.oneShot ? () => null : (times) => Math.min(times * 200, 5000),
  };
}

function lastingOptions(options: RedisConnectionOptions): RedisOptions {
  return {
    connectionName: options.name ? `fleet-upgrade:${options.name}` : 'fleet-upgrade',
    connectTimeout: options.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: options.forBullmq ? null : 3,
    enableReadyCheck: true,
    lazyConnect: options.lazyConnect ?? false,
    // Reconnect with a capped backoff forever: Redis restarts are survivable for a daemon.
    retryStrategy: (times) => Math.min(times * 200, 5000),
    // A primary turned replica by a failover answers writes with READONLY: reconnect (to the new
    // primary, through the sentinels) and send the command again.
    reconnectOnError: (err) => (err.message.startsWith('READONLY') ? 2 : false),
    ...options.extra,
  };
}

function oneShotOptions(options: RedisConnectionOptions): RedisOptions {
  return {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    // ioredis's default (2 s) keeps a short-lived process alive that long after a failed probe.
    disconnectTimeout: 100,
  };
}

/** Closes a connection politely (QUIT) when it is ready, and forcibly when Redis does not answer in time. */
export async function closeRedis(redis: Redis, timeoutMs = 2000): Promise<void> {
  if (redis.status === 'end') return;
  // Not connected (or never ready: a server that does not answer): QUIT would only wait.
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.quit().catch(() => undefined),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, timeoutMs);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
    redis.disconnect();
  }
}

/** Why a Redis did not answer probeRedis; neither text ever holds the URL's password. */
export interface ProbeFailure {
  /**
   * Why: the first connection error (ECONNREFUSED, ENOTFOUND, NOAUTH ...), which ioredis hides
   * behind `Connection is closed.`; else what the PING failed with.
   */
  reason: string;
  /** What the PING itself failed with (`Connection is closed.`, `no answer within N ms` ...). */
  pingError: string;
}

/**
 * A one-shot look at `url` on a connection of its own, closed after: undefined when it answers
 * PING within `timeoutMs` (connecting included), without retrying; else why not.
 */
export async function probeRedis(
  target: RedisTarget | string,
  timeoutMs = 2000,
): Promise<ProbeFailure | undefined> {
  const redis = createRedis(target, { oneShot: true, connectTimeoutMs: timeoutMs });
  let first: string | undefined;
  redis.on('error', (err: Error) => {
    first ??= err.message;
  });
  try {
    const failed = await pingWithin(redis, timeoutMs);
    if (failed === undefined) return undefined;
    const t = asTarget(target);
    const safe = (message: string) =>
      t.kind === 'standalone' ? message.split(t.url).join(urlWithoutCredentials(t.url)) : message;
    return { reason: safe(first ?? failed), pingError: safe(failed) };
  } finally {
    redis.disconnect();
  }
}

/** What the PING of probeRedis failed with, or undefined when `url` answered within `timeoutMs`. */
export async function pingRedis(target: RedisTarget | string, timeoutMs = 2000): Promise<string | undefined> {
  return (await probeRedis(target, timeoutMs))?.pingError;
}

/**
 * How long a process waits for Redis while it starts (the first connection and command, the
 * private Redis's look-ups): a Redis that accepts connections and never answers would otherwise
 * hang `run`, `worker` and the operator commands without a word.
 */
export const REDIS_START_LIMIT_MS = 10_000;

/** `10 s`, `1.5 s`: a time limit in a message. */
export function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * `work` (a Redis command), or after `ms` a FleetError `FLEET_ERR_REDIS_TIMEOUT` with the
 * sentence `${where} did not answer ${what} within N s: ${advice}`. The command itself is left
 * pending (closing the connection ends it); its late failure is swallowed here.
 */
export async function answerWithin<T>(
  work: Promise<T>,
  told: { where: string; what: string; advice: string },
  ms = REDIS_START_LIMIT_MS,
): Promise<T> {
  work.catch(() => undefined);
  return withTimeout(work, ms, () => {
    throw new FleetError(
      'FLEET_ERR_REDIS_TIMEOUT',
      `${told.where} did not answer ${told.what} within ${formatSeconds(ms)}: ${told.advice}`,
    );
  });
}
