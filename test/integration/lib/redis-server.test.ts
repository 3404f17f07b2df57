import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/lib/logger.js';
import { closeRedis, createRedis, pingRedis } from '../../../src/lib/redis/create-redis.js';
import { type EnsuredRedis, findExecutable, startLocalRedis } from '../../../src/lib/redis/redis-server.js';

const logger = createLogger({ level: 'silent' });
const binary = findExecutable('redis-server');
const started: EnsuredRedis[] = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const r of started.splice(0)) await r.stop();
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

describe.skipIf(!binary)('startLocalRedis', () => {
  it('starts a private server on loopback and stops it', async () => {
    const r = { ...(await startLocalRedis(binary as string, { logger })), source: 'local' as const };
    started.push(r);
    expect(r.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(await pingRedis(r.url)).toBeUndefined();
    await r.stop();
    started.length = 0;
    expect(await pingRedis(r.url, 500)).toBeTypeOf('string');
  });

  it('keeps its data in dataDir with appendonly', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'fleet-redis-test-'));
    dirs.push(dataDir);
    const r = {
      ...(await startLocalRedis(binary as string, { logger, dataDir, appendOnly: true })),
      source: 'local' as const,
    };
    started.push(r);
    const c = createRedis(r.url);
    await c.set('k', 'v');
    await closeRedis(c);
    await r.stop();
    started.length = 0;
    const files = await readdir(dataDir, { recursive: true });
    expect(files.some((f) => f.includes('appendonly'))).toBe(true);
  });
});
