/**
 * The one PING with a time limit, for every look at Redis that must not wait: a command's first
 * look at a Redis (probeRedis, on a connection of its own), a redis-server just started, and the
 * daemon's /readyz and `fleet_upgrade_redis_up` on its own connection. Left alone, ioredis queues
 * a command until Redis is back.
 */
import type { Redis } from 'ioredis';

/**
 * Undefined when `redis` answers PONG within `ms`, else what the PING failed with (`no answer
 * within N ms` when nothing came). A connection made with `lazyConnect` and not yet opened is
 * opened within the same limit. Never throws; the late answer of a PING given up on is dropped.
 */
export async function pingWithin(redis: Redis, ms: number): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      (async () => {
        if (redis.status === 'wait') await redis.connect();
        const pong = await redis.ping();
        if (pong !== 'PONG') throw new Error(`unexpected PING answer ${JSON.stringify(pong)}`);
      })(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
