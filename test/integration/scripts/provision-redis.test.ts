/**
 * scripts/provision-redis.mjs with its real steps, as far as this machine allows without
 * installing or starting containers: the container probe gives up fast, and with a redis-server
 * on PATH the whole order ends in the product's private server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ProvisionedRedis,
  probeContainerRuntime,
  provisionRedis,
} from '../../../scripts/provision-redis.mjs';
import { createLogger } from '../../../src/lib/logger.js';
import { pingRedis } from '../../../src/lib/redis/create-redis.js';
import { ensureRedis, findExecutable } from '../../../src/lib/redis/redis-server.js';

const logger = createLogger({ level: 'silent' });
const started: ProvisionedRedis[] = [];

afterEach(async () => {
  for (const r of started.splice(0)) await r.stop();
});

describe('probeContainerRuntime', () => {
  it('answers quickly when nothing listens', async () => {
    const t0 = Date.now();
    const answer = await probeContainerRuntime({ DOCKER_HOST: 'tcp://127.0.0.1:1' });
    expect(answer).toBe(false);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('answers false for a DOCKER_HOST it cannot reach', async () => {
    expect(await probeContainerRuntime({ DOCKER_HOST: 'unix:///nonexistent/docker.sock' })).toBe(false);
    expect(await probeContainerRuntime({ DOCKER_HOST: 'ssh://user@host' })).toBe(false);
  });
});

describe.skipIf(!findExecutable('redis-server'))('provisionRedis with the product ensureRedis', () => {
  it('starts a private redis-server from PATH, that answers and stops', async () => {
    const env = { PATH: process.env.PATH ?? '' }; // no REDIS_URL
    const r = await provisionRedis({ ensureRedis, logger, env });
    started.push(r);
    expect(r.source).toBe('local');
    expect(r.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(await pingRedis(r.url)).toBeUndefined();
    await started.splice(0)[0]?.stop();
    expect(await pingRedis(r.url, 500)).toBeTypeOf('string');
  });

  it('uses REDIS_URL as it is', async () => {
    const first = await provisionRedis({ ensureRedis, logger, env: { PATH: process.env.PATH ?? '' } });
    started.push(first);
    const r = await provisionRedis({ ensureRedis, logger, env: { REDIS_URL: first.url } });
    expect(r).toMatchObject({ url: first.url, source: 'env' });
    await r.stop(); // nothing of ours to stop
    expect(await pingRedis(first.url)).toBeUndefined();
  });
});
