/**
 * POST /_sim/builds: a new latest build released while the simulator runs, as the vendor
 * releases builds during a rollout. The four endpoints then offer it as the latest.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { C, LATEST, startTestSimulator, stopTestSimulators } from '../../support/simulator.js';

afterEach(stopTestSimulators);

describe('releasing a build while running', () => {
  it('makes it the latest: targets, the listing default and creates without toVersion use it', async () => {
    const t = await startTestSimulator();
    const released = await t.raw('POST', '/_sim/builds', { body: { version: '19.480-1' } });
    expect(released.status).toBe(201);
    expect(released.json).toMatchObject({ latest: '19.480-1' });
    const targets = (await t.api('GET', 'collectors/upgrades/targets')).json as {
      targets: { version: string; latest: boolean }[];
    };
    expect(targets.targets.slice(-2)).toEqual([
      { version: LATEST, latest: false },
      { version: '19.480-1', latest: true },
    ]);
    // Collectors on the former latest are upgradable again by default.
    const listed = (await t.api('GET', 'collectors/upgrades/collectors?limit=1000')).json as {
      collectors: { id: number }[];
    };
    expect(listed.collectors.map((c) => c.id)).toContain(C.upToDate);
    const id = await t.createTask(C.upToDate);
    expect((await t.task(id)).toVersion).toBe('19.480-1');
  });

  it('refuses a build that is not newer than the latest, or not a build', async () => {
    const t = await startTestSimulator();
    for (const version of [LATEST, '19.100-1', 'abc', '']) {
      const res = await t.raw('POST', '/_sim/builds', { body: { version } });
      expect(res.status, version).toBe(400);
    }
    const builds = (await t.raw('GET', '/_sim/builds')).json as { latest: string };
    expect(builds.latest).toBe(LATEST);
  });
});
