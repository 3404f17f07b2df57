/**
 * Fault injection of the fleet file: a share of requests answered 500/503 (legacy bodies
 * internal.error / service.unavailable), added latency in simulated time, connections dropped
 * after the request was carried out, Collectors that go offline and come back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ApiResponse,
  C,
  expectLegacyError,
  LATEST,
  listCollectors,
  patchSimCollector,
  startTestSimulator,
  stopTestSimulators,
  testFleet,
  tick,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const CODE_OF: Record<number, string> = { 500: 'internal.error', 503: 'service.unavailable' };

function expectServerError(res: ApiResponse): void {
  expect([500, 503], res.text).toContain(res.status);
  expectLegacyError(res, res.status, CODE_OF[res.status]);
}

describe('faults.errorRatio: a share of requests answered 500 or 503', () => {
  it('errorRatio 1: every endpoint answers 500 internal.error or 503 service.unavailable in the legacy shape', async () => {
    const t = await startTestSimulator(testFleet({ faults: { errorRatio: 1 } }));
    for (let i = 0; i < 5; i++) {
      expectServerError(await t.api('GET', 'collectors/upgrades/collectors'));
      expectServerError(await t.api('GET', 'collectors/upgrades/targets'));
      expectServerError(await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }));
      expectServerError(await t.api('GET', 'collectors/upgrades/1'));
    }
  });

  it('errorRatio 1: the failure comes before anything is done (no task is created)', async () => {
    const t = await startTestSimulator(testFleet({ faults: { errorRatio: 1 } }));
    for (let i = 0; i < 5; i++) {
      expectServerError(await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }));
    }
    expect((await t.simCollector(C.web1)).tasks).toEqual([]);
    expect((await t.stats()).tasksCreated).toBe(0);
  });

  it('errorRatio 0.5: about half of the requests fail, the others answer normally; counted by status', async () => {
    const t = await startTestSimulator(testFleet({ faults: { errorRatio: 0.5 } }));
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await t.api('GET', 'collectors/upgrades/targets');
      if (res.status !== 200) expectServerError(res);
      statuses.push(res.status);
    }
    const failed = statuses.filter((s) => s !== 200).length;
    expect(failed).toBeGreaterThan(60);
    expect(failed).toBeLessThan(140);
    const byStatus = (await t.stats()).requests.byStatus;
    expect((byStatus['500'] ?? 0) + (byStatus['503'] ?? 0)).toBe(failed);
    expect(byStatus['200']).toBe(200 - failed);
  });

  it('errorRatio 0 (the default): no request fails', async () => {
    const t = await startTestSimulator();
    for (let i = 0; i < 50; i++) expect((await t.api('GET', 'collectors/upgrades/targets')).status).toBe(200);
  });

  it('the introspection endpoints are not subject to injected errors', async () => {
    const t = await startTestSimulator(testFleet({ faults: { errorRatio: 1 } }));
    for (let i = 0; i < 5; i++) {
      await t.stats();
      await t.simCollectors();
    }
  });
});

describe('faults.latencyMs: added latency per request, in simulated ms', () => {
  it('a request is not answered until the simulated latency has passed', async () => {
    const t = await startTestSimulator(testFleet({ faults: { latencyMs: 5000 } }));
    let answer: ApiResponse | undefined;
    const pending = t.api('GET', 'collectors/upgrades/targets').then((r) => {
      answer = r;
      return r;
    });
    for (let i = 0; i < 6; i++) await tick(5);
    expect(answer).toBeUndefined();
    t.clock.advance(4000);
    for (let i = 0; i < 4; i++) await tick(5);
    expect(answer).toBeUndefined();
    for (let i = 0; i < 100 && !answer; i++) {
      t.clock.advance(1000);
      await tick(5);
    }
    expect((await pending).status).toBe(200);
  });

  it('a latency range {min, max}: no answer before min', async () => {
    const t = await startTestSimulator(testFleet({ faults: { latencyMs: { min: 2000, max: 3000 } } }));
    let answer: ApiResponse | undefined;
    const pending = t.api('GET', 'collectors/upgrades/targets').then((r) => {
      answer = r;
      return r;
    });
    await tick(20);
    t.clock.advance(1999);
    await tick(20);
    expect(answer).toBeUndefined();
    for (let i = 0; i < 100 && !answer; i++) {
      t.clock.advance(500);
      await tick(5);
    }
    expect((await pending).status).toBe(200);
    // Answered by max (3000 simulated ms) at the latest, give or take one step.
  });
});

describe('faults.dropRatio: connections dropped after the request was carried out', () => {
  it('dropRatio 1: the client sees the connection close, yet the create was carried out', async () => {
    const t = await startTestSimulator(testFleet({ faults: { dropRatio: 1 } }));
    await expect(t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } })).rejects.toThrow();
    const c = await t.simCollector(C.web1);
    expect(c.tasks).toHaveLength(1);
    expect(c.tasks[0]?.toVersion).toBe(LATEST);
    expect((await t.stats()).tasksCreated).toBe(1);
  });

  it('dropRatio 1: GETs are dropped too; the introspection endpoints are not', async () => {
    const t = await startTestSimulator(testFleet({ faults: { dropRatio: 1 } }));
    await expect(t.api('GET', 'collectors/upgrades/targets')).rejects.toThrow();
    await expect(t.api('GET', 'collectors/upgrades/collectors')).rejects.toThrow();
    expect((await t.stats()).requests.byEndpoint.targets).toBe(1);
  });
});

describe('Collectors that go offline and come back over time', () => {
  it('faults.flapRatio 1: Collectors go offline and come back; listings and create follow', async () => {
    const fleet = testFleet({
      faults: { flapRatio: 1, flap: { onlineSeconds: 60, offlineSeconds: 60 } },
    });
    const t = await startTestSimulator(fleet);
    const seen: boolean[] = [];
    let refusedWhileOffline = false;
    let listedOffline = false;
    for (let step = 0; step < 300; step++) {
      t.clock.advance(20_000);
      const { alive } = await t.simCollector(C.web1);
      if (seen.at(-1) !== alive) seen.push(alive);
      if (!alive && !refusedWhileOffline) {
        const listed = (await listCollectors(t)).find((c) => c.id === C.web1);
        listedOffline = listed?.alive === false;
        const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
        expectLegacyError(res, 400, 'collector.not.alive');
        refusedWhileOffline = true;
      }
      if (seen.length >= 4 && refusedWhileOffline) break;
    }
    expect(seen.length, `alive over time: ${seen.join(' ')}`).toBeGreaterThanOrEqual(4);
    expect(refusedWhileOffline).toBe(true);
    expect(listedOffline).toBe(true);
  });

  it('a Collector with flap: true flaps even with flapRatio 0', async () => {
    const fleet = testFleet({
      collectors: [{ id: 1, name: 'flappy', version: '19.400-5', flap: true }],
      faults: { flapRatio: 0, flap: { onlineSeconds: 60, offlineSeconds: 60 } },
    });
    const t = await startTestSimulator(fleet);
    const seen: boolean[] = [];
    for (let step = 0; step < 300 && seen.length < 3; step++) {
      t.clock.advance(20_000);
      const { alive } = await t.simCollector(1);
      if (seen.at(-1) !== alive) seen.push(alive);
    }
    expect(seen.length, `alive over time: ${seen.join(' ')}`).toBeGreaterThanOrEqual(3);
  });

  it('faults.flapRatio 0: Collectors stay as they are', async () => {
    const t = await startTestSimulator();
    for (let step = 0; step < 50; step++) {
      t.clock.advance(60_000);
      expect((await t.simCollector(C.web1)).alive).toBe(true);
      expect((await t.simCollector(C.offline)).alive).toBe(false);
    }
  });

  it('offlineForSeconds: an offline Collector comes back after that long', async () => {
    const fleet = testFleet({
      collectors: [{ id: 1, name: 'rebooting', version: '19.400-5', alive: false, offlineForSeconds: 60 }],
    });
    const t = await startTestSimulator(fleet);
    const start = t.clock.now();
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: 1 } }),
      400,
      'collector.not.alive',
    );
    t.clock.set(start + 59_000);
    expect((await t.simCollector(1)).alive).toBe(false);
    t.clock.set(start + 61_000);
    expect((await t.simCollector(1)).alive).toBe(true);
    await t.createTask(1);
  });

  it('PATCH alive restores a Collector that was offline in the fleet file', async () => {
    const t = await startTestSimulator();
    await patchSimCollector(t, C.offline, { alive: true });
    expect((await listCollectors(t)).find((c) => c.id === C.offline)?.alive).toBe(true);
    await t.createTask(C.offline);
  });
});
