/**
 * The client when things go wrong, over HTTP: the simulator's injected 5xx and dropped
 * connections, a create dropped after the service carried it out (ambiguous, then reconciled),
 * bodies the simulator never sends (HTML 500, malformed or off-schema JSON, empty 502, 429 with
 * Retry-After), silence (time-outs), and the wrong deployment's 301.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import {
  C,
  LATEST,
  OPS,
  startTestSimulator,
  stopTestSimulators,
  testFleet,
} from '../../support/simulator.js';
import {
  reply,
  startDroppingProxy,
  startMovedServer,
  startStubServer,
  stopStubServers,
} from '../../support/stub-server.js';

afterEach(async () => {
  await closeTestClients();
  await stopStubServers();
  await stopTestSimulators();
});

const retry = { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 2000, maxTotalMs: 600_000 };

describe('server errors and dropped connections (simulator faults)', () => {
  it('retries injected 500/503 until the calls succeed', async () => {
    const t = await startTestSimulator(testFleet({ faults: { errorRatio: 0.3 }, seed: 11 }));
    const { client, attempts, clock } = createTestClient(t.sim.baseUrl, { retry });
    for (let i = 0; i < 15; i++) expect(await client.listTargets()).toHaveLength(6);
    const stats = await t.stats();
    const failed = attempts.filter((a) => a.outcome === 'server');
    expect(failed.length).toBeGreaterThan(0);
    expect(failed.every((a) => a.statusCode === 500 || a.statusCode === 503)).toBe(true);
    expect(stats.requests.total).toBe(15 + failed.length);
    expect(clock.sleeps).toHaveLength(failed.length);
  });

  it('gives up after maxAttempts with a server error', async () => {
    const t = await startTestSimulator(testFleet({ faults: { errorRatio: 1 } }));
    const { client } = createTestClient(t.sim.baseUrl, { retry: { ...retry, maxAttempts: 3 } });
    await expect(client.listTargets()).rejects.toMatchObject({ kind: 'server', attempts: 3 });
    expect((await t.stats()).requests.total).toBe(3);
  });

  it('retries GETs whose connection was dropped', async () => {
    const t = await startTestSimulator(testFleet({ faults: { dropRatio: 0.4 }, seed: 5 }));
    const { client, attempts } = createTestClient(t.sim.baseUrl, { retry });
    for (let i = 0; i < 10; i++) await client.listCollectors({ limit: 5 });
    const stats = await t.stats();
    expect(stats.dropped).toBeGreaterThan(0);
    expect(attempts.filter((a) => a.outcome === 'network')).toHaveLength(stats.dropped as number);
  });

  it('reports a create dropped after it was carried out as ambiguous, without repeating it', async () => {
    const t = await startTestSimulator(testFleet({ faults: { dropRatio: 1 } }));
    const { client } = createTestClient(t.sim.baseUrl, { retry });
    const r = await client.createTask({ collectorId: C.web1 });
    expect(r).toMatchObject({ kind: 'ambiguous', reason: 'network', attempts: 1 });
    const stats = await t.stats();
    expect(stats.requests.byEndpoint.create).toBe(1);
    expect(stats.tasksCreated).toBe(1);
  });

  it('lets the orchestrator reconcile an ambiguous create: a later try answers collector.in.upgrading', async () => {
    const t = await startTestSimulator();
    const proxy = await startDroppingProxy(t.sim.url, (req, n) => req.method === 'POST' && n === 1);
    const { client } = createTestClient(proxy.baseUrl, { retry });
    expect((await client.createTask({ collectorId: C.web1, toVersion: LATEST })).kind).toBe('ambiguous');
    expect((await client.createTask({ collectorId: C.web1, toVersion: LATEST })).kind).toBe(
      'collector.in.upgrading',
    );
    expect((await t.simCollector(C.web1)).tasks).toHaveLength(1);
  });
});

describe('bodies the simulator never sends (stub server)', () => {
  it('retries an HTML 500 and reports it as a server error', async () => {
    const stub = await startStubServer((_req, res) => reply(res, 500, '<html><body>Oops</body></html>'));
    const { client } = createTestClient(stub.baseUrl, { retry: { ...retry, maxAttempts: 2 } });
    await expect(client.listTargets()).rejects.toMatchObject({
      kind: 'server',
      status: 500,
      attempts: 2,
      message: 'GET collectors/upgrades/targets answered 500: a non-JSON body (text/html)',
    });
    expect(stub.requests).toHaveLength(2);
  });

  it.each([
    [403, 'forbidden', 'permission'],
    [405, 'method.unsupported', 'invalid_request'],
    [415, 'contenttype.invalid', 'invalid_request'],
  ])('classifies %i %s as %s, without retrying', async (status, code, kind) => {
    const stub = await startStubServer((_req, res) =>
      reply(res, status, { status, id: 'ABCDE-FGHIJ-KLMNO', code, message: 'no' }),
    );
    const { client } = createTestClient(stub.baseUrl, { retry });
    await expect(client.listTargets()).rejects.toMatchObject({ kind, status, vendorCode: code, attempts: 1 });
    expect(stub.requests).toHaveLength(1);
  });

  it('retries an empty 502 and then succeeds', async () => {
    const stub = await startStubServer((_req, res, n) => {
      if (n === 1) {
        res.writeHead(502);
        res.end();
      } else reply(res, 200, { targets: [{ version: '1.2-3', latest: true }] });
    });
    const { client, attempts } = createTestClient(stub.baseUrl, { retry });
    expect(await client.listTargets()).toEqual([{ version: '1.2-3', latest: true }]);
    expect(attempts.map((a) => a.statusCode)).toEqual([502, 200]);
  });

  it('reports malformed JSON in a 200 as a protocol error, without retrying', async () => {
    const stub = await startStubServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"targets": [');
    });
    const { client } = createTestClient(stub.baseUrl, { retry });
    await expect(client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: 'GET collectors/upgrades/targets answered 200: a non-JSON body (application/json)',
    });
    expect(stub.requests).toHaveLength(1);
  });

  it('reports a body off the schema as a protocol error naming the field', async () => {
    const stub = await startStubServer((_req, res) =>
      reply(res, 200, { collectors: [{ id: 1, name: 'a', collectorType: 'Installable', alive: true }] }),
    );
    const { client } = createTestClient(stub.baseUrl, { retry });
    await expect(client.listCollectors()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/does not match the interface: collectors\[0\]\.collectorVersion: /),
    });
  });

  it('reports a task status off the interface (status 9) as a protocol error', async () => {
    const stub = await startStubServer((_req, res) =>
      reply(res, 200, { upgrade: { id: 1, collectorId: 2, toVersion: '1.2-3', requestTime: 1, status: 9 } }),
    );
    const { client } = createTestClient(stub.baseUrl, { retry });
    await expect(client.getTask(1)).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/upgrade\.status: unknown task status/),
    });
  });

  it('honours Retry-After on a 429 in the newer error shape', async () => {
    const stub = await startStubServer((_req, res, n) => {
      if (n === 1)
        reply(
          res,
          429,
          { id: 'RATE1-RATE1-RATE1', errors: [{ code: 'rate.limit.exceeded', message: 'API rate limit.' }] },
          { 'retry-after': '2' },
        );
      else reply(res, 200, { targets: [] });
    });
    const { client, clock, operations } = createTestClient(stub.baseUrl, { retry });
    expect(await client.listTargets()).toEqual([]);
    expect(clock.sleeps).toEqual([2000]);
    expect(operations[0]).toMatchObject({ rateLimitedCount: 1, retries: 1 });
  });

  it('times out a silent service: a GET is retried, a create is ambiguous', async () => {
    const stub = await startStubServer(() => {
      // never answers
    });
    const { client } = createTestClient(stub.baseUrl, {
      retry: { ...retry, maxAttempts: 2 },
      timeoutMs: 150,
    });
    await expect(client.listTargets()).rejects.toMatchObject({ kind: 'timeout', attempts: 2 });
    expect(await client.createTask({ collectorId: 1 })).toMatchObject({
      kind: 'ambiguous',
      reason: 'timeout',
    });
    expect(stub.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
  });

  it('retries a refused connection, then reports a network error', async () => {
    const stub = await startStubServer(() => {});
    const url = stub.baseUrl;
    await stub.close();
    const { client } = createTestClient(url, { retry: { ...retry, maxAttempts: 2 } });
    await expect(client.listTargets()).rejects.toMatchObject({ kind: 'network', attempts: 2 });
    // A create that never left can be retried safely: it is not ambiguous.
    await expect(client.createTask({ collectorId: 1 })).rejects.toMatchObject({
      kind: 'network',
      attempts: 2,
    });
  });
});

describe('deployment redirect', () => {
  it('follows 301 moved to the simulator once, with credentials, and remembers it', async () => {
    const t = await startTestSimulator();
    const wrong = await startMovedServer(t.sim.baseUrl);
    const { client, log } = createTestClient(wrong.baseUrl, { retry });
    expect(await client.listTargets()).toHaveLength(6);
    expect((await client.createTask({ collectorId: C.web1 })).kind).toBe('created');
    await client.listCollectors({ limit: 10 });
    expect(wrong.requests).toHaveLength(1);
    expect(client.baseUrl()).toBe(t.sim.baseUrl);
    expect((await t.stats()).requests.byStatus['401']).toBeUndefined();
    const lines = log.lines().filter((l) => String(l.msg).startsWith('api base URL moved'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ from: wrong.baseUrl, to: t.sim.baseUrl, code: 'moved' });
    expect(log.text()).not.toContain(OPS.accessKey);
  });
});
