import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/logger.js';
import { type EnsureRedisDeps, ensureRedis, NO_REDIS_MESSAGE } from '../../../src/lib/redis-server.js';

const logger = createLogger({ level: 'silent' });

/** Fake steps that record what ensureRedis tried, in order. */
function fakeDeps(over: Partial<EnsureRedisDeps> & { executables?: string[] } = {}) {
  const calls: string[] = [];
  const executables = new Set(over.executables ?? []);
  const deps: EnsureRedisDeps = {
    ping: async (url) => {
      calls.push(`ping ${url}`);
      return undefined;
    },
    findExecutable: (name) => (executables.has(name) ? `/bin/${name}` : undefined),
    startLocal: async (binary) => {
      calls.push(`local ${binary}`);
      return { url: 'redis://127.0.0.1:1', stop: async () => {} };
    },
    probeContainerRuntime: async () => {
      calls.push('probe');
      return false;
    },
    startContainer: async () => {
      calls.push('container');
      return { url: 'redis://127.0.0.1:2', stop: async () => {} };
    },
    isRoot: () => false,
    aptInstall: async () => {
      calls.push('apt');
      executables.add('redis-server');
    },
    ...over,
  };
  return { deps, calls };
}

describe('ensureRedis', () => {
  it('uses REDIS_URL when it answers, and starts nothing', async () => {
    const { deps, calls } = fakeDeps({ executables: ['redis-server'] });
    const r = await ensureRedis({ logger, env: { REDIS_URL: 'redis://h:6379' }, deps });
    expect(r).toMatchObject({ url: 'redis://h:6379', source: 'env' });
    expect(calls).toEqual(['ping redis://h:6379']);
  });

  it('refuses a REDIS_URL that does not answer, naming it without its password', async () => {
    const { deps } = fakeDeps({ ping: async () => 'connect ECONNREFUSED' });
    const env = { REDIS_URL: 'redis://user:hunter2@h:6379' };
    const err = await ensureRedis({ logger, env, deps }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toContain('REDIS_URL (redis://user:***@h:6379) does not answer PING');
    expect((err as Error).message).not.toContain('hunter2');
  });

  it('prefers a redis-server on PATH over a container', async () => {
    const { deps, calls } = fakeDeps({ executables: ['redis-server'] });
    const r = await ensureRedis({ logger, env: {}, deps });
    expect(r.source).toBe('local');
    expect(calls).toEqual(['local /bin/redis-server']);
  });

  it('falls back to a container when a runtime answers', async () => {
    const { deps, calls } = fakeDeps({
      probeContainerRuntime: async () => true,
    });
    const r = await ensureRedis({ logger, env: {}, deps });
    expect(r.source).toBe('container');
    expect(calls).toEqual(['container']);
  });

  it('installs with apt-get when root and nothing else works', async () => {
    const { deps, calls } = fakeDeps({ executables: ['apt-get'], isRoot: () => true });
    const r = await ensureRedis({ logger, env: {}, deps });
    expect(r.source).toBe('apt');
    expect(calls).toEqual(['probe', 'apt', 'local /bin/redis-server']);
  });

  it('does not install when not root, and says how to get Redis', async () => {
    const { deps, calls } = fakeDeps({ executables: ['apt-get'] });
    await expect(ensureRedis({ logger, env: {}, deps })).rejects.toThrow(NO_REDIS_MESSAGE);
    expect(calls).toEqual(['probe']);
  });

  it('does not install when installing is not allowed', async () => {
    const { deps, calls } = fakeDeps({ executables: ['apt-get'], isRoot: () => true });
    await expect(ensureRedis({ logger, env: {}, deps, allowInstall: false })).rejects.toThrow(/REDIS_URL/);
    expect(calls).toEqual(['probe']);
  });
});
