/**
 * `fleet-upgrade fleet` as a user runs it (#21): the built CLI's `run` keeps the inventory of a
 * simulator fleet of several builds with offline and hosted Collectors, and `fleet` (table, CSV,
 * JSON) prints counts equal to the simulator's truth; a pass costs at most one request per 1,000
 * installed Collectors (rounded up), measured from the simulator's request log. `fleet --live`
 * reads the service itself at the same cost. The fleet is the one of
 * test/integration/inventory/fleet-inventory.test.ts, which checks the inventory in Redis and the
 * gauges.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryStore } from '../../../src/inventory/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, type SimCollectorView, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.300-7', '19.400-5', '19.450-12', '19.470-4'];
const TIME_SCALE = 50;

const fleet: FleetFileInput = {
  builds: BUILDS,
  users: [{ accessId: 'demo', accessKey: 'demo-secret' }],
  generate: { count: 4400, seed: 21, offlineRatio: 0.1, hostedRatio: 0.03, upToDateRatio: 0.3 },
};

const policy = {
  name: 'linux',
  target: 'latest',
  select: { osName: 'Linux' },
  minimumBuild: '19.300-7',
  // The fleet holds still while `fleet` is compared with it.
  freeze: [{ start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z', reason: 'fleet test' }],
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function cli(harness: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = harness.spawnCli(args);
  const code = await exitOf(child, 60_000);
  return { code, out: child.output() };
}

async function inventoryRequests(harness: Harness): Promise<number> {
  const res = await fetch(`${harness.sim.url}/_sim/requests?limit=10000`);
  const { requests } = (await res.json()) as { requests: { endpoint: string }[] };
  return requests.filter((r) => r.endpoint === 'inventory').length;
}

interface Truth {
  collectors: number;
  alive: number;
  offline: number;
  byBuild: Map<string, { collectors: number; alive: number; offline: number }>;
}

function truthOf(collectors: readonly SimCollectorView[]): Truth {
  const installed = collectors.filter((c) => c.type === 'Installable');
  const byBuild = new Map<string, { collectors: number; alive: number; offline: number }>();
  for (const c of installed) {
    const row = byBuild.get(c.version) ?? { collectors: 0, alive: 0, offline: 0 };
    row.collectors++;
    if (c.alive) row.alive++;
    else row.offline++;
    byBuild.set(c.version, row);
  }
  const alive = installed.filter((c) => c.alive).length;
  return { collectors: installed.length, alive, offline: installed.length - alive, byBuild };
}

interface JsonView {
  source: string;
  orgs: {
    org: string;
    collectors: number;
    alive: number;
    offline: number;
    pages?: number;
    builds: { build: string; collectors: number; alive: number; offline: number }[];
  }[];
  policies: { policy: string; org: string; builds: Record<string, [number, number]> }[];
}

function expectTruth(view: JsonView, truth: Truth): void {
  const org = view.orgs[0];
  expect(view.orgs).toHaveLength(1);
  expect(org).toMatchObject({ collectors: truth.collectors, alive: truth.alive, offline: truth.offline });
  expect(
    new Map(
      org?.builds.map((b) => [b.build, { collectors: b.collectors, alive: b.alive, offline: b.offline }]),
    ),
  ).toEqual(truth.byBuild);
}

describe('fleet', () => {
  it('prints the counts the simulator knows, at no more than one request per 1,000 Collectors a pass', async () => {
    h = await startHarness({
      fleet,
      policy,
      timeScale: TIME_SCALE,
      env: { FLEET_UPGRADE_INVENTORY_INTERVAL: '1h', FLEET_UPGRADE_INVENTORY_PAGE_INTERVAL: '5s' },
    });
    const harness = h;
    const truth = truthOf(await harness.simCollectors());
    // Several builds, offline and hosted Collectors: the fleet this test is about.
    expect(truth.byBuild.size).toBeGreaterThanOrEqual(3);
    expect(truth.offline).toBeGreaterThan(100);
    expect(fleet.generate?.count).toBeGreaterThan(truth.collectors + 50);

    // Before any pass: says how to get one.
    const before = await cli(harness, ['fleet']);
    expect(before.code, before.out).toBe(0);
    expect(before.out).toMatch(/No inventory of the fleet yet/);

    const run = harness.spawnCli(['run', '--policy', harness.policyFile, '--listen', '127.0.0.1:0']);
    const store = new InventoryStore(harness.redis, harness.keys);
    const deadline = Date.now() + 60_000;
    while (!(await store.read(['default']))[0]?.compliance?.policies.linux?.target) {
      if (Date.now() > deadline) throw new Error(`no inventory pass in time: ${run.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const pages = Math.ceil(truth.collectors / 1000);
    expect(await inventoryRequests(harness)).toBe(pages);

    const json = await cli(harness, ['fleet', '--format', 'json']);
    expect(json.code, json.out).toBe(0);
    const view = JSON.parse(json.out) as JsonView;
    expect(view.source).toBe('inventory');
    expectTruth(view, truth);
    expect(view.orgs[0]?.pages).toBe(pages);
    const linux = view.policies.find((p) => p.policy === 'linux');
    const linuxTruth = (await harness.simCollectors()).filter(
      (c) => c.type === 'Installable' && c.osName === 'Linux',
    ).length;
    expect(Object.values(linux?.builds ?? {}).reduce((n, [a, o]) => n + a + o, 0)).toBe(linuxTruth);

    const csv = await cli(harness, ['fleet', '--format', 'csv']);
    expect(csv.code, csv.out).toBe(0);
    const rows = csv.out
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.split(','));
    const fleetRows = rows.filter((r) => r[1] === '');
    expect(new Map(fleetRows.map((r) => [r[2], Number(r[3])]))).toEqual(
      new Map([...truth.byBuild].map(([b, t]) => [b, t.collectors])),
    );

    const table = await cli(harness, ['fleet']);
    expect(table.code, table.out).toBe(0);
    for (const [build, t] of truth.byBuild) {
      const line = table.out.split('\n').find((l) => l.trimStart().startsWith(build));
      expect(line, table.out).toBeDefined();
      expect(line).toContain(` ${t.collectors.toLocaleString('en-US')} `);
    }
    expect(table.out).toMatch(/linux/);
    // The newest builds with their first sighting here (what a policy's minAge counts from).
    expect(table.out).toMatch(
      /first seen here \(minAge counts from it\): 19\.470-4 \d\d:\d\d(:\d\d)? UTC; 19\.450-12/,
    );
    const seen = Object.keys(await harness.redis.hgetall(harness.keys.buildsSeen('default'))).sort();
    expect(seen).toEqual([...BUILDS].sort());
    expect((view as JsonView & { firstSeen?: { build: string }[] }).firstSeen?.map((s) => s.build)).toEqual([
      '19.470-4',
      '19.450-12',
      '19.400-5',
    ]);
    // Reading the table cost the service nothing.
    expect(await inventoryRequests(harness)).toBe(pages);

    // --live: the service read now, at the same cost.
    const live = await cli(harness, ['fleet', '--live', '--format', 'json']);
    expect(live.code, live.out).toBe(0);
    const liveView = JSON.parse(live.out.slice(live.out.indexOf('{'))) as JsonView;
    expect(liveView.source).toBe('live');
    expectTruth(liveView, truth);
    expect(await inventoryRequests(harness)).toBe(2 * pages);
    console.info(
      `[figures] fleet: ${truth.collectors} installed Collectors in ${truth.byBuild.size} builds, ${truth.offline} offline; ${pages} requests a pass (${((1000 * pages) / truth.collectors).toFixed(2)} per 1,000)`,
    );
    console.info(table.out);
  }, 120_000);
});
