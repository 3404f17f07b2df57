/**
 * The client against the simulator over HTTP: every operation, every create code, not found,
 * both authentication failures (JSON and HTML 401), and a listing parameter the service refuses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import {
  BUILDS,
  C,
  INTERN,
  LATEST,
  listCollectors,
  OPS,
  startTestSimulator,
  stopTestSimulators,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(async () => {
  await closeTestClients();
  await stopTestSimulators();
});

describe('read operations', () => {
  it('lists the builds, oldest to newest, with the latest flagged', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    const targets = await client.listTargets();
    expect(targets.map((b) => b.version)).toEqual([...BUILDS]);
    expect(targets.filter((b) => b.latest).map((b) => b.version)).toEqual([LATEST]);
  });

  it('lists one page with an explicit limit and offset, parsed into Collector records', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    const direct = await listCollectors(t, 'limit=1000');
    const page = await client.listCollectors({ offset: 1, limit: 2 });
    expect(page.map((c) => c.id)).toEqual(direct.slice(1, 3).map((c) => c.id));
    expect(page[0]).toMatchObject({ collectorType: 'Installable', alive: expect.any(Boolean) });
  });

  it('walks every page to the last (shorter than the full ones before it)', async () => {
    const t = await startTestSimulator(testFleet({ generate: { count: 230, seed: 3 } }));
    const { client, operations } = createTestClient(t.sim.baseUrl);
    const direct = await listCollectors(t, 'limit=1000');
    const seen: number[] = [];
    for await (const page of client.collectorPages({ limit: 100 })) seen.push(...page.map((c) => c.id));
    expect(seen).toEqual(direct.map((c) => c.id));
    expect(seen.length).toBeGreaterThan(200);
    // The last page is shorter than the full ones before it: no empty page is asked for.
    expect(operations.filter((o) => o.endpoint === 'list')).toHaveLength(Math.ceil(direct.length / 100));
  });

  it('walks a live listing whose Collectors leave it as their tasks start, skipping none of the rest', async () => {
    // 60 Collectors, pages of 10; after each page, tasks start for its first three: they leave
    // the listing, and every later Collector moves forward by three.
    const t = await startTestSimulator(testFleet({ generate: { count: 60, seed: 5, offlineRatio: 0 } }));
    const { client } = createTestClient(t.sim.baseUrl);
    const walk = async (tellLeft: boolean) => {
      const listed = (await listCollectors(t, 'limit=1000')).filter((c) => c.alive).map((c) => c.id);
      let started = 0;
      const seen = new Set<number>();
      for await (const page of client.collectorPages({
        limit: 10,
        ...(tellLeft ? { left: async () => ({ atMost: started, atLeast: started }) } : {}),
      })) {
        for (const c of page) seen.add(c.id);
        for (const c of page.filter((c) => c.alive && listed.includes(c.id)).slice(0, 3)) {
          const r = await client.createTask({ collectorId: c.id });
          if (r.kind === 'created') started++;
        }
      }
      return { listed, missed: listed.filter((id) => !seen.has(id)), started };
    };
    // Told how many left, the walk steps back by as many and misses nobody.
    const told = await walk(true);
    expect(told.started).toBeGreaterThan(10);
    expect(told.missed).toEqual([]);
    // Not told (the walk before this change), it skips three Collectors per page.
    const t2 = await startTestSimulator(testFleet({ generate: { count: 60, seed: 5, offlineRatio: 0 } }));
    const { client: other } = createTestClient(t2.sim.baseUrl);
    const listed = (await listCollectors(t2, 'limit=1000')).filter((c) => c.alive).map((c) => c.id);
    const seen = new Set<number>();
    for await (const page of other.collectorPages({ limit: 10 })) {
      for (const c of page) seen.add(c.id);
      for (const c of page.filter((c) => c.alive && listed.includes(c.id)).slice(0, 3))
        await other.createTask({ collectorId: c.id });
    }
    expect(listed.filter((id) => !seen.has(id)).length).toBeGreaterThan(5);
  });

  it('steps back for most of a page that left between two pages (creates go before listing pages)', async () => {
    // 60 Collectors, pages of 10; after each page, tasks start for 8 of its Collectors.
    const t = await startTestSimulator(testFleet({ generate: { count: 60, seed: 5, offlineRatio: 0 } }));
    const { client } = createTestClient(t.sim.baseUrl);
    const listed = (await listCollectors(t, 'limit=1000')).filter((c) => c.alive).map((c) => c.id);
    let started = 0;
    const seen = new Set<number>();
    for await (const page of client.collectorPages({
      limit: 10,
      left: async () => ({ atMost: started, atLeast: started }),
    })) {
      for (const c of page) seen.add(c.id);
      for (const c of page.filter((c) => c.alive && listed.includes(c.id)).slice(0, 8)) {
        const r = await client.createTask({ collectorId: c.id });
        if (r.kind === 'created') started++;
      }
    }
    expect(started).toBeGreaterThan(20);
    expect(listed.filter((id) => !seen.has(id))).toEqual([]);
  });

  it('lists for a downgrade target with toVersion', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    const page = await client.listCollectors({ toVersion: '19.100-1', limit: 50 });
    expect(page.map((c) => c.id)).toContain(C.web1);
    expect(page.map((c) => c.id)).not.toContain(C.old);
  });

  it('refuses an unknown build when listing as invalid_request with the vendor code', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    await expect(client.listCollectors({ toVersion: '1.0-0' })).rejects.toMatchObject({
      kind: 'invalid_request',
      status: 400,
      vendorCode: 'collector.version.invalid',
      requestId: expect.stringMatching(/^[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}$/),
    });
  });
});

describe('create and status', () => {
  it('creates a task and follows it to success', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    const created = await client.createTask({ collectorId: C.web1, toVersion: LATEST });
    expect(created).toMatchObject({ kind: 'created', taskId: expect.stringMatching(/^\d+$/) });
    if (created.kind !== 'created') return;
    expect(created.href).toBe(`/v1/collectors/upgrades/${created.taskId}`);
    const first = await client.getTask(created.taskId);
    expect(first).toMatchObject({ kind: 'found', task: { collectorId: C.web1, toVersion: LATEST } });
    if (first.kind !== 'found') return;
    expect(['not_started', 'pending']).toContain(first.task.state);
    t.at(first.task.requestTime, (UPGRADE_SECONDS + 120) * 1000);
    expect(await client.getTask(Number(created.taskId))).toMatchObject({
      kind: 'found',
      task: { state: 'succeeded', status: 2, message: '' },
    });
  });

  it('creates towards the latest build when no version is given', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    const created = await client.createTask({ collectorId: C.web2 });
    if (created.kind !== 'created') throw new Error(`not created: ${created.kind}`);
    expect(await client.getTask(created.taskId)).toMatchObject({ task: { toVersion: LATEST } });
  });

  it.each([
    ['collector.invalid', { collectorId: 424242 }],
    ['collector.type.invalid', { collectorId: C.hosted }],
    ['collector.not.alive', { collectorId: C.offline }],
    ['collector.version.invalid', { collectorId: C.web1, toVersion: '99.9-9' }],
  ] as const)('answers %s as a value', async (code, input) => {
    const t = await startTestSimulator();
    const { client, operations } = createTestClient(t.sim.baseUrl);
    const r = await client.createTask(input);
    expect(r).toMatchObject({ kind: code, message: expect.any(String), requestId: expect.any(String) });
    expect(operations.at(-1)?.outcome).toBe(code);
  });

  it('answers collector.in.upgrading for a second task on the same Collector', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    expect((await client.createTask({ collectorId: C.web1 })).kind).toBe('created');
    expect((await client.createTask({ collectorId: C.web1 })).kind).toBe('collector.in.upgrading');
  });

  it('answers collector.invalid for a Collector the user may not use', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl, { ...INTERN });
    expect((await client.createTask({ collectorId: C.web2 })).kind).toBe('collector.invalid');
    expect((await client.createTask({ collectorId: C.web1 })).kind).toBe('created');
  });

  it('answers not_found for an unknown or malformed task id', async () => {
    const t = await startTestSimulator();
    const { client } = createTestClient(t.sim.baseUrl);
    expect(await client.getTask('987654')).toMatchObject({ kind: 'not_found', message: expect.any(String) });
    expect(await client.getTask('not-a-number')).toMatchObject({ kind: 'not_found' });
  });
});

describe('authentication', () => {
  it('classifies a wrong key (JSON 401) without retrying and without the key in the message', async () => {
    const t = await startTestSimulator();
    const { client, attempts } = createTestClient(t.sim.baseUrl, { accessKey: 'wrong-key-123' });
    const err = await client.listTargets().catch((e: unknown) => e);
    expect(err).toMatchObject({
      kind: 'authentication',
      status: 401,
      vendorCode: 'unauthorized',
      attempts: 1,
    });
    expect(String((err as Error).message)).not.toContain('wrong-key-123');
    expect(attempts).toHaveLength(1);
  });

  it('classifies an HTML 401 page', async () => {
    const t = await startTestSimulator(testFleet({ faults: { htmlUnauthorizedRatio: 1 } }));
    const { client } = createTestClient(t.sim.baseUrl, { accessId: OPS.accessId, accessKey: 'nope' });
    await expect(client.createTask({ collectorId: C.web1 })).rejects.toMatchObject({
      kind: 'authentication',
      status: 401,
      message: 'POST collectors/upgrades answered 401: a non-JSON body (text/html)',
    });
  });
});
