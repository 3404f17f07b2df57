/**
 * The Redis of a process: REDIS_URL, or for `run` a private redis-server with append-only
 * persistence in the data folder (private-redis.ts: `status`, `report` and the other commands
 * find it there, and open the folder themselves once `run` has stopped). Opens the
 * connection of the process's own commands and the one BullMQ needs; `close()` undoes it all.
 * The first PING has a time limit (REDIS_START_LIMIT_MS): a Redis that accepts connections and
 * never answers fails the start with one sentence naming it, instead of hanging it.
 */
import { join } from 'node:path';
import { FleetError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import {
  answerWithin,
  closeRedis,
  createRedis,
  type Redis,
  redisAddress,
} from '../../lib/redis/create-redis.js';
import { startPrivateRedis } from '../../lib/redis/private-redis.js';
import type { DaemonConfig } from './daemon-config.js';
import { plainReason } from './open-state.js';

export interface RedisConnections {
  url: string;
  redis: Redis;
  /** For BullMQ (commands wait for Redis to come back instead of failing). */
  bullConnection: Redis;
  close(): Promise<void>;
}

export async function connectRedis(
  config: Pick<DaemonConfig, 'redisUrl' | 'dataDir'>,
  logger: Logger,
  role: string,
): Promise<RedisConnections> {
  const undo: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  };
  try {
    let url = config.redisUrl;
    let where = `Redis at ${url ? redisAddress(url) : ''} (REDIS_URL)`;
    let advice = "check that it is running and that REDIS_URL names the deployment's Redis.";
    if (!url) {
      // Holds <dataDir>/redis.lock while it serves the folder; `status`, `report` and the other
      // commands on this machine find it through <dataDir>/redis-url, and open the folder
      // themselves once it has stopped (private-redis.ts).
      const local = await startPrivateRedis({ dataDir: config.dataDir, logger });
      url = local.url;
      where = `The private Redis at ${url} (data in ${join(config.dataDir, 'redis')})`;
      advice = 'is its redis-server stopped or overloaded?';
      undo.push(() => local.stop());
      logger.info(
        { source: 'local', dataDir: join(config.dataDir, 'redis') },
        'REDIS_URL is not set: started a private Redis',
      );
    }
    const redis = createRedis(url, { logger, name: role });
    undo.push(() => closeRedis(redis));
    // The first connection error says why (ECONNREFUSED, NOAUTH ...); the failed PING only that it gave up.
    let firstError: string | undefined;
    const keepFirst = (err: Error) => {
      firstError ??= err.message;
    };
    redis.on('error', keepFirst);
    await answerWithin(redis.ping(), { where, what: 'PING', advice }).catch((err: unknown) => {
      if (err instanceof FleetError) throw err;
      const reason = plainReason(firstError ?? (err instanceof Error ? err.message : String(err)));
      throw new FleetError('FLEET_ERR_REDIS_UNAVAILABLE', `${where} does not answer (${reason}): ${advice}`, {
        cause: err,
      });
    });
    redis.off('error', keepFirst);
    const bullConnection = createRedis(url, { logger, name: `${role}-bullmq`, forBullmq: true });
    undo.push(() => closeRedis(bullConnection));
    return { url, redis, bullConnection, close };
  } catch (err) {
    await close();
    throw err;
  }
}
