/** Conformance: 4.2 Get available builds (GET collectors/upgrades/targets) and the build target of 2.2. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  BUILDS,
  LATEST,
  parse,
  startTestSimulator,
  stopTestSimulators,
  Targets,
  testFleet,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

describe('4.2 response 200: an object with the key "targets", build targets of 2.2', () => {
  it('2.2: each target has exactly version (string) and latest (boolean)', async () => {
    const t = await startTestSimulator();
    const res = await t.api('GET', 'collectors/upgrades/targets');
    expect(res.status, res.text).toBe(200);
    const { targets } = parse(Targets, res.json);
    for (const target of targets) expect(Object.keys(target).sort()).toEqual(['latest', 'version']);
  });

  it('ordered from older to newer, the fleet builds, only the last with latest = true', async () => {
    const t = await startTestSimulator();
    const { targets } = parse(Targets, (await t.api('GET', 'collectors/upgrades/targets')).json);
    expect(targets).toEqual(BUILDS.map((version) => ({ version, latest: version === LATEST })));
  });

  it('a single-build fleet has one target, the latest', async () => {
    const t = await startTestSimulator(testFleet({ builds: ['20.1-2749'], collectors: [] }));
    const { targets } = parse(Targets, (await t.api('GET', 'collectors/upgrades/targets')).json);
    expect(targets).toEqual([{ version: '20.1-2749', latest: true }]);
  });

  it('builds that sort differently as strings stay in numeric order (19.115-37 < 19.245-6 < 20.1-2749)', async () => {
    const builds = ['9.99-1', '19.115-37', '19.245-6', '19.536-4', '20.1-2749'];
    const t = await startTestSimulator(testFleet({ builds, collectors: [] }));
    const { targets } = parse(Targets, (await t.api('GET', 'collectors/upgrades/targets')).json);
    expect(targets.map((x) => x.version)).toEqual(builds);
    expect(targets.map((x) => x.latest)).toEqual([false, false, false, false, true]);
  });
});
