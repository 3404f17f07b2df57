/**
 * What post-upgrade verification observes (issue #10): lastSeenAlive advancing while a Collector
 * runs, freezing when it stops, `alive: false` offlineAfterSeconds after its last heartbeat, and
 * Collectors that stop some time after a successful upgrade (behaviour.stopAfterUpgrade), over
 * real HTTP on a manual clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  BUILDS,
  C,
  type CollectorRecord,
  expectLegacyError,
  HEARTBEAT_SECONDS,
  ISSUE_SECONDS,
  LATEST,
  listAllCollectors,
  listCollectors,
  OFFLINE_AFTER_SECONDS,
  patchSimCollector,
  simCollectorDetail,
  simCollectorDetails,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  TIMEOUT_SECONDS,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const S = 1000;
const HEARTBEAT_MS = HEARTBEAT_SECONDS * S;
/** A task on a test Collector is over by then (issue, next heartbeat, one upgrade step). */
const DONE_MS = (ISSUE_SECONDS + HEARTBEAT_SECONDS + UPGRADE_SECONDS) * S + 1;
const OLDEST = BUILDS[0];

/** The record of `id` in the listing for `toVersion` (default: the oldest build), if listed. */
async function listed(t: TestSimulator, id: number, toVersion: string = OLDEST) {
  return (await listCollectors(t, `toVersion=${toVersion}&limit=1000`)).find((c) => c.id === id);
}

function expectHeartbeatAt(lastSeenAlive: number, now: number) {
  expect(lastSeenAlive).toBeLessThanOrEqual(now);
  expect(lastSeenAlive).toBeGreaterThan(now - HEARTBEAT_MS);
}

describe('lastSeenAlive while a Collector runs', () => {
  it('is its last heartbeat and advances with the simulated clock, in the listing and in /_sim', async () => {
    const t = await startTestSimulator();
    const first = (await listed(t, C.web1, LATEST)) as CollectorRecord;
    expect(first.alive).toBe(true);
    expectHeartbeatAt(first.lastSeenAlive, t.clock.now());
    for (const step of [7 * S, 10 * 60 * S, 3 * 3600 * S + 123]) {
      t.clock.advance(step);
      const now = t.clock.now();
      const rec = (await listed(t, C.web1, LATEST)) as CollectorRecord;
      expectHeartbeatAt(rec.lastSeenAlive, now);
      // Heartbeats come every heartbeatSeconds, on the Collector's own phase.
      expect((rec.lastSeenAlive - first.lastSeenAlive) % HEARTBEAT_MS).toBe(0);
      expect((await simCollectorDetail(t, C.web1)).lastSeenAlive).toBe(rec.lastSeenAlive);
    }
  });

  it('an offline Collector: lastSeenAlive in the past and not moving', async () => {
    const t = await startTestSimulator();
    const before = (await listed(t, C.offline, LATEST)) as CollectorRecord;
    expect(before.alive).toBe(false);
    expect(before.lastSeenAlive).toBeLessThan(t.clock.now() - OFFLINE_AFTER_SECONDS * S);
    t.clock.advance(3600 * S);
    expect((await listed(t, C.offline, LATEST))?.lastSeenAlive).toBe(before.lastSeenAlive);
  });
});

describe('a Collector that stops heartbeating (PATCH /_sim/collectors/:id {"running": false})', () => {
  it('lastSeenAlive freezes; alive until offlineAfterSeconds after the last heartbeat; then alive: false', async () => {
    const t = await startTestSimulator();
    t.clock.advance(37 * S);
    const stoppedAt = t.clock.now();
    const patched = await patchSimCollector(t, C.web1, { running: false });
    expect(patched).toMatchObject({ running: false, alive: true, stoppedAt, stopDueAt: null });
    expect(patched.stops).toEqual([{ at: stoppedAt, afterTask: null, restartedAt: null }]);
    const frozen = patched.lastSeenAlive;
    expectHeartbeatAt(frozen, stoppedAt);

    t.clock.advance(20 * 60 * S);
    expect(await listed(t, C.web1, LATEST)).toMatchObject({ alive: true, lastSeenAlive: frozen });
    t.at(frozen, OFFLINE_AFTER_SECONDS * S - 1);
    expect(await listed(t, C.web1, LATEST)).toMatchObject({ alive: true, lastSeenAlive: frozen });
    t.at(frozen, OFFLINE_AFTER_SECONDS * S);
    expect(await listed(t, C.web1, LATEST)).toMatchObject({ alive: false, lastSeenAlive: frozen });
    expect(await simCollectorDetail(t, C.web1)).toMatchObject({ alive: false, running: false, stoppedAt });
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }),
      400,
      'collector.not.alive',
    );
  });

  it('a task created while it is stopped but still listed alive is accepted and never picked up: it times out', async () => {
    const t = await startTestSimulator();
    await patchSimCollector(t, C.web2, { running: false });
    const id = await t.createTask(C.web2);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS + 10 * 60 * S);
    expect((await t.task(id)).status).toBe(1);
    t.at(requestTime, TIMEOUT_SECONDS * S + 1);
    expect((await t.task(id)).status).toBe(3);
    expect((await simCollectorDetail(t, C.web2)).version).toBe('19.450-12');
  });

  it('a task issued while it was stopped is picked up once it restarts, and succeeds', async () => {
    const t = await startTestSimulator();
    await patchSimCollector(t, C.web2, { running: false });
    const id = await t.createTask(C.web2);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS + 5 * 60 * S);
    expect((await t.task(id)).status).toBe(1);
    await patchSimCollector(t, C.web2, { running: true });
    t.clock.advance(DONE_MS);
    expect((await t.task(id)).status).toBe(2);
    expect((await simCollectorDetail(t, C.web2)).version).toBe(LATEST);
  });

  it('{"running": true} restarts it: heartbeats again, alive again, the stop records its restart', async () => {
    const t = await startTestSimulator();
    const { lastSeenAlive: frozen } = await patchSimCollector(t, C.web1, { running: false });
    t.at(frozen, OFFLINE_AFTER_SECONDS * S + 60 * S);
    expect((await simCollectorDetail(t, C.web1)).alive).toBe(false);
    const restartedAt = t.clock.now();
    const back = await patchSimCollector(t, C.web1, { running: true });
    expect(back).toMatchObject({ alive: true, running: true, stoppedAt: null });
    expect(back.stops[0]?.restartedAt).toBe(restartedAt);
    t.clock.advance(2 * HEARTBEAT_MS);
    const rec = (await listed(t, C.web1, LATEST)) as CollectorRecord;
    expect(rec.alive).toBe(true);
    expectHeartbeatAt(rec.lastSeenAlive, t.clock.now());
  });

  it('{"alive": true} restarts a stopped Collector too', async () => {
    const t = await startTestSimulator();
    await patchSimCollector(t, C.web1, { running: false });
    t.clock.advance(10 * 60 * S);
    expect(await patchSimCollector(t, C.web1, { alive: true })).toMatchObject({
      running: true,
      stoppedAt: null,
    });
  });
});

/** A Mac Collector that stops some time after each successful upgrade, and one that does not. */
function stoppingFleet(
  listOffline: boolean,
  stopAfterUpgrade: Record<string, unknown> = { afterSeconds: 300 },
) {
  const mac = { osName: 'Mac OS X', osVersion: '14.5', osArch: 'aarch64' };
  return testFleet({
    listOffline,
    collectors: [
      {
        id: 1,
        name: 'mbp-ci-1',
        version: '19.400-5',
        ...mac,
        outcome: 'succeed',
        upgradeSeconds: UPGRADE_SECONDS,
      },
      {
        id: 2,
        name: 'mbp-ci-2',
        version: '19.400-5',
        ...mac,
        outcome: 'succeed',
        upgradeSeconds: UPGRADE_SECONDS,
        stopsAfterUpgrade: true,
      },
      {
        id: 3,
        name: 'mbp-ci-3',
        version: LATEST,
        ...mac,
        outcome: 'succeed',
        upgradeSeconds: UPGRADE_SECONDS,
      },
    ],
    behaviour: { stopAfterUpgrade },
  });
}

describe('behaviour.stopAfterUpgrade: stopping some time after a successful upgrade', () => {
  it.each([
    [true, 'listed with alive: false'],
    [false, 'no longer listed'],
  ])(
    'listOffline %s: the task succeeds, the build changes, then lastSeenAlive freezes and the Collector is %s',
    async (listOffline) => {
      const t = await startTestSimulator(stoppingFleet(listOffline));
      expect((await simCollectorDetail(t, 2)).stopsAfterUpgrade).toBe(true);
      expect((await simCollectorDetail(t, 1)).stopsAfterUpgrade).toBe(false);
      const a = await t.createTask(1);
      const b = await t.createTask(2);
      const { requestTime } = await t.task(b);
      t.at(requestTime, DONE_MS);
      expect(await t.task(b)).toMatchObject({ status: 2, message: '' });
      expect((await t.task(a)).status).toBe(2);

      const done = await simCollectorDetail(t, 2);
      const finishTime = done.tasks[0]?.finishTime as number;
      expect(done).toMatchObject({
        version: LATEST,
        running: true,
        stoppedAt: null,
        stopDueAt: finishTime + 300 * S,
      });
      // Seen alive on the target build, heartbeating, through the listing for another build.
      t.at(finishTime, 300 * S - 1);
      const running = (await listed(t, 2)) as CollectorRecord;
      expect(running).toMatchObject({ collectorVersion: LATEST, alive: true });
      expect(running.lastSeenAlive).toBeGreaterThan(finishTime);
      expectHeartbeatAt(running.lastSeenAlive, t.clock.now());

      t.at(finishTime, 300 * S);
      const stopped = await simCollectorDetail(t, 2);
      expect(stopped).toMatchObject({
        running: false,
        alive: true,
        stoppedAt: finishTime + 300 * S,
        stopDueAt: null,
      });
      expect(stopped.stops).toEqual([{ at: finishTime + 300 * S, afterTask: Number(b), restartedAt: null }]);
      const frozen = stopped.lastSeenAlive;
      expectHeartbeatAt(frozen, finishTime + 300 * S);

      t.at(frozen, OFFLINE_AFTER_SECONDS * S - 1);
      expect(await listed(t, 2)).toMatchObject({
        alive: true,
        lastSeenAlive: frozen,
        collectorVersion: LATEST,
      });
      t.at(frozen, OFFLINE_AFTER_SECONDS * S);
      const after = await listed(t, 2);
      if (listOffline)
        expect(after).toMatchObject({ alive: false, lastSeenAlive: frozen, collectorVersion: LATEST });
      else expect(after).toBeUndefined();
      expect(await simCollectorDetail(t, 2)).toMatchObject({ alive: false, version: LATEST });
      // The task stays succeeded; the other Collector keeps heartbeating.
      expect(await t.task(b)).toMatchObject({ status: 2, message: '' });
      const other = (await listed(t, 1)) as CollectorRecord;
      expect(other).toMatchObject({ alive: true, collectorVersion: LATEST });
      expectHeartbeatAt(other.lastSeenAlive, t.clock.now());
      expect((await t.stats()).stoppedAfterUpgrade).toBe(1);
    },
  );

  it('ratio 1 stops every Collector without an override; stopsAfterUpgrade: false never stops; a downgrade does not stop', async () => {
    const fleet = stoppingFleet(true, { ratio: 1, afterSeconds: 0 });
    fleet.collectors = fleet.collectors?.map((c) => (c.id === 1 ? { ...c, stopsAfterUpgrade: false } : c));
    const t = await startTestSimulator(fleet);
    expect((await simCollectorDetails(t, [1, 2, 3])).map((c) => c.stopsAfterUpgrade)).toEqual([
      false,
      true,
      true,
    ]);
    const ids = [await t.createTask(1), await t.createTask(2), await t.createTask(3, '19.450-12')];
    const { requestTime } = await t.task(ids[0] as string);
    t.at(requestTime, DONE_MS + 3600 * S);
    for (const id of ids) expect((await t.task(id)).status).toBe(2);
    const [one, two, three] = await simCollectorDetails(t, [1, 2, 3]);
    expect(one).toMatchObject({ running: true, alive: true, stops: [] });
    // afterSeconds 0: it stops the instant its upgrade succeeds.
    expect(two).toMatchObject({ running: false, alive: false, stoppedAt: two?.tasks[0]?.finishTime });
    expect(three).toMatchObject({ version: '19.450-12', running: true, stops: [] });
  });

  it('a rollback that succeeds before the stop is due cancels the stop', async () => {
    const t = await startTestSimulator(stoppingFleet(true, { afterSeconds: 3600 }));
    const up = await t.createTask(2);
    const { requestTime } = await t.task(up);
    t.at(requestTime, DONE_MS);
    expect((await simCollectorDetail(t, 2)).stopDueAt).not.toBeNull();
    const down = await t.createTask(2, '19.400-5');
    t.at(requestTime, 2 * DONE_MS);
    expect((await t.task(down)).status).toBe(2);
    expect(await simCollectorDetail(t, 2)).toMatchObject({ version: '19.400-5', stopDueAt: null });
    t.at(requestTime, 3 * 3600 * S);
    expect(await simCollectorDetail(t, 2)).toMatchObject({ running: true, alive: true, stops: [] });
  });

  it('restartAfterSeconds: the stopped Collector comes back, heartbeats and is alive again', async () => {
    const t = await startTestSimulator(
      stoppingFleet(true, { afterSeconds: 60, restartAfterSeconds: OFFLINE_AFTER_SECONDS + 600 }),
    );
    const id = await t.createTask(2);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS + 60 * S);
    const { stoppedAt } = await simCollectorDetail(t, 2);
    expect(stoppedAt).not.toBeNull();
    const restartAt = (stoppedAt as number) + (OFFLINE_AFTER_SECONDS + 600) * S;
    t.clock.set(restartAt - 1);
    expect(await simCollectorDetail(t, 2)).toMatchObject({ alive: false, running: false });
    t.clock.set(restartAt + HEARTBEAT_MS);
    const back = await simCollectorDetail(t, 2);
    expect(back).toMatchObject({ alive: true, running: true, stoppedAt: null });
    expect(back.stops).toEqual([{ at: stoppedAt, afterTask: Number(id), restartedAt: restartAt }]);
    expectHeartbeatAt(back.lastSeenAlive, t.clock.now());
  });
});

describe('behaviour.stopAfterUpgrade over a generated fleet: ratio, byOs, deterministic by seed', () => {
  const COUNT = 3000;
  const fleet = (seed: number) =>
    testFleet({
      collectors: [],
      seed,
      generate: { count: COUNT, seed: 7, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
      behaviour: {
        upgradeSeconds: { median: 60, p95: 120 },
        stopAfterUpgrade: { ratio: 0.1, byOs: { 'Mac OS X': 0.8 } },
      },
    });
  const share = (xs: { stopsAfterUpgrade: boolean }[]) =>
    xs.filter((c) => c.stopsAfterUpgrade).length / xs.length;

  it('the shares per OS hold within a tolerance, and the same seed stops the same Collectors', async () => {
    const t = await startTestSimulator(fleet(5));
    const all = await simCollectorDetails(t);
    expect(all).toHaveLength(COUNT);
    const mac = all.filter((c) => c.osName === 'Mac OS X');
    const rest = all.filter((c) => c.osName !== 'Mac OS X');
    // Binomial: three standard deviations (Mac ~150 Collectors: ±0.1; the rest ~2850: ±0.017).
    expect(mac.length).toBeGreaterThan(100);
    expect(Math.abs(share(mac) - 0.8)).toBeLessThan(0.1);
    expect(Math.abs(share(rest) - 0.1)).toBeLessThan(0.02);

    const same = await simCollectorDetails(await startTestSimulator(fleet(5)));
    expect(same.map((c) => c.stopsAfterUpgrade)).toEqual(all.map((c) => c.stopsAfterUpgrade));
    const other = await simCollectorDetails(await startTestSimulator(fleet(6)));
    expect(other.map((c) => c.stopsAfterUpgrade)).not.toEqual(all.map((c) => c.stopsAfterUpgrade));
    expect(Math.abs(share(other.filter((c) => c.osName !== 'Mac OS X')) - 0.1)).toBeLessThan(0.02);
  });

  it('after upgrading the whole fleet, exactly those Collectors stop, after the drawn delays, and turn alive: false', async () => {
    const t = await startTestSimulator(fleet(5));
    const before = await simCollectorDetails(t);
    for (const c of before) await t.createTask(c.id);
    t.clock.advance(TIMEOUT_SECONDS * S);
    const upgraded = await simCollectorDetails(t);
    expect(upgraded.every((c) => c.version === LATEST && c.tasks[0]?.status === 2)).toBe(true);
    t.clock.advance(3 * 3600 * S);
    const later = await simCollectorDetails(t);
    const delays: number[] = [];
    for (const c of later) {
      if (!c.stopsAfterUpgrade) {
        expect(c, `collector ${c.id}`).toMatchObject({ running: true, alive: true, stops: [] });
        continue;
      }
      const finish = c.tasks[0]?.finishTime as number;
      expect(c, `collector ${c.id}`).toMatchObject({ running: false, alive: false });
      expect(c.stops).toEqual([{ at: c.stoppedAt, afterTask: c.tasks[0]?.id, restartedAt: null }]);
      expect(c.lastSeenAlive).toBeLessThanOrEqual(c.stoppedAt as number);
      delays.push((c.stoppedAt as number) - finish);
    }
    // The default afterSeconds: log-normal with median 120 s and p95 600 s.
    delays.sort((x, y) => x - y);
    expect(delays[0]).toBeGreaterThanOrEqual(0);
    const median = delays[Math.floor(delays.length / 2)] as number;
    expect(median / S).toBeGreaterThan(90);
    expect(median / S).toBeLessThan(160);
    expect((await t.stats()).stoppedAfterUpgrade).toBe(delays.length);
    // The listing for another build shows them on the new build, alive: false, lastSeenAlive frozen.
    const listedNow = new Map((await listAllCollectors(t, OLDEST)).map((c) => [c.id, c]));
    for (const c of later) {
      expect(listedNow.get(c.id)).toMatchObject({
        collectorVersion: LATEST,
        alive: !c.stopsAfterUpgrade,
        lastSeenAlive: c.lastSeenAlive,
      });
    }
  });
});
