/**
 * vitest globalSetup: one Redis for the whole run (REDIS_URL, a private redis-server, a
 * container, or apt-get; see scripts/provision-redis.mjs), handed to tests with `inject('redisUrl')`
 * and to child processes through REDIS_URL. Stopped at teardown.
 */
import type { TestProject } from 'vitest/node';
import { provisionRedis } from '../../scripts/provision-redis.mjs';
import { createLogger } from '../../src/lib/logger.js';
import { ensureRedis } from '../../src/lib/redis/redis-server.js';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const logger = createLogger({
    level: (process.env.LOG_LEVEL as 'info' | undefined) ?? 'warn',
    name: 'test-redis',
  });
  const redis = await provisionRedis({ ensureRedis, logger });
  project.provide('redisUrl', redis.url);
  process.env.REDIS_URL = redis.url;
  return async () => {
    await redis.stop();
  };
}
