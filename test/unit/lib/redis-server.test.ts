/**
 * The product's order (what `run` and `demo` do): REDIS_URL, else a private redis-server from PATH,
 * else one sentence saying how to get Redis. Nothing is installed and no container is started; the
 * tests', demo script's and benchmarks' fallbacks are in test/unit/scripts/provision-redis.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/logger.js';
import {
  type EnsureRedisDeps,
  ensureRedis,
  type LocalRedisOptions,
  NO_REDIS_MESSAGE,
} from '../../../src/lib/redis/redis-server.js';

const logger = createLogger({ level: 'silent' });

/** Fake steps that record what ensureRedis tried, in order. */
function fakeDeps(over: Partial<EnsureRedisDeps> & { executables?: string[] } = {}) {
  const calls: string[] = [];
  const started: LocalRedisOptions[] = [];
  const executables = new Set(over.executables ?? []);
  const deps: EnsureRedisDeps = {
    ping: async (url) => {
      calls.push(`ping ${url}`);
      return undefined;
    },
    findExecutable: (name) => {
      calls.push(`find ${name}`);
      return executables.has(name) ? `/bin/${name}` : undefined;
    },
    startLocal: async (binary, options) => {
      calls.push(`local ${binary}`);
      started.push(options);
      return { url: 'redis://127.0.0.1:1', stop: async () => {} };
    },
    ...over,
  };
  return { deps, calls, started };
}

describe('ensureRedis', () => {
  it('uses REDIS_URL when it answers, and starts nothing', async () => {
    const { deps, calls } = fakeDeps({ executables: ['redis-server'] });
    const r = await ensureRedis({ logger, env: { REDIS_URL: 'redis://h:6379' }, deps });
    expect(r).toMatchObject({ url: 'redis://h:6379', source: 'env' });
    expect(calls).toEqual(['ping redis://h:6379']);
  });

  it('refuses a REDIS_URL that does not answer, naming it without its password', async () => {
    const { deps, calls } = fakeDeps({
      ping: async () => 'connect ECONNREFUSED',
      executables: ['redis-server'],
    });
    const env = { REDIS_URL: 'redis://user:hunter2@h:6379' };
    const err = await ensureRedis({ logger, env, deps }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('REDIS_URL (redis://user:***@h:6379) does not answer PING');
    expect((err as Error).message).not.toContain('hunter2');
    expect(calls).toEqual([]); // no fallback hides a wrong URL
  });

  it('starts a private redis-server from PATH, with dataDir and appendOnly', async () => {
    const { deps, calls, started } = fakeDeps({ executables: ['redis-server'] });
    const r = await ensureRedis({ logger, env: {}, deps, dataDir: '/data/redis', appendOnly: true });
    expect(r).toMatchObject({ url: 'redis://127.0.0.1:1', source: 'local' });
    expect(calls).toEqual(['find redis-server', 'local /bin/redis-server']);
    expect(started).toEqual([{ logger, dataDir: '/data/redis', appendOnly: true }]);
  });

  it('otherwise says in one sentence how to get Redis, and tries nothing else', async () => {
    const { deps, calls } = fakeDeps({ executables: ['apt-get', 'docker'] });
    const err = await ensureRedis({ logger, env: {}, deps }).catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: 'FLEET_ERR_REDIS_UNAVAILABLE', message: NO_REDIS_MESSAGE });
    expect(calls).toEqual(['find redis-server']);
    expect(NO_REDIS_MESSAGE).toMatch(/install redis-server .* or set REDIS_URL/);
    expect(NO_REDIS_MESSAGE.replaceAll('e.g.', '').match(/[.!?](\s|$)/g)).toHaveLength(1);
  });
});
