/**
 * Conformance: 4.1 Get upgradable Collectors (GET collectors/upgrades/collectors) and the
 * Collector record of 2.1, over real HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  CollectorList,
  expectLegacyError,
  INTERN,
  LATEST,
  listCollectors,
  OPS,
  parse,
  startTestSimulator,
  stopTestSimulators,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const ids = (records: { id: number }[]) => records.map((r) => r.id);
const ascending = (xs: number[]) => xs.every((x, i) => i === 0 || (xs[i - 1] as number) < x);

describe('4.1 response 200: an object with the key "collectors", Collector records of 2.1', () => {
  it('2.1: each record has exactly the fields of the table with their types', async () => {
    const t = await startTestSimulator();
    const res = await t.api('GET', 'collectors/upgrades/collectors');
    expect(res.status, res.text).toBe(200);
    const { collectors } = parse(CollectorList, res.json);
    expect(collectors.length).toBeGreaterThan(0);
    for (const c of collectors) {
      expect(Object.keys(c).sort()).toEqual(
        [
          'id',
          'name',
          'hostName',
          'timeZone',
          'links',
          'ephemeral',
          'sourceSyncMode',
          'collectorType',
          'collectorVersion',
          'osVersion',
          'osName',
          'osArch',
          'lastSeenAlive',
          'alive',
        ].sort(),
      );
    }
  });

  it('2.1: the record carries the fleet file values, a "sources" link under /v1 and collectorType Installable', async () => {
    const t = await startTestSimulator();
    const web1 = (await listCollectors(t)).find((c) => c.id === C.web1);
    expect(web1).toEqual({
      id: C.web1,
      name: 'web-1',
      hostName: 'web-1.prod.internal',
      timeZone: 'Europe/Berlin',
      links: [{ rel: 'sources', href: `/v1/collectors/${C.web1}/sources` }],
      ephemeral: false,
      sourceSyncMode: 'UI',
      collectorType: 'Installable',
      collectorVersion: '19.400-5',
      osVersion: '6.8.0-45-generic',
      osName: 'Linux',
      osArch: 'amd64',
      lastSeenAlive: expect.any(Number),
      alive: true,
    });
  });

  it('2.1 lastSeenAlive: integer ms since the epoch, not after the simulated now, recent for an alive Collector', async () => {
    const t = await startTestSimulator();
    const now = t.clock.now();
    const records = await listCollectors(t);
    for (const c of records) {
      expect(Number.isInteger(c.lastSeenAlive)).toBe(true);
      expect(c.lastSeenAlive).toBeLessThanOrEqual(now);
      // Alive means a heartbeat within the last 30 minutes (api-facts: alive turns false after 30 min).
      if (c.alive) expect(c.lastSeenAlive).toBeGreaterThan(now - 30 * 60_000);
    }
  });

  it('2.1: generated Collectors (realistic names, hosts, OSes) fit the record too, in ascending id order', async () => {
    const t = await startTestSimulator(
      testFleet({ collectors: [], generate: { count: 300, seed: 7, hostedRatio: 0.1, offlineRatio: 0.1 } }),
    );
    const records = await listCollectors(t, 'limit=1000');
    expect(records.length).toBeGreaterThan(100);
    expect(ascending(ids(records))).toBe(true);
    for (const c of records) {
      expect(c.collectorType).toBe('Installable');
      expect(c.links).toEqual([{ rel: 'sources', href: `/v1/collectors/${c.id}/sources` }]);
      expect(c.collectorVersion).not.toBe(LATEST);
      expect(c.name.length).toBeGreaterThan(0);
      expect(c.hostName.length).toBeGreaterThan(0);
      expect(c.osName.length).toBeGreaterThan(0);
      expect(c.timeZone.length).toBeGreaterThan(0);
    }
    expect(records.some((c) => !c.alive)).toBe(true);
  });

  it('a generated fleet is the same for the same seed', async () => {
    const fleet = testFleet({ collectors: [], generate: { count: 80, seed: 11 } });
    const a = await startTestSimulator(fleet);
    const b = await startTestSimulator(fleet);
    const strip = (rs: Awaited<ReturnType<typeof listCollectors>>) =>
      rs.map(({ lastSeenAlive: _, ...r }) => r);
    expect(strip(await listCollectors(a, 'limit=1000'))).toEqual(
      strip(await listCollectors(b, 'limit=1000')),
    );
  });
});

describe('4.1 which Collectors are listed', () => {
  it('default toVersion is the latest build: installed Collectors not on it are listed, in ascending id order', async () => {
    const t = await startTestSimulator();
    expect(ids(await listCollectors(t))).toEqual([C.web1, C.web2, C.offline, C.failing, C.stuck, C.old]);
  });

  it('a Collector already on the requested build is not listed (toVersion)', async () => {
    const t = await startTestSimulator();
    // 101, 104, 105, 106 run 19.400-5; 900 is Hosted.
    expect(ids(await listCollectors(t, 'toVersion=19.400-5'))).toEqual([C.web2, C.upToDate, C.old]);
  });

  it('variant parameter name "to" selects the build like toVersion', async () => {
    const t = await startTestSimulator();
    expect(ids(await listCollectors(t, 'to=19.400-5'))).toEqual([C.web2, C.upToDate, C.old]);
    expect(ids(await listCollectors(t, `to=${LATEST}`))).toEqual(ids(await listCollectors(t)));
  });

  it('explicit toVersion of the latest build equals the default', async () => {
    const t = await startTestSimulator();
    expect(await listCollectors(t, `toVersion=${LATEST}`)).toEqual(await listCollectors(t));
  });

  it('Hosted Collectors are never listed', async () => {
    const t = await startTestSimulator();
    for (const q of ['', 'toVersion=19.100-1', 'toVersion=19.400-5']) {
      expect(ids(await listCollectors(t, q))).not.toContain(C.hosted);
    }
  });

  it('a Collector that is not alive is listed with alive: false', async () => {
    const t = await startTestSimulator();
    const offline = (await listCollectors(t)).find((c) => c.id === C.offline);
    expect(offline?.alive).toBe(false);
    expect((await listCollectors(t)).filter((c) => c.id !== C.offline).every((c) => c.alive)).toBe(true);
  });

  it('fleet listOffline: false leaves Collectors that are not alive out', async () => {
    const t = await startTestSimulator(testFleet({ listOffline: false }));
    expect(ids(await listCollectors(t))).toEqual([C.web1, C.web2, C.failing, C.stuck, C.old]);
  });

  it('a Collector with an unfinished task is not listed; after the task succeeds it is on the new build', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    expect(ids(await listCollectors(t))).not.toContain(C.web1);
    expect(ids(await listCollectors(t, 'toVersion=19.100-1'))).not.toContain(C.web1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, (2 + 15 + UPGRADE_SECONDS + 5) * 1000);
    expect((await t.task(id)).status).toBe(2);
    expect(ids(await listCollectors(t))).not.toContain(C.web1);
    const old = (await listCollectors(t, 'toVersion=19.400-5')).find((c) => c.id === C.web1);
    expect(old?.collectorVersion).toBe(LATEST);
  });

  it('after a failed task the Collector is listed again on its old build', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.failing);
    expect(ids(await listCollectors(t))).not.toContain(C.failing);
    const { requestTime } = await t.task(id);
    t.at(requestTime, (2 + 15 + UPGRADE_SECONDS + 5) * 1000);
    expect((await t.task(id)).status).toBe(3);
    const back = (await listCollectors(t)).find((c) => c.id === C.failing);
    expect(back?.collectorVersion).toBe('19.400-5');
  });

  it('5: a user limited to some Collectors sees only those', async () => {
    const t = await startTestSimulator();
    expect(ids(await listCollectors(t, '', INTERN))).toEqual([C.web1]);
    expect(ids(await listCollectors(t, 'toVersion=19.400-5', INTERN))).toEqual([]);
    expect(ids(await listCollectors(t, '', OPS)).length).toBe(6);
  });
});

describe('4.1 offset and limit (paging)', () => {
  const big = () =>
    testFleet({ collectors: [], generate: { count: 240, seed: 5, hostedRatio: 0, offlineRatio: 0.05 } });

  it('limit defaults to 50 and offset to 0', async () => {
    const t = await startTestSimulator(big());
    const all = await listCollectors(t, 'limit=1000');
    expect(all.length).toBeGreaterThan(60);
    const first = await listCollectors(t);
    expect(first).toHaveLength(50);
    expect(ids(first)).toEqual(ids(all).slice(0, 50));
    expect(ids(await listCollectors(t, 'offset=0&limit=50'))).toEqual(ids(first));
  });

  it('offset skips records in a stable ascending order, so paging sees every Collector exactly once', async () => {
    const t = await startTestSimulator(big());
    const all = ids(await listCollectors(t, 'limit=1000'));
    expect(ascending(all)).toBe(true);
    const seen: number[] = [];
    for (let offset = 0, pages = 0; pages < 100; pages++, offset += 7) {
      const page = ids(await listCollectors(t, `offset=${offset}&limit=7`));
      expect(page.length).toBeLessThanOrEqual(7);
      seen.push(...page);
      if (page.length < 7) break;
    }
    expect(seen).toEqual(all);
  });

  it('limit 1000 (the maximum) is accepted and returns at most 1000', async () => {
    const t = await startTestSimulator(
      testFleet({
        collectors: [],
        generate: { count: 1300, seed: 2, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
      }),
    );
    const page = await listCollectors(t, 'limit=1000');
    expect(page).toHaveLength(1000);
    const rest = await listCollectors(t, 'offset=1000&limit=1000');
    expect(rest).toHaveLength(300);
    expect(new Set([...ids(page), ...ids(rest)]).size).toBe(1300);
  });

  it('an offset at or beyond the end answers 200 with an empty list', async () => {
    const t = await startTestSimulator();
    expect(await listCollectors(t, 'offset=6')).toEqual([]);
    expect(await listCollectors(t, 'offset=100000')).toEqual([]);
    expect(ids(await listCollectors(t, 'offset=5'))).toEqual([C.old]);
  });

  it('limit=1 returns one record', async () => {
    const t = await startTestSimulator();
    expect(ids(await listCollectors(t, 'limit=1'))).toEqual([C.web1]);
    expect(ids(await listCollectors(t, 'offset=1&limit=2'))).toEqual([C.web2, C.offline]);
  });
});

describe('4.1 response 400: a parameter is not valid (legacy error body)', () => {
  const bad = [
    'limit=1001',
    'limit=-1',
    'limit=1.5',
    'limit=abc',
    'offset=-1',
    'offset=2.5',
    'offset=x',
    'toVersion=19.999-1',
    'toVersion=abc',
    'to=19.999-1',
    'to=latest-ish',
  ];
  for (const query of bad) {
    it(`?${query} → 400`, async () => {
      const t = await startTestSimulator();
      const res = await t.api('GET', `collectors/upgrades/collectors?${query}`);
      expectLegacyError(res, 400);
    });
  }
});
