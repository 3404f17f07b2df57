/**
 * Redis for one test file: `useTestRedis()` registers hooks that give each test a connected
 * ioredis client and a random key prefix, and afterwards delete that prefix's keys and close
 * the client.
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, inject } from 'vitest';
import { closeRedis, createRedis, primariesOf, type Redis } from '../../src/lib/redis/create-redis.js';

export interface TestRedis {
  /** The URL of the run's Redis (from the global setup). */
  readonly url: string;
  /** A client connected for the current test. */
  readonly redis: Redis;
  /** A fresh prefix for the current test, e.g. `test:1a2b3c4d5e6f:` */
  readonly prefix: string;
}

export function testRedisUrl(): string {
  const url = inject('redisUrl') ?? process.env.REDIS_URL;
  if (!url) throw new Error('no Redis for the tests: is test/support/global-setup.ts configured?');
  return url;
}

/**
 * Deletes every key under `prefix` (keys may carry a cluster hash tag after it): SCAN with a
 * bounded number of rounds, so that a test's clean-up ends even on a busy Redis; on a Cluster,
 * on each primary (SCAN walks one node).
 */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  for (const node of primariesOf(redis)) {
    let cursor = '0';
    for (let round = 0; round < 10_000; round++) {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length) await node.del(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  }
}

export function useTestRedis(): TestRedis {
  let client: Redis | undefined;
  let prefix = '';
  beforeEach(async () => {
    prefix = `test:${randomBytes(6).toString('hex')}:`;
    client = createRedis(testRedisUrl(), { name: 'test' });
    await client.ping();
  });
  afterEach(async () => {
    const c = client;
    client = undefined;
    if (!c) return;
    await deleteKeys(c, prefix);
    await closeRedis(c);
  });
  return {
    get url() {
      return testRedisUrl();
    },
    get redis() {
      if (!client) throw new Error('the test Redis client is only available inside a test');
      return client;
    },
    get prefix() {
      return prefix;
    },
  };
}
