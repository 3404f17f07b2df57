/**
 * The client's defences over real HTTP on loopback: a 301 to another host is refused before
 * anything (above all the Authorization header) is sent there; a hostile Retry-After cannot
 * pause the shared Redis budget for more than 60 s of service time; answer bodies are read only
 * up to the cap; a listing that ignores `offset` is stopped after a few requests.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createRedisRequestBudget } from '../../../src/api/redis-request-budget.js';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import { useTestRedis } from '../../support/redis.js';
import {
  reply,
  startOffsetIgnoringServer,
  startStubServer,
  stopStubServers,
} from '../../support/stub-server.js';

const ctx = useTestRedis();
afterEach(async () => {
  await closeTestClients();
  await stopStubServers();
});

const retry = { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 2000, maxTotalMs: 600_000 };

describe('redirect to another host', () => {
  it('is refused, naming the host, and that host receives nothing', async () => {
    const other = await startStubServer((_req, res) => reply(res, 200, { targets: [] }), {
      host: '127.0.0.2',
    });
    const wrong = await startStubServer((req, res) =>
      reply(
        res,
        301,
        { status: 301, id: 'M0VED-M0VED-M0VED', code: 'moved', message: 'elsewhere' },
        { location: `${other.url}${req.url}` },
      ),
    );
    const { client, log } = createTestClient(wrong.baseUrl, { retry });
    await expect(client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      status: 301,
      message: expect.stringContaining('127.0.0.2'),
    });
    expect(other.requests).toHaveLength(0);
    expect(client.baseUrl()).toBe(wrong.baseUrl);
    expect(log.text()).not.toContain('authorization');
  });
});

describe('hostile Retry-After and the shared Redis budget', () => {
  it('pauses every process at most 60 s of service time, and the call goes on', async () => {
    const stub = await startStubServer((_req, res, n) => {
      if (n === 1)
        reply(
          res,
          429,
          { id: 'RATE1-RATE1-RATE1', errors: [{ code: 'rate.limit.exceeded', message: 'slow' }] },
          { 'retry-after': '999999' },
        );
      else reply(res, 200, { targets: [] });
    });
    // At time scale 1000, 60 s of service time is 60 ms of real time.
    const budget = createRedisRequestBudget({
      redis: ctx.redis,
      accessId: 'ops',
      keyPrefix: ctx.prefix,
      perSecond: 4,
      concurrent: 10,
      timeScale: 1000,
      maxWaitMs: 5_000,
    });
    const { client, clock, log } = createTestClient(stub.baseUrl, { retry, budget });
    const t0 = Date.now();
    expect(await client.listTargets()).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(clock.sleeps).toEqual([60_000]);
    const [key] = await ctx.redis.keys(`${ctx.prefix}api-budget:*aimd`);
    const pausedUntil = Number(await ctx.redis.hget(key as string, 'pausedUntil'));
    const [seconds, micros] = await ctx.redis.time();
    const redisNow = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    expect(pausedUntil - redisNow).toBeLessThanOrEqual(60);
    expect(log.lines().filter((l) => l.msg === 'api Retry-After capped')).toHaveLength(1);
  });
});

describe('answer size', () => {
  it('refuses a 200 body larger than 8 MiB with a protocol error, reading no more', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    let written = 0;
    const stub = await startStubServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"targets":[],"pad":"');
      // 64 MiB on offer; the client should stop after 8 and close the connection.
      for (let i = 0; i < 64 && !res.destroyed; i++) {
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r).once('close', r));
        written++;
      }
      res.end('"}');
    });
    const { client } = createTestClient(stub.baseUrl, { retry });
    await expect(client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      status: 200,
      attempts: 1,
      message: expect.stringMatching(/larger than 8 MiB/),
    });
    expect(stub.requests).toHaveLength(1);
    expect(written).toBeLessThan(40);
  });

  it('still retries a huge 503 (read up to the cap) and then succeeds', async () => {
    const stub = await startStubServer((_req, res, n) => {
      if (n === 1) {
        res.writeHead(503, { 'content-type': 'text/html' });
        res.end(`<html>${'x'.repeat(10 * 1024 * 1024)}</html>`);
      } else reply(res, 200, { targets: [{ version: '1.2-3', latest: true }] });
    });
    const { client, attempts } = createTestClient(stub.baseUrl, { retry });
    expect(await client.listTargets()).toHaveLength(1);
    expect(attempts.map((a) => a.statusCode)).toEqual([503, 200]);
  });
});

describe('a listing that ignores offset', () => {
  it('is stopped after a few requests with a protocol error', async () => {
    const stub = await startOffsetIgnoringServer([11, 12, 13]);
    const { client } = createTestClient(stub.baseUrl, { retry });
    let pages = 0;
    let error: unknown;
    try {
      for await (const _page of client.collectorPages({ limit: 3 })) if (++pages > 50) break;
    } catch (err) {
      error = err;
    }
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/ignores offset/) });
    expect(stub.requests.length).toBeLessThanOrEqual(3);
  });
});
