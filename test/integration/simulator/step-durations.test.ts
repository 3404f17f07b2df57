/**
 * How long an upgrade takes, as a function of what predicts it: a Collector's OS picks the
 * distribution of one step (`behaviour.upgradeSeconds.byOs`), the build distance the number of
 * steps (increments above `incrementalAbove`). /_sim/collectors shows, per Collector, where its
 * step duration comes from; and config/fleets/two-durations.yaml is such a fleet.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSourceFile } from '../../../src/lib/source/yaml-source.js';
import { FleetSource, fleetOrgs } from '../../../src/simulator/fleet-source.js';
import {
  BUILDS,
  LATEST,
  simCollectorDetails,
  startTestSimulator,
  stopTestSimulators,
  testFleet,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** Fixed step durations (p95 = median): Linux by default 60 s, Windows 240 s, one Collector its own 30 s. */
const fleet = testFleet({
  collectors: [
    { id: 1, name: 'lin-near', version: '19.450-12', osName: 'Linux' },
    { id: 2, name: 'win-near', version: '19.450-12', osName: 'Windows Server 2019' },
    { id: 3, name: 'lin-far', version: '19.100-1', osName: 'Linux' },
    { id: 4, name: 'win-far', version: '19.100-1', osName: 'Windows Server 2019' },
    { id: 5, name: 'own', version: '19.450-12', osName: 'Windows Server 2019', upgradeSeconds: 30 },
  ],
  behaviour: {
    issueSeconds: 0,
    heartbeatSeconds: 1,
    upgradeSeconds: { median: 60, p95: 60, byOs: { 'Windows Server 2019': { median: 240, p95: 240 } } },
  },
});

describe('behaviour.upgradeSeconds.byOs and increments', () => {
  it('/_sim/collectors shows each Collector’s durationKind and stepSeconds', async () => {
    const t = await startTestSimulator(fleet);
    const byId = new Map((await simCollectorDetails(t)).map((c) => [c.id, c as Record<string, unknown>]));
    expect(byId.get(1)).toMatchObject({ durationKind: 'default', stepSeconds: { median: 60, p95: 60 } });
    expect(byId.get(2)).toMatchObject({ durationKind: 'os', stepSeconds: { median: 240, p95: 240 } });
    expect(byId.get(5)).toMatchObject({ durationKind: 'collector', stepSeconds: { median: 30, p95: 30 } });
  });

  it('a task takes steps × its OS’s step: Windows four times Linux, five builds three steps', async () => {
    const t = await startTestSimulator(fleet);
    for (const id of [1, 2, 3, 4, 5]) await t.createTask(id);
    t.clock.advance(3600_000);
    const byId = new Map((await simCollectorDetails(t)).map((c) => [c.id, c]));
    const took = (id: number) => {
      const task = byId.get(id)?.tasks[0];
      expect(task?.result, `task of ${id}`).toBe('succeeded');
      return ((task?.finishTime ?? 0) - (task?.requestTime ?? 0)) / 1000;
    };
    // Picked up at the next heartbeat (within 1 s), then the steps.
    const steps = (id: number) => (byId.get(id)?.tasks[0] as { steps?: string[] } | undefined)?.steps;
    expect(steps(1)).toEqual([LATEST]);
    expect(steps(3)).toEqual([BUILDS[2], BUILDS[4], LATEST]);
    expect(took(1)).toBeGreaterThanOrEqual(60);
    expect(took(1)).toBeLessThanOrEqual(61);
    expect(took(2)).toBeGreaterThanOrEqual(240);
    expect(took(2)).toBeLessThanOrEqual(241);
    expect(took(3)).toBeGreaterThanOrEqual(180);
    expect(took(3)).toBeLessThanOrEqual(181);
    expect(took(4)).toBeGreaterThanOrEqual(720);
    expect(took(4)).toBeLessThanOrEqual(721);
    expect(took(5)).toBeGreaterThanOrEqual(30);
    expect(took(5)).toBeLessThanOrEqual(31);
  });
});

describe('config/fleets/two-durations.yaml', () => {
  const file = join(ROOT, 'config', 'fleets', 'two-durations.yaml');

  it('a few hundred Collectors; Windows steps ~4× Linux ones; some several builds behind', async () => {
    const parsed = loadSourceFile(file, FleetSource);
    if ('orgs' in parsed) throw new Error(`${file} is meant as one organization`);
    const [org] = fleetOrgs(parsed);
    expect(org?.name).toBe('default');
    const t = await startTestSimulator(parsed);
    const all = await simCollectorDetails(t);
    expect(all.length).toBeGreaterThanOrEqual(200);
    expect(all.length).toBeLessThanOrEqual(1000);
    const median = (c: (typeof all)[number]) =>
      (c as unknown as { stepSeconds: { median: number } }).stepSeconds.median;
    const windows = all.filter((c) => c.osName.startsWith('Windows'));
    const linux = all.filter((c) => c.osName === 'Linux');
    expect(windows.length).toBeGreaterThan(20);
    expect(linux.length).toBeGreaterThan(100);
    for (const c of windows) expect(median(c)).toBe(240);
    for (const c of linux) expect(median(c)).toBe(60);
    const builds = org?.builds ?? [];
    const behind = all.map((c) => builds.length - 1 - builds.indexOf(c.version));
    // More than incrementalAbove (2) builds behind: in increments.
    expect(behind.filter((d) => d > 2).length).toBeGreaterThan(40);
    expect(behind.filter((d) => d >= 1 && d <= 2).length).toBeGreaterThan(40);
  });
});
