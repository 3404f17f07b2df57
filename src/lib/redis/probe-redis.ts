/** A one-shot look at a Redis for the commands: does it answer, and if not, why (in its own words). */
import { Redis } from 'ioredis';
import { redactUrl } from '../logger.js';

/**
 * Undefined when `url` answers PING within `timeoutMs`, else why not: the first connection error
 * (ECONNREFUSED, ENOTFOUND, NOAUTH ...), which ioredis hides behind `Connection is closed.`; never
 * the password. A short disconnectTimeout: ioredis's 2 s would keep a finished command alive.
 */
export async function probeRedis(url: string, timeoutMs: number): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
    disconnectTimeout: 100,
  });
  let first: string | undefined;
  redis.on('error', (err: Error) => {
    first ??= err.message;
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.connect().then(() => redis.ping()),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
      }),
    ]);
    return undefined;
  } catch (err) {
    return (first ?? (err as Error).message).split(url).join(redactUrl(url));
  } finally {
    if (timer) clearTimeout(timer);
    redis.disconnect();
  }
}
