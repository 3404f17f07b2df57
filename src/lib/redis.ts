/**
 * Redis connections for every process: one place that sets the ioredis options we rely on and
 * logs connection trouble without ever printing a password (the URL goes through `redactUrl`).
 */
import { Redis, type RedisOptions } from 'ioredis';
import { type Logger, redactUrl } from './logger.js';

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
  /** Fail the first connection after this many ms (default 5000). */
  connectTimeoutMs?: number;
  /** Do not connect until the first command (default false: connect now). */
  lazyConnect?: boolean;
  /** Passed through to ioredis for anything not covered above. */
  extra?: RedisOptions;
}

/** Opens an ioredis connection to `url` (redis:// or rediss://). */
export function createRedis(url: string, options: RedisConnectionOptions = {}): Redis {
  const safeUrl = redactUrl(url);
  const redis = new Redis(url, {
    connectionName: options.name ? `fleet-upgrade:${options.name}` : 'fleet-upgrade',
    connectTimeout: options.connectTimeoutMs ?? 5000,
    maxRetriesPerRequest: options.forBullmq ? null : 3,
    enableReadyCheck: true,
    lazyConnect: options.lazyConnect ?? false,
    // Reconnect with a capped backoff forever: Redis restarts are survivable for a daemon.
    retryStrategy: (times) => Math.min(times * 200, 5000),
    ...options.extra,
  });
  const logger = options.logger;
  if (logger) {
    // One line per distinct error message, not one per reconnection attempt.
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

/** Closes a connection politely (QUIT), and forcibly when Redis does not answer in time. */
export async function closeRedis(redis: Redis, timeoutMs = 2000): Promise<void> {
  if (redis.status === 'end') return;
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

/**
 * Checks that `url` answers PING within `timeoutMs`, without retrying. Resolves to undefined
 * when it does, or to the reason it does not (never containing the password).
 */
export async function pingRedis(url: string, timeoutMs = 2000): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    // ioredis's default (2 s) keeps a short-lived process alive that long after a failed probe.
    disconnectTimeout: 100,
  });
  redis.on('error', () => {});
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        await redis.connect();
        const pong = await redis.ping();
        if (pong !== 'PONG') throw new Error(`unexpected PING answer ${JSON.stringify(pong)}`);
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return undefined;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    return message.split(url).join(redactUrl(url));
  } finally {
    if (timer) clearTimeout(timer);
    redis.disconnect();
  }
}
