/**
 * Conformance of GET /api/v1/collectors, the Collector Management API's list of every Collector
 * of the organization (the inventory), over HTTP: the fields of the interface's section 2.1 plus
 * category, description and fields; each `filter`; `limit` (default 1000, the vendor's) and
 * `offset` paging in ascending id order; 400 for bad values; 415, 401; and the same rate limits
 * as the upgrade endpoints, shared with them; `dead` following the heartbeat (30 minutes after the
 * last one), a trailing slash, a malformed fault, and the request log (`GET /_sim/requests`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type ApiResponse,
  BUILD_VERSION,
  C,
  expectLegacyError,
  expectRateLimited,
  INTERN,
  LATEST,
  OFFLINE_AFTER_SECONDS,
  OPS,
  parse,
  patchSimCollector,
  SimStats,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  testFleet,
  tick,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';
import { GLOBEX, sim, startOrgsSimulator, twoOrgs } from './orgs-fixture.js';

afterEach(stopTestSimulators);

/** An inventory record: exactly these fields, of these types. */
const InventoryRecord = z.strictObject({
  id: z.number().int().positive(),
  name: z.string(),
  hostName: z.string(),
  timeZone: z.string(),
  links: z.array(z.strictObject({ rel: z.string(), href: z.string() })),
  ephemeral: z.boolean(),
  sourceSyncMode: z.string(),
  collectorType: z.enum(['Installable', 'Hosted']),
  collectorVersion: z.string(),
  osVersion: z.string(),
  osName: z.string(),
  osArch: z.string(),
  lastSeenAlive: z.number().int(),
  alive: z.boolean(),
  category: z.string(),
  description: z.string(),
  fields: z.record(z.string(), z.string()),
});
type InventoryRecord = z.infer<typeof InventoryRecord>;
const Inventory = z.strictObject({ collectors: z.array(InventoryRecord) });

const ALL_IDS = [C.web1, C.web2, C.upToDate, C.offline, C.failing, C.stuck, C.old, C.hosted];

function inventoryOf(res: ApiResponse): InventoryRecord[] {
  expect(res.status, res.text).toBe(200);
  return parse(Inventory, res.json).collectors;
}

const inventory = async (t: TestSimulator, query = '', auth = OPS) =>
  inventoryOf(await t.api('GET', `collectors${query ? `?${query}` : ''}`, { auth }));

describe('GET collectors: the records', () => {
  it('every Collector of the organization, hosted, offline and up-to-date ones included, in ascending id order', async () => {
    const t = await startTestSimulator();
    const all = await inventory(t);
    expect(all.map((c) => c.id)).toEqual(ALL_IDS);
  });

  it('the fields of section 2.1 with their types, plus category, description and fields', async () => {
    const t = await startTestSimulator(
      testFleet({
        collectors: [
          {
            id: 1,
            name: 'web-1',
            version: '19.400-5',
            category: 'prod/web',
            description: 'front',
            fields: { _budget: 'Dev_20GB' },
          },
          { id: 2, name: 'http-in', type: 'Hosted' },
        ],
      }),
    );
    const [web, hosted] = await inventory(t);
    expect(web).toMatchObject({
      id: 1,
      name: 'web-1',
      collectorType: 'Installable',
      collectorVersion: '19.400-5',
      alive: true,
      category: 'prod/web',
      description: 'front',
      fields: { _budget: 'Dev_20GB' },
      links: [{ rel: 'sources', href: '/v1/collectors/1/sources' }],
    });
    expect(web?.collectorVersion).toMatch(BUILD_VERSION);
    // A Hosted Collector runs no build (the vendor's example shows "").
    expect(hosted).toMatchObject({
      id: 2,
      collectorType: 'Hosted',
      collectorVersion: '',
      category: '',
      fields: {},
    });
  });

  it('a Collector already on the build, and one being upgraded, are in it with their current version', async () => {
    const t = await startTestSimulator();
    await t.createTask(C.web1);
    const byId = new Map((await inventory(t)).map((c) => [c.id, c]));
    expect(byId.get(C.upToDate)?.collectorVersion).toBe(LATEST);
    expect(byId.get(C.web1)?.collectorVersion).toBe('19.400-5');
    t.clock.advance((2 + 15 + UPGRADE_SECONDS) * 1000 + 1);
    expect((await inventory(t)).find((c) => c.id === C.web1)?.collectorVersion).toBe(LATEST);
  });

  it('a user limited to some Collectors sees only those', async () => {
    const t = await startTestSimulator();
    expect((await inventory(t, '', INTERN)).map((c) => c.id)).toEqual([C.web1]);
  });

  it('each organization lists its own Collectors', async () => {
    const t = await startOrgsSimulator(twoOrgs({}, { collectors: [{ id: 7, version: LATEST }] }));
    expect((await inventory(t, '', GLOBEX)).map((c) => c.id)).toEqual([7]);
    expect((await inventory(t, '', OPS)).map((c) => c.id)).toEqual(ALL_IDS);
  });
});

describe('GET collectors: filter', () => {
  it.each([
    ['installed', ALL_IDS.filter((id) => id !== C.hosted)],
    ['hosted', [C.hosted]],
    ['dead', [C.offline]],
    ['alive', ALL_IDS.filter((id) => id !== C.offline)],
    ['', ALL_IDS],
  ])('filter=%s', async (filter, ids) => {
    const t = await startTestSimulator();
    expect((await inventory(t, `filter=${filter}`)).map((c) => c.id)).toEqual(ids);
  });

  it('dead follows the heartbeat: a Collector that stops is alive until 30 minutes after its last heartbeat, then dead, lastSeenAlive frozen', async () => {
    const t = await startTestSimulator();
    const patched = await patchSimCollector(t, C.web2, { running: false });
    const frozen = patched.lastSeenAlive;
    t.at(frozen, OFFLINE_AFTER_SECONDS * 1000 - 1);
    expect((await inventory(t, 'filter=alive')).map((c) => c.id)).toContain(C.web2);
    t.at(frozen, OFFLINE_AFTER_SECONDS * 1000);
    const dead = await inventory(t, 'filter=dead');
    expect(dead.map((c) => c.id)).toEqual([C.web2, C.offline]);
    expect(dead[0]).toMatchObject({ alive: false, lastSeenAlive: frozen });
  });

  it('dead follows alive: a Collector taken offline moves from alive to dead', async () => {
    const t = await startTestSimulator();
    await sim(t, 'PATCH', `/_sim/collectors/${C.web2}`, { alive: false });
    expect((await inventory(t, 'filter=dead')).map((c) => c.id)).toEqual([C.web2, C.offline]);
    expect((await inventory(t, 'filter=alive')).map((c) => c.id)).not.toContain(C.web2);
  });
});

describe('GET collectors: limit and offset', () => {
  it('limit defaults to 1000, the most it takes; pages put together are the whole list', async () => {
    const t = await startTestSimulator(testFleet({ generate: { count: 2300, seed: 3 } }));
    const first = await inventory(t);
    expect(first).toHaveLength(1000);
    const pages: InventoryRecord[] = [];
    for (let offset = 0; ; offset += 1000) {
      const page = await inventory(t, `limit=1000&offset=${offset}`);
      pages.push(...page);
      if (page.length < 1000) break;
    }
    expect(pages).toHaveLength(2300 + ALL_IDS.length);
    const ids = pages.map((c) => c.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('limit and offset apply after the filter', async () => {
    const t = await startTestSimulator();
    const installed = ALL_IDS.filter((id) => id !== C.hosted);
    expect((await inventory(t, 'filter=installed&limit=2&offset=3')).map((c) => c.id)).toEqual(
      installed.slice(3, 5),
    );
    expect(await inventory(t, 'offset=100')).toEqual([]);
    expect(await inventory(t, 'limit=0')).toEqual([]);
  });

  it.each([
    'limit=-1',
    'limit=1.5',
    'limit=abc',
    'limit=1001',
    'limit=',
    'offset=-1',
    'offset=x',
    'offset=99999999999999999999',
    'filter=offline',
    'filter=INSTALLED',
  ])('%s: 400 in the legacy error shape', async (query) => {
    const t = await startTestSimulator();
    expectLegacyError(await t.api('GET', `collectors?${query}`), 400, 'parameter.invalid');
  });
});

describe('GET collectors: the rules of every endpoint', () => {
  it('415 without Content-Type: application/json; a GET without one is accepted with lenientContentType', async () => {
    const strict = await startTestSimulator();
    expectLegacyError(
      await strict.api('GET', 'collectors', { headers: { 'content-type': null } }),
      415,
      'contenttype.invalid',
    );
    expectLegacyError(
      await strict.api('GET', 'collectors', { headers: { 'content-type': 'text/plain' } }),
      415,
    );
    const lenient = await startTestSimulator(testFleet(), { lenientContentType: true });
    inventoryOf(await lenient.api('GET', 'collectors', { headers: { 'content-type': null } }));
  });

  it('401 without credentials or with wrong ones', async () => {
    const t = await startTestSimulator();
    expectLegacyError(await t.api('GET', 'collectors', { auth: null }), 401, 'unauthorized');
    expectLegacyError(
      await t.api('GET', 'collectors', { auth: { ...OPS, accessKey: 'nope' } }),
      401,
      'unauthorized',
    );
  });

  it('405 for another method', async () => {
    const t = await startTestSimulator();
    expectLegacyError(await t.api('POST', 'collectors', { body: {} }), 405, 'method.unsupported');
  });

  it('requests per second per user: shared with the upgrade endpoints', async () => {
    const t = await startTestSimulator(
      testFleet({ faults: { rateLimit: { perSecond: 4, concurrent: 10 } } }),
    );
    await inventory(t);
    expect((await t.api('GET', 'collectors/upgrades/targets')).status).toBe(200);
    expect((await t.api('GET', 'collectors/upgrades/collectors')).status).toBe(200);
    await inventory(t);
    expectRateLimited(await t.api('GET', 'collectors'));
    expectRateLimited(await t.api('GET', 'collectors/upgrades/targets'));
    t.clock.advance(1000);
    await inventory(t);
  });

  it('concurrent requests per key: shared with the upgrade endpoints', async () => {
    const t = await startTestSimulator(
      testFleet({ faults: { rateLimit: { perSecond: 0, concurrent: 1 }, latencyMs: 500 } }),
    );
    const held = t.api('GET', 'collectors/upgrades/targets');
    await tick(30);
    expectRateLimited(await t.api('GET', 'collectors'));
    t.clock.advance(500);
    expect((await held).status).toBe(200);
    const next = t.api('GET', 'collectors');
    await tick(30);
    t.clock.advance(500);
    inventoryOf(await next);
  });

  it('a trailing slash is the same path (some clients add one)', async () => {
    const t = await startTestSimulator();
    expect(inventoryOf(await t.api('GET', 'collectors/?filter=hosted')).map((c) => c.id)).toEqual([C.hosted]);
  });

  it('a malformed fault of the organization alters its 200 answers, not its 400s', async () => {
    const t = await startTestSimulator();
    await sim(t, 'POST', '/_sim/faults', { kind: 'malformed', ratio: 1, shape: 'types' });
    const res = await t.api('GET', 'collectors?limit=2');
    expect(res.status).toBe(200);
    expect(Inventory.safeParse(res.json).success).toBe(false);
    expectLegacyError(await t.api('GET', 'collectors?limit=-1'), 400, 'parameter.invalid');
  });

  it('the request log (GET /_sim/requests) names each page as endpoint inventory, with its status', async () => {
    const t = await startTestSimulator();
    await inventory(t, 'limit=3');
    await t.api('GET', 'collectors?filter=nope');
    const log = (await sim(t, 'GET', '/_sim/requests')).json as {
      requests: { endpoint: string; status: number }[];
    };
    expect(log.requests.map((r) => [r.endpoint, r.status])).toEqual([
      ['inventory', 200],
      ['inventory', 400],
    ]);
  });

  it('stats count it as endpoint inventory', async () => {
    const t = await startTestSimulator();
    await inventory(t);
    await t.api('GET', 'collectors?limit=-1');
    const stats = parse(SimStats, (await sim(t, 'GET', '/_sim/stats')).json);
    expect(stats.requests.byEndpoint).toMatchObject({ inventory: 2, list: 0 });
    expect(stats.requests.byStatus).toMatchObject({ '200': 1, '400': 1 });
    expect(stats.rejected).toMatchObject({ 'parameter.invalid': 1 });
  });
});
