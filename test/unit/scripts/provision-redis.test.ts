/**
 * The order of the tests, the demo script and the benchmarks (scripts/provision-redis.mjs):
 * REDIS_URL; a redis-server on PATH; a container when a runtime answers; as root with apt-get,
 * Debian's redis-server; otherwise one sentence saying how to get Redis. Every step is a fake
 * here: this machine has a redis-server, and a test must neither install packages nor start
 * containers.
 */
import { describe, expect, it } from 'vitest';
import {
  type EnsureRedisFunction,
  NO_REDIS_MESSAGE,
  type PrepareRedisDeps,
  prepareRedis,
  provisionRedis,
} from '../../../scripts/provision-redis.mjs';
import { captureLogger } from '../../support/capture-logger.js';

const PATH = '/usr/local/bin:/bin';

/** Fake steps over a fake file system of executables, recording what was tried, in order. */
function fakeDeps(
  over: Partial<PrepareRedisDeps> & { files?: string[]; root?: boolean; runtime?: boolean } = {},
) {
  const calls: string[] = [];
  const files = new Set(over.files ?? []);
  const deps: PrepareRedisDeps = {
    findExecutable: (name, env) =>
      (env.PATH ?? '')
        .split(':')
        .map((dir) => `${dir}/${name}`)
        .find((f) => files.has(f)),
    probeContainerRuntime: async () => {
      calls.push('probe');
      return over.runtime ?? false;
    },
    startContainer: async ({ appendOnly }) => {
      calls.push(`container appendOnly=${appendOnly}`);
      return {
        url: 'redis://localhost:32768',
        stop: async () => void calls.push('stop container'),
      };
    },
    isRoot: () => over.root ?? false,
    aptInstall: async () => {
      calls.push('apt');
      files.add('/usr/bin/redis-server');
    },
    ...over,
  };
  return { deps, calls };
}

/** A fake of the product's ensureRedis that records the environment it was given. */
function fakeEnsureRedis(calls: string[]) {
  const ensureRedis: EnsureRedisFunction<ReturnType<typeof captureLogger>['logger']> = async (options) => {
    calls.push(
      `ensureRedis REDIS_URL=${options.env.REDIS_URL ?? ''} PATH=${options.env.PATH ?? ''} ` +
        `dataDir=${options.dataDir ?? ''} appendOnly=${options.appendOnly}`,
    );
    return {
      url: options.env.REDIS_URL ?? 'redis://127.0.0.1:1',
      stop: async () => void calls.push('stop ensured'),
    };
  };
  return ensureRedis;
}

describe('prepareRedis', () => {
  it('leaves REDIS_URL to the product, probing nothing', async () => {
    const { deps, calls } = fakeDeps({ files: ['/bin/apt-get'], root: true, runtime: true });
    const env = { REDIS_URL: 'redis://h:6379', PATH };
    const r = await prepareRedis({ env, deps });
    expect(r).toMatchObject({ source: 'env', env });
    expect(calls).toEqual([]);
  });

  it('leaves a redis-server on PATH to the product, before any container', async () => {
    const { deps, calls } = fakeDeps({ files: ['/bin/redis-server'], runtime: true });
    const r = await prepareRedis({ env: { PATH }, deps });
    expect(r).toMatchObject({ source: 'local', env: { PATH } });
    expect(calls).toEqual([]);
  });

  it('starts a container when a runtime answers, and hands its URL on in REDIS_URL', async () => {
    const { deps, calls } = fakeDeps({ files: ['/bin/apt-get'], root: true, runtime: true });
    const { logger, text } = captureLogger('info');
    const env = { PATH };
    const r = await prepareRedis({ env, deps, logger, appendOnly: true });
    expect(r).toMatchObject({ source: 'container', env: { PATH, REDIS_URL: 'redis://localhost:32768' } });
    expect(env).toEqual({ PATH }); // the caller's environment is not modified
    expect(text()).toContain('starting redis in a container');
    await r.stop();
    expect(calls).toEqual(['probe', 'container appendOnly=true', 'stop container']);
  });

  it('installs redis-server with apt-get as root when no runtime answers', async () => {
    const { deps, calls } = fakeDeps({ files: ['/usr/bin/apt-get'], root: true });
    const { logger, text } = captureLogger('info');
    const r = await prepareRedis({ env: { PATH: `/usr/bin:${PATH}` }, deps, logger });
    expect(r).toMatchObject({ source: 'apt', env: { PATH: `/usr/bin:${PATH}` } });
    expect(calls).toEqual(['probe', 'apt']);
    expect(text()).toContain('installing redis-server with apt-get');
  });

  it('puts /usr/bin on PATH when apt-get installed redis-server outside it', async () => {
    const { deps } = fakeDeps({ files: ['/bin/apt-get'], root: true });
    const r = await prepareRedis({ env: { PATH }, deps, logger: captureLogger().logger });
    expect(r).toMatchObject({ source: 'apt', env: { PATH: `/usr/bin:${PATH}` } });
    expect(deps.findExecutable('redis-server', r.env)).toBe('/usr/bin/redis-server');
  });

  it('does not install when not root, and says in one sentence how to get Redis', async () => {
    const { deps, calls } = fakeDeps({ files: ['/bin/apt-get'] });
    const err = await prepareRedis({ env: { PATH }, deps }).catch((e: Error & { code?: string }) => e);
    expect(err).toMatchObject({ code: 'FLEET_ERR_REDIS_UNAVAILABLE', message: NO_REDIS_MESSAGE });
    expect(calls).toEqual(['probe']);
    expect(NO_REDIS_MESSAGE).toMatch(/install redis-server .*container runtime.* or set REDIS_URL/);
    expect(NO_REDIS_MESSAGE.replaceAll('e.g.', '').match(/[.!?](\s|$)/g)).toHaveLength(1);
  });

  it('does not install without apt-get, even as root', async () => {
    const { deps, calls } = fakeDeps({ root: true });
    await expect(prepareRedis({ env: { PATH }, deps })).rejects.toThrow(NO_REDIS_MESSAGE);
    expect(calls).toEqual(['probe']);
  });

  it('says how to get Redis when apt-get left no redis-server behind', async () => {
    const { deps, calls } = fakeDeps({
      files: ['/bin/apt-get'],
      root: true,
      aptInstall: async () => void calls.push('apt'),
    });
    await expect(prepareRedis({ env: { PATH }, deps, logger: captureLogger().logger })).rejects.toThrow(
      NO_REDIS_MESSAGE,
    );
    expect(calls).toEqual(['probe', 'apt']);
  });
});

describe('provisionRedis', () => {
  const { logger } = captureLogger();

  it('hands REDIS_URL and a redis-server on PATH to the product, as they are', async () => {
    for (const [env, source] of [
      [{ REDIS_URL: 'redis://h:6379', PATH }, 'env'],
      [{ PATH }, 'local'],
    ] as const) {
      const { deps, calls } = fakeDeps({ files: ['/bin/redis-server'] });
      const ensureRedis = fakeEnsureRedis(calls);
      const r = await provisionRedis({ ensureRedis, logger, env, deps, dataDir: '/d', appendOnly: true });
      expect(r.source).toBe(source);
      expect(calls).toEqual([
        `ensureRedis REDIS_URL=${'REDIS_URL' in env ? env.REDIS_URL : ''} PATH=${PATH} dataDir=/d appendOnly=true`,
      ]);
    }
  });

  it('uses a container through the product, and stops both', async () => {
    const { deps, calls } = fakeDeps({ runtime: true });
    const r = await provisionRedis({ ensureRedis: fakeEnsureRedis(calls), logger, env: { PATH }, deps });
    expect(r).toMatchObject({ url: 'redis://localhost:32768', source: 'container' });
    await r.stop();
    expect(calls).toEqual([
      'probe',
      'container appendOnly=false',
      `ensureRedis REDIS_URL=redis://localhost:32768 PATH=${PATH} dataDir= appendOnly=false`,
      'stop ensured',
      'stop container',
    ]);
  });

  it('starts the installed redis-server through the product after apt-get', async () => {
    const { deps, calls } = fakeDeps({ files: ['/bin/apt-get'], root: true });
    const r = await provisionRedis({ ensureRedis: fakeEnsureRedis(calls), logger, env: { PATH }, deps });
    expect(r).toMatchObject({ url: 'redis://127.0.0.1:1', source: 'apt' });
    expect(calls).toEqual([
      'probe',
      'apt',
      `ensureRedis REDIS_URL= PATH=/usr/bin:${PATH} dataDir= appendOnly=false`,
    ]);
  });

  it('stops the container it started when the product cannot use it', async () => {
    const { deps, calls } = fakeDeps({ runtime: true });
    const ensureRedis: EnsureRedisFunction<typeof logger> = async () => {
      throw new Error('REDIS_URL does not answer PING');
    };
    await expect(provisionRedis({ ensureRedis, logger, env: { PATH }, deps })).rejects.toThrow(/PING/);
    expect(calls).toEqual(['probe', 'container appendOnly=false', 'stop container']);
  });
});
