/**
 * Redis connections for every process, and the only place in src/ that constructs one
 * (`createRedis`): the topology is decided there alone (a standalone server today; Sentinel and
 * Cluster will be added there). It sets the ioredis options we rely on for each use (a lasting
 * connection, BullMQ's, a one-shot look) and logs connection trouble without ever printing a
 * password (the URL goes through `redactUrl`). `probeRedis` takes a one-shot look at a URL.
 */
import { Redis, type RedisOptions } from 'ioredis';
import { FleetError } from '../errors.js';
import { type Logger, redactUrl } from '../logger.js';
import { withTimeout } from '../with-timeout.js';
import { pingWithin } from './ping-within.js';

export type { Redis };

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
  /** Passed through to ioredis for anything not covered above. */
  extra?: RedisOptions;
}

/**
 * Opens an ioredis connection to `url` (redis:// or rediss://), with the options of its use. The
 * one place that decides the topology: a standalone server today, whatever the use.
 */
export function createRedis(url: string, options: RedisConnectionOptions = {}): Redis {
  const use = options.oneShot ? oneShotOptions(options) : lastingOptions(options);
  const redis = new Redis(url, use);
  const logger = options.logger;
  if (logger) {
    // One line per distinct error message, not one per reconnection attempt.
    const safeUrl = redactUrl(url);
    let lastMessage = '';
    redis.on('error', (err: Error) => {
      if (err.message === lastMessage) return;
      lastMessage = err.message;
      logger.warn({ redis: safeUrl, name: options.name, err: err.message }, 'redis connection error');
    });
    redis.on('ready', () => {
      if (lastMessage) logger.info({ redis: safeUrl, name: options.name }, 'redis connection restored');
      lastMessage = '';
    });
  } else {
    // Without a listener, ioredis prints unhandled error events to stderr; the caller sees the
    // failure on its commands instead.
    redis.on('error', () => {});
  }
  return redis;
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
export async function probeRedis(url: string, timeoutMs = 2000): Promise<ProbeFailure | undefined> {
  const redis = createRedis(url, { oneShot: true, connectTimeoutMs: timeoutMs });
  let first: string | undefined;
  redis.on('error', (err: Error) => {
    first ??= err.message;
  });
  try {
    const failed = await pingWithin(redis, timeoutMs);
    if (failed === undefined) return undefined;
    const safe = (message: string) => message.split(url).join(redactUrl(url));
    return { reason: safe(first ?? failed), pingError: safe(failed) };
  } finally {
    redis.disconnect();
  }
}

/** What the PING of probeRedis failed with, or undefined when `url` answered within `timeoutMs`. */
export async function pingRedis(url: string, timeoutMs = 2000): Promise<string | undefined> {
  return (await probeRedis(url, timeoutMs))?.pingError;
}

/**
 * How long a process waits for Redis while it starts (the first connection and command, the
 * private Redis's look-ups): a Redis that accepts connections and never answers would otherwise
 * hang `run`, `worker` and the operator commands without a word.
 */
export const REDIS_START_LIMIT_MS = 10_000;

/** `url` for a message: without user name or password (also a `?password=` parameter). */
export function redisAddress(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.searchParams.delete('password');
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}

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
