/**
 * The Redis of a process: REDIS_URL, or for `run` a private redis-server with append-only
 * persistence in the data folder (private-redis.ts: `status`, `report` and the other commands
 * find it there, and open the folder themselves once `run` has stopped). Opens the
 * connection of the process's own commands and the one BullMQ needs; `close()` undoes it all.
 */
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../lib/redis.js';
import type { DaemonConfig } from './daemon-config.js';
import { startPrivateRedis } from './private-redis.js';

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
    if (!url) {
      // Holds <dataDir>/redis.lock while it serves the folder; `status`, `report` and the other
      // commands on this machine find it through <dataDir>/redis-url, and open the folder
      // themselves once it has stopped (private-redis.ts).
      const local = await startPrivateRedis({ dataDir: config.dataDir, logger });
      url = local.url;
      undo.push(() => local.stop());
      logger.info(
        { source: 'local', dataDir: join(config.dataDir, 'redis') },
        'REDIS_URL is not set: started a private Redis',
      );
    }
    const redis = createRedis(url, { logger, name: role });
    undo.push(() => closeRedis(redis));
    await redis.ping();
    const bullConnection = createRedis(url, { logger, name: `${role}-bullmq`, forBullmq: true });
    undo.push(() => closeRedis(bullConnection));
    return { url, redis, bullConnection, close };
  } catch (err) {
    await close();
    throw err;
  }
}
