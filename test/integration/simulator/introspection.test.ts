/**
 * Introspection for tests, demos and benchmarks (no auth, loopback only): GET /_sim/stats,
 * GET /_sim/requests, GET /_sim/collectors, PATCH /_sim/collectors/:id.
 */
import { networkInterfaces } from 'node:os';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  basicAuth,
  C,
  expectLegacyError,
  HEARTBEAT_SECONDS,
  ISSUE_SECONDS,
  LATEST,
  listCollectors,
  OPS,
  parse,
  SimCollectorRecord,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  TIMEOUT_SECONDS,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const DONE_MS = (ISSUE_SECONDS + HEARTBEAT_SECONDS + UPGRADE_SECONDS) * 1000 + 1;

function patch(t: TestSimulator, id: number | string, body: unknown) {
  return t.raw('PATCH', `/_sim/collectors/${id}`, {
    body,
    headers: { 'content-type': 'application/json', accept: 'application/json' },
  });
}

describe('GET /_sim/stats', () => {
  it('a fresh simulator: zero counts and now = the simulated now', async () => {
    const t = await startTestSimulator();
    const stats = await t.stats();
    expect(stats.now).toBe(t.clock.now());
    expect(stats.requests.byEndpoint).toMatchObject({ list: 0, targets: 0, create: 0, status: 0 });
    expect(stats).toMatchObject({
      tasksCreated: 0,
      tasksByOutcome: { succeeded: 0, failed: 0, timedOut: 0 },
      maxConcurrentTasks: 0,
      rateLimited: 0,
    });
    expect(Object.values(stats.rejected).every((n) => n === 0)).toBe(true);
  });

  it('counts requests in total, by endpoint and by status', async () => {
    const t = await startTestSimulator();
    await t.api('GET', 'collectors/upgrades/collectors');
    await t.api('GET', 'collectors/upgrades/collectors?limit=1');
    await t.api('GET', 'collectors/upgrades/targets');
    const id = await t.createTask(C.web1);
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } });
    await t.task(id);
    await t.task(id);
    await t.api('GET', 'collectors/upgrades/987654');
    const stats = await t.stats();
    expect(stats.requests.byEndpoint).toMatchObject({ list: 2, targets: 1, create: 2, status: 3 });
    expect(stats.requests.byStatus).toMatchObject({ '200': 5, '202': 1, '400': 1, '404': 1 });
    expect(stats.requests.total).toBeGreaterThanOrEqual(8);
    // The introspection calls themselves (at most this one) may or may not be counted.
    expect(stats.requests.total).toBeLessThanOrEqual(9);
  });

  it('GET /_sim/requests logs each answered request: when, endpoint, status, and its subject', async () => {
    const t = await startTestSimulator();
    await t.api('GET', 'collectors/upgrades/collectors?toVersion=19.470-4&limit=5');
    t.clock.advance(2_000);
    const id = await t.createTask(C.web1);
    t.clock.advance(3_000);
    await t.task(id);
    await t.api('GET', 'collectors/upgrades/987654');
    const log = (await (await fetch(`${t.sim.url}/_sim/requests`)).json()) as {
      dropped: number;
      requests: { at: number; endpoint: string; status: number; subject?: string }[];
    };
    const start = log.requests[0]?.at as number;
    expect(log.dropped).toBe(0);
    expect(log.requests.map((r) => [r.at - start, r.endpoint, r.status, r.subject])).toEqual([
      [0, 'list', 200, '19.470-4'],
      [2_000, 'create', 202, undefined],
      [5_000, 'status', 200, String(id)],
      [5_000, 'status', 404, '987654'],
    ]);
    // `since` keeps the later ones; a limit out of bounds is refused with a clear error.
    const later = (await (await fetch(`${t.sim.url}/_sim/requests?since=${start + 1}`)).json()) as {
      requests: unknown[];
    };
    expect(later.requests).toHaveLength(3);
    const bad = await fetch(`${t.sim.url}/_sim/requests?limit=0`);
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/limit must be a whole number from 1 to 10000/);
  });

  it('tasksCreated and tasksByOutcome follow the tasks; now moves with the clock', async () => {
    const t = await startTestSimulator();
    await t.createTask(C.web1);
    await t.createTask(C.failing);
    await t.createTask(C.stuck);
    t.clock.advance(DONE_MS);
    let stats = await t.stats();
    expect(stats.now).toBe(t.clock.now());
    expect(stats.tasksCreated).toBe(3);
    expect(stats.tasksByOutcome).toMatchObject({ succeeded: 1, failed: 1, timedOut: 0 });
    t.clock.advance(TIMEOUT_SECONDS * 1000);
    stats = await t.stats();
    expect(stats.tasksByOutcome).toMatchObject({ succeeded: 1, failed: 1, timedOut: 1 });
  });

  it('maxConcurrentTasks is the most unfinished tasks at any instant, not the total', async () => {
    const t = await startTestSimulator();
    await t.createTask(C.web1);
    await t.createTask(C.web2);
    t.clock.advance(DONE_MS);
    await t.createTask(C.old);
    await t.createTask(C.failing);
    await t.createTask(C.upToDate, '19.400-5');
    t.clock.advance(DONE_MS);
    await t.createTask(C.web1, '19.300-7');
    const stats = await t.stats();
    expect(stats.tasksCreated).toBe(6);
    // C.old goes in increments and is still running when web1 gets its second task: 3, then 2.
    expect(stats.maxConcurrentTasks).toBe(3);
  });

  it('rejected counts refusals by code, rateLimited counts 429s', async () => {
    const t = await startTestSimulator(testFleet({ faults: { rateLimit: { perSecond: 3, concurrent: 0 } } }));
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } });
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.hosted } });
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1, toVersion: '1.0-0' } });
    await t.api('GET', 'collectors/upgrades/targets');
    await t.api('GET', 'collectors/upgrades/targets');
    const stats = await t.stats();
    expect(stats.rejected).toMatchObject({
      'collector.not.alive': 1,
      'collector.type.invalid': 1,
      'collector.version.invalid': 1,
    });
    expect(stats.rateLimited).toBe(2);
  });

  it('needs no credentials and no Content-Type', async () => {
    const t = await startTestSimulator();
    const res = await t.raw('GET', '/_sim/stats');
    expect(res.status, res.text).toBe(200);
  });
});

describe('GET /_sim/collectors', () => {
  it('every Collector, Hosted ones too, with its build, alive flag and (empty) task history', async () => {
    const t = await startTestSimulator();
    const all = await t.simCollectors();
    expect(all.map((c) => c.id).sort((a, b) => a - b)).toEqual([101, 102, 103, 104, 105, 106, 107, 900]);
    expect(all.find((c) => c.id === C.web1)).toMatchObject({
      name: 'web-1',
      type: 'Installable',
      version: '19.400-5',
      alive: true,
      tasks: [],
    });
    expect(all.find((c) => c.id === C.hosted)).toMatchObject({ type: 'Hosted', name: 'hosted-1' });
    expect(all.find((c) => c.id === C.offline)?.alive).toBe(false);
  });

  it('generated Collectors are there too', async () => {
    const t = await startTestSimulator(testFleet({ generate: { count: 120, seed: 9, hostedRatio: 0.1 } }));
    const all = await t.simCollectors();
    expect(all).toHaveLength(128);
    expect(all.some((c) => c.type === 'Hosted' && c.id !== C.hosted)).toBe(true);
  });

  it('the task history holds every task of the Collector with id, toVersion, status, message, requestTime', async () => {
    const t = await startTestSimulator();
    const first = await t.createTask(C.web1, '19.450-12');
    const { requestTime } = await t.task(first);
    t.clock.advance(DONE_MS);
    const second = await t.createTask(C.web1, '19.300-7');
    const { tasks } = await t.simCollector(C.web1);
    expect(tasks.map((x) => String(x.id))).toEqual([first, second]);
    expect(tasks[0]).toMatchObject({ toVersion: '19.450-12', status: 2, message: '', requestTime });
    expect(tasks[1]).toMatchObject({ toVersion: '19.300-7', status: 0, message: '' });
  });

  it('each change of alive and each refused create, with its time: the truth a test judges not_alive by', async () => {
    const t = await startTestSimulator();
    expect(await t.simCollector(C.web1)).toMatchObject({ aliveChanges: [], refusals: [] });
    const off = t.clock.now();
    expect((await patch(t, C.web1, { alive: false })).status).toBe(200);
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
    t.clock.advance(60_000);
    expect((await patch(t, C.web1, { alive: true })).status).toBe(200);
    await t.createTask(C.web1);
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
    expect(await t.simCollector(C.web1)).toMatchObject({
      aliveChanges: [
        { at: off, alive: false },
        { at: off + 60_000, alive: true },
      ],
      refusals: [
        { at: off, code: 'collector.not.alive' },
        { at: off + 60_000, code: 'collector.in.upgrading' },
      ],
    });
    // A Collector that is not the caller's (or does not exist) has nothing recorded.
    expect((await t.simCollector(C.web2)).refusals).toEqual([]);
  });

  it('keeps the last 1,000 alive changes of a Collector: a long rehearsal does not grow without bound', async () => {
    const t = await startTestSimulator();
    const start = t.clock.now();
    for (let i = 0; i < 1010; i++) {
      t.clock.advance(1000);
      expect((await patch(t, C.web1, { alive: i % 2 === 1 })).status).toBe(200);
    }
    const changes = (await t.simCollector(C.web1)).aliveChanges as { at: number; alive: boolean }[];
    expect(changes).toHaveLength(1000);
    // The newest kept, the oldest ten dropped (the eleventh change took it offline).
    expect(changes[0]).toEqual({ at: start + 11_000, alive: false });
    expect(changes[999]).toEqual({ at: start + 1_010_000, alive: true });
  });

  it('needs no credentials', async () => {
    const t = await startTestSimulator();
    const res = await t.raw('GET', '/_sim/collectors');
    expect(res.status, res.text).toBe(200);
  });
});

describe('PATCH /_sim/collectors/:id', () => {
  it('{alive: false} → 200 with the updated record; the Collector is then not alive everywhere', async () => {
    const t = await startTestSimulator();
    const res = await patch(t, C.web1, { alive: false });
    expect(res.status, res.text).toBe(200);
    expect(parse(SimCollectorRecord, res.json)).toMatchObject({
      id: C.web1,
      alive: false,
      version: '19.400-5',
    });
    expect((await t.simCollector(C.web1)).alive).toBe(false);
    expect((await listCollectors(t)).find((c) => c.id === C.web1)?.alive).toBe(false);
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }),
      400,
      'collector.not.alive',
    );
  });

  it('{outcome: "fail"} makes the next task fail; {outcome: "succeed"} makes it succeed again', async () => {
    const t = await startTestSimulator();
    const res = await patch(t, C.web1, { outcome: 'fail' });
    expect(res.status, res.text).toBe(200);
    const failing = await t.createTask(C.web1);
    t.clock.advance(DONE_MS);
    expect((await t.task(failing)).status).toBe(3);
    expect((await t.simCollector(C.web1)).version).toBe('19.400-5');
    expect((await patch(t, C.web1, { outcome: 'succeed' })).status).toBe(200);
    const ok = await t.createTask(C.web1);
    t.clock.advance(DONE_MS);
    expect((await t.task(ok)).status).toBe(2);
    expect((await t.simCollector(C.web1)).version).toBe(LATEST);
  });

  it('{outcome: "stuck"} makes the next task time out', async () => {
    const t = await startTestSimulator();
    expect((await patch(t, C.web2, { outcome: 'stuck' })).status).toBe(200);
    const id = await t.createTask(C.web2);
    t.clock.advance(DONE_MS);
    expect([0, 1, 6]).toContain((await t.task(id)).status);
    t.clock.advance(TIMEOUT_SECONDS * 1000);
    expect((await t.task(id)).status).toBe(3);
  });

  it('both fields at once', async () => {
    const t = await startTestSimulator();
    const res = await patch(t, C.offline, { alive: true, outcome: 'fail' });
    expect(res.status, res.text).toBe(200);
    expect(parse(SimCollectorRecord, res.json)).toMatchObject({ id: C.offline, alive: true });
    const id = await t.createTask(C.offline);
    t.clock.advance(DONE_MS);
    expect((await t.task(id)).status).toBe(3);
  });

  it('an unknown Collector → 404', async () => {
    const t = await startTestSimulator();
    expect((await patch(t, 424242, { alive: false })).status).toBe(404);
    expect((await patch(t, 'abc', { alive: false })).status).toBe(404);
  });

  it('an invalid body → 400 and nothing changes', async () => {
    const t = await startTestSimulator();
    for (const body of [{ alive: 'no' }, { outcome: 'explode' }, { alive: null }, 'not an object']) {
      const res = await patch(t, C.web1, body);
      expect(res.status, `${JSON.stringify(body)} → ${res.text}`).toBe(400);
    }
    const malformed = await t.raw('PATCH', `/_sim/collectors/${C.web1}`, {
      rawBody: '{"alive": fal',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect((await t.simCollector(C.web1)).alive).toBe(true);
  });
});

describe('introspection is for loopback only', () => {
  const external = Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

  it.skipIf(!external)(
    'reached through a non-loopback address, /_sim is refused while the API answers',
    async () => {
      const t = await startTestSimulator(testFleet(), { host: '0.0.0.0' });
      const base = `http://${external}:${t.sim.port}`;
      const sim = await request(`${base}/_sim/stats`, { headers: { accept: 'application/json' } });
      await sim.body.text();
      expect([403, 404]).toContain(sim.statusCode);
      const patched = await request(`${base}/_sim/collectors/${C.web1}`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ alive: false }),
      });
      await patched.body.text();
      expect([403, 404]).toContain(patched.statusCode);
      expect((await t.simCollector(C.web1)).alive).toBe(true);
      const api = await request(`${base}/api/v1/collectors/upgrades/targets`, {
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          authorization: basicAuth(OPS),
        },
      });
      await api.body.text();
      expect(api.statusCode).toBe(200);
    },
  );
});
