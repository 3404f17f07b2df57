/**
 * The Redis of a process: REDIS_URL, or for `run` a private redis-server with append-only
 * persistence in the data folder (its URL is left there for `status` and `report`). Opens the
 * connection of the process's own commands and the one BullMQ needs; `close()` undoes it all.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../lib/redis.js';
import { ensureRedis } from '../lib/redis-server.js';
import type { DaemonConfig } from './daemon-config.js';
import { privateRedisUrlFile } from './open-state.js';

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
      const ensured = await ensureRedis({ logger, dataDir: join(config.dataDir, 'redis'), appendOnly: true });
      url = ensured.url;
      undo.push(() => ensured.stop());
      // `status` and `report` on this machine find the private Redis through this file.
      const urlFile = privateRedisUrlFile(config);
      mkdirSync(config.dataDir, { recursive: true });
      writeFileSync(urlFile, `${ensured.url}\n`);
      undo.push(async () => rmSync(urlFile, { force: true }));
      logger.info(
        { source: ensured.source, dataDir: join(config.dataDir, 'redis') },
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
