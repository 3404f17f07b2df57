/**
 * Several organizations in one simulator (`orgs:`): the credentials decide which organization
 * answers; each has its own Collectors (ids may repeat), task ids, builds, rate limits and
 * statistics; /_sim answers for one organization, named by `?org=` when there are several.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  CreateResult,
  expectLegacyError,
  expectRateLimited,
  INTERN,
  LATEST,
  listCollectors,
  OPS,
  parse,
  SimStats,
  StatusBody,
  startTestSimulator,
  stopTestSimulators,
  Targets,
  testFleet,
  tick,
} from '../../support/simulator.js';
import { GLOBEX, sim, startOrgsSimulator, twoOrgs } from './orgs-fixture.js';

afterEach(stopTestSimulators);

describe('the credentials decide which organization answers', () => {
  it('a task created with acme credentials changes acme only; globex still offers its own Collector of that id', async () => {
    const t = await startOrgsSimulator();
    await t.createTask(C.web1, undefined, OPS);
    expect((await listCollectors(t, '', OPS)).map((c) => c.id)).not.toContain(C.web1);
    expect((await listCollectors(t, '', GLOBEX)).map((c) => c.id)).toContain(C.web1);
    const acme = await sim(t, 'GET', `/_sim/collectors/${C.web1}?org=acme`);
    const globex = await sim(t, 'GET', `/_sim/collectors/${C.web1}?org=globex`);
    expect((acme.json as { tasks: unknown[] }).tasks).toHaveLength(1);
    expect((globex.json as { tasks: unknown[] }).tasks).toHaveLength(0);
  });

  it('task ids repeat across organizations; each reads its own task by the same id', async () => {
    const t = await startOrgsSimulator();
    const create = async (collectorId: number, auth: typeof OPS) => {
      const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId }, auth });
      expect(res.status, res.text).toBe(202);
      return parse(CreateResult, res.json).id;
    };
    const a = await create(C.web1, OPS);
    const g = await create(C.web2, GLOBEX);
    expect(a).toBe(g);
    const read = async (auth: typeof OPS) =>
      parse(StatusBody, (await t.api('GET', `collectors/upgrades/${a}`, { auth })).json).upgrade.collectorId;
    expect(await read(OPS)).toBe(C.web1);
    expect(await read(GLOBEX)).toBe(C.web2);
  });

  it('a user limited to some Collectors stays limited within its organization', async () => {
    const t = await startOrgsSimulator();
    expect((await listCollectors(t, '', INTERN)).map((c) => c.id)).toEqual([C.web1]);
    expect((await listCollectors(t, '', GLOBEX)).length).toBeGreaterThan(1);
  });

  it('each organization has its own builds: a release in globex leaves acme on its latest', async () => {
    const t = await startOrgsSimulator();
    const released = await sim(t, 'POST', '/_sim/builds?org=globex', { version: '19.480-1' });
    expect(released.status, released.text).toBe(201);
    const latest = async (auth: typeof OPS) =>
      parse(Targets, (await t.api('GET', 'collectors/upgrades/targets', { auth })).json).targets.at(-1)
        ?.version;
    expect(await latest(GLOBEX)).toBe('19.480-1');
    expect(await latest(OPS)).toBe(LATEST);
    expect(((await sim(t, 'GET', '/_sim/builds?org=acme')).json as { latest: string }).latest).toBe(LATEST);
  });

  it('organizations may hold different builds and Collectors', async () => {
    const t = await startOrgsSimulator(
      twoOrgs({}, { builds: ['20.1-2749', '20.1-2800'], collectors: [{ id: 5, version: '20.1-2749' }] }),
    );
    expect((await listCollectors(t, '', GLOBEX)).map((c) => [c.id, c.collectorVersion])).toEqual([
      [5, '20.1-2749'],
    ]);
  });

  it('unknown credentials: 401, counted apart from every organization; a wrong key: 401 in its organization', async () => {
    const t = await startOrgsSimulator();
    expectLegacyError(
      await t.api('GET', 'collectors/upgrades/targets', { auth: { accessId: 'nobody', accessKey: 'x' } }),
      401,
      'unauthorized',
    );
    expectLegacyError(
      await t.api('GET', 'collectors/upgrades/targets', { auth: { ...GLOBEX, accessKey: 'wrong' } }),
      401,
      'unauthorized',
    );
    const totals = (await sim(t, 'GET', '/_sim/stats')).json as {
      requests: { total: number; byStatus: Record<string, number> };
      unattributed: { total: number };
      orgs: Record<string, { requests: { total: number; byStatus: Record<string, number> } }>;
    };
    expect(totals.unattributed.total).toBe(1);
    expect(totals.orgs.acme?.requests.total).toBe(0);
    expect(totals.orgs.globex?.requests.byStatus).toEqual({ '401': 1 });
    expect(totals.requests).toMatchObject({ total: 2, byStatus: { '401': 2 } });
  });
});

describe('rate limits are counted in each organization only', () => {
  it('4 requests/s per user: acme is limited, globex is not', async () => {
    const limited = { faults: { rateLimit: { perSecond: 4, concurrent: 10 } } };
    const t = await startOrgsSimulator(twoOrgs(limited, limited));
    for (let i = 0; i < 4; i++)
      expect((await t.api('GET', 'collectors/upgrades/targets', { auth: OPS })).status).toBe(200);
    expectRateLimited(await t.api('GET', 'collectors/upgrades/targets', { auth: OPS }));
    for (let i = 0; i < 4; i++)
      expect((await t.api('GET', 'collectors/upgrades/targets', { auth: GLOBEX })).status).toBe(200);
    const acme = parse(SimStats, (await sim(t, 'GET', '/_sim/stats?org=acme')).json);
    const globex = parse(SimStats, (await sim(t, 'GET', '/_sim/stats?org=globex')).json);
    expect([acme.rateLimited, globex.rateLimited]).toEqual([1, 0]);
  });

  it('concurrent requests per key: acme full, globex still admitted', async () => {
    const slowPair = { faults: { rateLimit: { perSecond: 0, concurrent: 2 }, latencyMs: 1000 } };
    const t = await startOrgsSimulator(twoOrgs(slowPair, slowPair));
    const held = [1, 2].map(() => t.api('GET', 'collectors/upgrades/targets', { auth: OPS }));
    const other = t.api('GET', 'collectors/upgrades/targets', { auth: GLOBEX });
    await tick(50);
    expectRateLimited(await t.api('GET', 'collectors/upgrades/targets', { auth: OPS }));
    t.clock.advance(1000);
    for (const res of await Promise.all([...held, other])) expect(res.status, res.text).toBe(200);
  });
});

describe('/_sim with several organizations', () => {
  it('GET /_sim/stats without org: the totals and each organization under orgs; maxConcurrentTasks across them', async () => {
    const t = await startOrgsSimulator();
    await t.createTask(C.web1, undefined, OPS);
    await t.createTask(C.web1, undefined, GLOBEX);
    await t.api('GET', 'collectors/upgrades/targets', { auth: GLOBEX });
    const body = (await sim(t, 'GET', '/_sim/stats')).json as Record<string, unknown> & {
      orgs: Record<string, unknown>;
    };
    const totals = parse(SimStats, body);
    expect(totals.tasksCreated).toBe(2);
    expect(totals.maxConcurrentTasks).toBe(2);
    expect(totals.requests.byEndpoint).toMatchObject({ create: 2, targets: 1 });
    expect(totals.now).toBe(t.clock.now());
    expect(Object.keys(body.orgs)).toEqual(['acme', 'globex']);
    const acme = parse(SimStats, body.orgs.acme);
    const globex = parse(SimStats, body.orgs.globex);
    expect([acme.tasksCreated, acme.maxConcurrentTasks, acme.requests.total]).toEqual([1, 1, 1]);
    expect([globex.tasksCreated, globex.maxConcurrentTasks, globex.requests.total]).toEqual([1, 1, 2]);
    expect(body.collectors).toBe(((acme as { collectors?: number }).collectors ?? 0) * 2);
    expect(body.collectors).toBeGreaterThan(0);
  });

  it('GET /_sim/stats?org=NAME: that organization only', async () => {
    const t = await startOrgsSimulator();
    await t.createTask(C.web2, undefined, GLOBEX);
    const res = await sim(t, 'GET', '/_sim/stats?org=globex');
    expect(res.status, res.text).toBe(200);
    expect(parse(SimStats, res.json).tasksCreated).toBe(1);
    expect((res.json as { org: string }).org).toBe('globex');
    expect(parse(SimStats, (await sim(t, 'GET', '/_sim/stats?org=acme')).json).tasksCreated).toBe(0);
  });

  it.each([
    ['GET', '/_sim/collectors'],
    ['GET', `/_sim/collectors/${C.web1}`],
    ['PATCH', `/_sim/collectors/${C.web1}`],
    ['GET', '/_sim/builds'],
    ['POST', '/_sim/builds'],
    ['GET', '/_sim/faults'],
  ])('%s %s without org: 400 naming the organizations', async (method, path) => {
    const t = await startOrgsSimulator();
    const res = await sim(t, method, path, method === 'GET' ? undefined : { alive: false });
    expect(res.status, res.text).toBe(400);
    expect(res.json).toMatchObject({ orgs: ['acme', 'globex'] });
    expect((res.json as { error: string }).error).toMatch(/acme, globex/);
  });

  it('an unknown org: 400 naming the organizations (stats too)', async () => {
    const t = await startOrgsSimulator();
    for (const path of ['/_sim/stats?org=initech', '/_sim/collectors?org=initech']) {
      const res = await sim(t, 'GET', path);
      expect(res.status, res.text).toBe(400);
      expect((res.json as { error: string }).error).toMatch(/initech.*acme, globex/);
    }
  });

  it('PATCH /_sim/collectors/:id?org=NAME changes that organization only', async () => {
    const t = await startOrgsSimulator();
    const res = await sim(t, 'PATCH', `/_sim/collectors/${C.web1}?org=globex`, { alive: false });
    expect(res.status, res.text).toBe(200);
    expect((await listCollectors(t, '', GLOBEX)).find((c) => c.id === C.web1)?.alive).toBe(false);
    expect((await listCollectors(t, '', OPS)).find((c) => c.id === C.web1)?.alive).toBe(true);
  });

  it('GET /_sim/orgs lists each organization with its users, Collectors and latest build', async () => {
    const t = await startOrgsSimulator();
    const res = await sim(t, 'GET', '/_sim/orgs');
    expect(res.json).toMatchObject({
      orgs: [
        { name: 'acme', users: [OPS.accessId, INTERN.accessId], latest: LATEST },
        { name: 'globex', users: [GLOBEX.accessId], latest: LATEST },
      ],
    });
  });
});

describe('a fleet file without orgs is one organization named default', () => {
  it('/_sim answers without org, and with org=default; another name is a 400', async () => {
    const t = await startTestSimulator(testFleet());
    expect((await sim(t, 'GET', '/_sim/collectors')).status).toBe(200);
    expect((await sim(t, 'GET', '/_sim/collectors?org=default')).status).toBe(200);
    const stats = await sim(t, 'GET', '/_sim/stats');
    expect(stats.json).toMatchObject({ org: 'default' });
    expect(stats.json).not.toHaveProperty('orgs');
    const other = await sim(t, 'GET', '/_sim/stats?org=acme');
    expect(other.status).toBe(400);
    expect(other.json).toMatchObject({ orgs: ['default'] });
    expect((await sim(t, 'GET', '/_sim/orgs')).json).toMatchObject({ orgs: [{ name: 'default' }] });
  });
});
