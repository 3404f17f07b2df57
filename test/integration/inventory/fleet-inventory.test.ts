/**
 * The daemon's inventory against the simulator over HTTP and the run's Redis: a fleet of
 * several builds with offline and hosted Collectors, a policy whose rollout is frozen (so that
 * the fleet holds still while its target resolves), and `run` with the inventory on.
 * - The counts in Redis equal the simulator's truth (installed Collectors by build, OS and
 *   alive; the policy's selection by build), and so do the gauges of /metrics.
 * - A pass costs ceil(N / 1000) requests for N installed Collectors (measured from the
 *   simulator's request log, GET /_sim/requests), its pages at least `pageInterval` apart.
 * - Two `run` processes on one Redis do not duplicate passes: the passes over several intervals
 *   are no more than the intervals allow for one.
 * - Compliance: the policy's share on the build its rollout resolved `latest` to, behind, and on
 *   or above minimumBuild, as the truth gives them; `belowSince` kept while below.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryStore, type OrgInventory } from '../../../src/inventory/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { type Harness, type SimCollectorView, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.300-7', '19.400-5', '19.450-12', '19.470-4'];
const LATEST = '19.470-4';
const TIME_SCALE = 50;
const PAGE_EVERY_MS = 5_000;
const INTERVAL_MS = 60_000;

const fleet: FleetFileInput = {
  builds: BUILDS,
  users: [{ accessId: 'demo', accessKey: 'demo-secret' }],
  generate: { count: 4400, seed: 21, offlineRatio: 0.1, hostedRatio: 0.03, upToDateRatio: 0.3 },
};

const policy = {
  name: 'linux',
  target: 'latest',
  select: { osName: 'Linux' },
  // The oldest build: a Collector below the minimum would be moved through the freeze (#21).
  minimumBuild: '19.300-7',
  complianceAlert: { below: 0.95, for: '1h' },
  freeze: [{ start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z', reason: 'inventory test' }],
};

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

interface LoggedRequest {
  at: number;
  endpoint: string;
  status: number;
}

async function requestLog(harness: Harness): Promise<LoggedRequest[]> {
  const res = await fetch(`${harness.sim.url}/_sim/requests?limit=10000`);
  return ((await res.json()) as { requests: LoggedRequest[] }).requests;
}

async function inventoryOf(harness: Harness): Promise<OrgInventory> {
  const [inv] = await new InventoryStore(harness.redis, harness.keys).read(['default']);
  return inv as OrgInventory;
}

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** The truth: installed Collectors by `build|os|alive`. */
function truthGroups(collectors: readonly SimCollectorView[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of collectors) {
    if (c.type !== 'Installable') continue;
    const key = `${c.version}|${c.osName}|${c.alive}`;
    out.set(key, (out.get(key) ?? 0) + 1);
  }
  return out;
}

const installedOf = (collectors: readonly SimCollectorView[]) =>
  collectors.filter((c) => c.type === 'Installable');

describe('the inventory of `run`', () => {
  it('counts the fleet as the simulator knows it, at ceil(N/1000) requests a pass, paced, and judges compliance', async () => {
    h = await startHarness({ fleet, policy, timeScale: TIME_SCALE });
    const harness = h;
    const daemon = await harness.startRun({
      inventory: { enabled: true, intervalMs: 15 * 60_000, pageEveryMs: PAGE_EVERY_MS },
    });
    const inv = await waitFor('a first pass and its judgement', async () => {
      const i = await inventoryOf(harness);
      return i.pass && i.compliance?.policies.linux?.targetFrom === 'rollout' ? i : undefined;
    });
    const truth = await harness.simCollectors();
    const installed = installedOf(truth);
    const pass = inv.pass as NonNullable<OrgInventory['pass']>;
    // Several builds, offline and hosted Collectors: the fleet this test is about.
    expect(new Set(installed.map((c) => c.version)).size).toBeGreaterThanOrEqual(3);
    expect(installed.filter((c) => !c.alive).length).toBeGreaterThan(100);
    expect(truth.length - installed.length).toBeGreaterThan(50);

    expect(pass.collectors).toBe(installed.length);
    expect(pass.alive).toBe(installed.filter((c) => c.alive).length);
    expect(new Map(pass.groups.map((g) => [`${g.build}|${g.os}|${g.alive}`, g.count]))).toEqual(
      truthGroups(truth),
    );
    const linux = installed.filter((c) => c.osName === 'Linux');
    const linuxByBuild: Record<string, [number, number]> = {};
    for (const c of linux) {
      const counts = linuxByBuild[c.version] ?? [0, 0];
      counts[c.alive ? 0 : 1]++;
      linuxByBuild[c.version] = counts;
    }
    expect(pass.policies.linux?.builds).toEqual(linuxByBuild);

    // The cost: one request per 1,000 Collectors (rounded up), paced.
    const pages = (await requestLog(harness)).filter((r) => r.endpoint === 'inventory');
    expect(pages.every((r) => r.status === 200)).toBe(true);
    expect(pages).toHaveLength(Math.ceil(installed.length / 1000));
    expect(pass.pages).toBe(pages.length);
    for (let i = 1; i < pages.length; i++)
      expect((pages[i] as LoggedRequest).at - (pages[i - 1] as LoggedRequest).at).toBeGreaterThanOrEqual(
        PAGE_EVERY_MS * 0.9,
      );
    console.info(
      `[figures] inventory pass: ${installed.length} installed Collectors, ${pages.length} requests (${(
        (1000 * pages.length) / installed.length
      ).toFixed(2)} per 1,000), ${((pass.at - pass.startedAt) / 1000).toFixed(1)} s of the service's time`,
    );

    // Compliance against the build the frozen rollout resolved `latest` to.
    const judged = inv.compliance?.policies.linux;
    const on = linux.filter((c) => c.version === LATEST).length;
    const atMinimum = linux.length;
    expect(judged).toMatchObject({
      targetText: 'latest',
      target: LATEST,
      targetFrom: 'rollout',
      minimumBuild: '19.300-7',
      counts: {
        selected: linux.length,
        compliant: on,
        behind: linux.length - on,
        unknown: 0,
        minimum: atMinimum,
      },
    });
    expect(on / linux.length).toBeLessThan(0.95);
    expect(judged?.belowSince).toBeGreaterThan(0);
    // The rollout is frozen: nothing was upgraded, the truth held still.
    expect((await harness.simStats()).tasksCreated).toBe(0);

    // The gauges say the same.
    const metrics = await (await fetch(`${daemon.http?.url}/metrics`)).text();
    const series = (name: string) =>
      [...metrics.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, 'gm'))].map((m) => ({
        labels: Object.fromEntries(
          [...(m[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]),
        ),
        value: Number(m[2]),
      }));
    const fleetSeries = series('fleet_upgrade_fleet_collectors');
    expect(fleetSeries.reduce((n, s) => n + s.value, 0)).toBe(installed.length);
    expect(fleetSeries.filter((s) => s.labels.alive === 'false').reduce((n, s) => n + s.value, 0)).toBe(
      installed.filter((c) => !c.alive).length,
    );
    for (const build of BUILDS)
      expect(fleetSeries.filter((s) => s.labels.build === build).reduce((n, s) => n + s.value, 0)).toBe(
        installed.filter((c) => c.version === build).length,
      );
    const ratio = (kind: string) =>
      series('fleet_upgrade_compliance_ratio').find(
        (s) => s.labels.policy === 'linux' && s.labels.org === 'default' && s.labels.kind === kind,
      )?.value;
    expect(ratio('compliant')).toBeCloseTo(on / linux.length, 10);
    expect(ratio('minimum')).toBeCloseTo(atMinimum / linux.length, 10);
    expect(metrics).toMatch(/^fleet_upgrade_compliance_alert_below\{policy="linux"\} 0\.95$/m);
    expect(metrics).toMatch(/^fleet_upgrade_compliance_alert_for_seconds\{policy="linux"\} 3600$/m);
    expect(metrics).toMatch(/^fleet_upgrade_compliance_below_seconds\{policy="linux",org="default"\} \d/m);
  }, 90_000);

  it('two run processes on one Redis: one keeps the inventory, no pass twice', async () => {
    h = await startHarness({ fleet, policy: { ...policy, enabled: false }, timeScale: TIME_SCALE });
    const harness = h;
    const inventory = { enabled: true, intervalMs: INTERVAL_MS, pageEveryMs: PAGE_EVERY_MS };
    const a = await harness.startRun({ inventory });
    const b = await harness.startRun({ inventory });
    const t0 = a.clock.now();
    const first = await waitFor('a first pass', async () => (await inventoryOf(harness)).pass);
    // Several intervals of the service's time go by.
    await new Promise((r) => setTimeout(r, (3.5 * INTERVAL_MS) / TIME_SCALE));
    await Promise.all([a.inventory?.idle(), b.inventory?.idle()]);
    const elapsed = a.clock.now() - t0;
    const requests = (await requestLog(harness)).filter((r) => r.endpoint === 'inventory').length;
    const passes = requests / first.pages;
    expect(Number.isInteger(passes)).toBe(true);
    expect(passes).toBeGreaterThanOrEqual(2);
    expect(passes).toBeLessThanOrEqual(Math.floor(elapsed / INTERVAL_MS) + 1);
    expect([a.inventory?.isLeader, b.inventory?.isLeader].filter(Boolean)).toHaveLength(1);
    // A disabled policy without a rollout, target latest: its Collectors are counted, its target unresolved.
    const judged = (await inventoryOf(harness)).compliance?.policies.linux;
    expect(judged).toMatchObject({ target: null, targetFrom: null });
    expect(judged?.counts.unknown).toBe(judged?.counts.selected);
    expect(judged).not.toHaveProperty('belowSince');
  }, 90_000);
});
