/**
 * A bad build for one cohort (issue #10): failure ratios by osName / osArch / target build
 * (behaviour.failureRatioBy) and failure messages by cause (behaviour.failureCauses, a
 * Collector's failureCause), over real HTTP on a manual clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  type CollectorRecord,
  causesMatching,
  type FailureCauseName,
  HEARTBEAT_SECONDS,
  ISSUE_SECONDS,
  LATEST,
  listCollectors,
  type SimCollectorDetail,
  simCollectorDetail,
  simCollectorDetails,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  TIMEOUT_SECONDS,
  testFleet,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const S = 1000;
const TIMED_OUT = /timed out/i;

/** Creates a task for each Collector, 50 requests at a time, then lets 30 minutes pass. */
async function upgradeAll(t: TestSimulator, ids: number[], toVersion?: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(ids.slice(i, i + 50).map((id) => t.createTask(id, toVersion)));
  }
  t.clock.advance(TIMEOUT_SECONDS * S);
}

function failureShare(cs: SimCollectorDetail[]): number {
  return cs.filter((c) => c.tasks[0]?.status === 3).length / cs.length;
}

describe('behaviour.failureRatioBy over a generated fleet', () => {
  const COUNT = 3000;
  const fleet = (failureCauses?: Record<string, number>) =>
    testFleet({
      collectors: [],
      generate: { count: COUNT, seed: 7, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
      behaviour: {
        upgradeSeconds: { median: 60, p95: 120 },
        failureRatio: 0.05,
        failureRatioBy: { osName: { 'Windows Server 2019': 0.4 } },
        ...(failureCauses ? { failureCauses } : {}),
      },
    });
  const WEIGHTS = { disk_space: 0.4, upgrades_disabled: 0.2, permission: 0.1, network: 0.2, unknown: 0.1 };

  it('one cohort fails at ~40 %, the others at ~the global ratio; failed ones keep their build', async () => {
    const t = await startTestSimulator(fleet(WEIGHTS));
    const before = await simCollectorDetails(t);
    await upgradeAll(
      t,
      before.map((c) => c.id),
    );
    const after = await simCollectorDetails(t);
    expect(after.every((c) => c.tasks[0]?.result === 'succeeded' || c.tasks[0]?.result === 'failed')).toBe(
      true,
    );
    const bad = after.filter((c) => c.osName === 'Windows Server 2019');
    const good = after.filter((c) => c.osName !== 'Windows Server 2019');
    // Binomial, three standard deviations: ~240 Collectors ±0.1, ~2760 ±0.013.
    expect(bad.length).toBeGreaterThan(150);
    expect(Math.abs(failureShare(bad) - 0.4)).toBeLessThan(0.1);
    expect(Math.abs(failureShare(good) - 0.05)).toBeLessThan(0.015);
    for (const osName of ['Windows Server 2022', 'Mac OS X', 'Linux']) {
      const cohort = after.filter((c) => c.osName === osName);
      expect(failureShare(cohort), osName).toBeLessThan(0.12);
    }
    const was = new Map(before.map((c) => [c.id, c.version]));
    for (const c of after) {
      const task = c.tasks[0] as SimCollectorDetail['tasks'][number];
      expect(c.version).toBe(task.status === 3 ? was.get(c.id) : LATEST);
    }
  });

  it('messages match their cause class, the causes follow failureCauses, /_sim/stats counts them', async () => {
    const t = await startTestSimulator(fleet(WEIGHTS));
    await upgradeAll(
      t,
      (await simCollectorDetails(t)).map((c) => c.id),
    );
    const failed = (await simCollectorDetails(t)).flatMap((c) => c.tasks.filter((task) => task.status === 3));
    expect(failed.length).toBeGreaterThan(150);
    const byCause: Record<string, number> = {};
    for (const task of failed) {
      const cause = task.cause as FailureCauseName;
      expect(cause).not.toBeNull();
      byCause[cause] = (byCause[cause] ?? 0) + 1;
      // Each message names its cause (and only it); unknown ones match no cause.
      expect(causesMatching(task.message), task.message).toEqual(cause === 'unknown' ? [] : [cause]);
      // Quick failures are not service time-outs, whatever the message says.
      expect((task.finishTime as number) - task.requestTime).toBeLessThan(TIMEOUT_SECONDS * S);
    }
    for (const [cause, weight] of Object.entries(WEIGHTS)) {
      expect(Math.abs((byCause[cause] ?? 0) / failed.length - weight), cause).toBeLessThan(0.1);
    }
    const stats = await t.stats();
    expect(stats.failuresByCause).toEqual({ ...byCause, custom: 0 });
    expect(stats.tasksByOutcome.failed).toBe(failed.length);
  });

  it('the same seed and the same requests fail the same Collectors with the same messages', async () => {
    const run = async () => {
      const t = await startTestSimulator(fleet(WEIGHTS));
      const ids = (await simCollectorDetails(t)).map((c) => c.id).slice(0, 600);
      for (const id of ids) await t.createTask(id);
      t.clock.advance(TIMEOUT_SECONDS * S);
      return (await simCollectorDetails(t, ids)).map((c) => [c.id, c.tasks[0]?.status, c.tasks[0]?.message]);
    };
    expect(await run()).toEqual(await run());
  });
});

describe('behaviour.failureRatioBy: osArch, several matches, a lower cohort ratio, builds', () => {
  const collectors = [
    { id: 1, version: '19.400-5', osName: 'Linux', osArch: 'aarch64', upgradeSeconds: 60 },
    { id: 2, version: '19.400-5', osName: 'Linux', osArch: 'amd64', upgradeSeconds: 60 },
    { id: 3, version: '19.400-5', osName: 'Mac OS X', osArch: 'aarch64', upgradeSeconds: 60 },
    { id: 4, version: '19.400-5', osName: 'Windows Server 2019', osArch: 'amd64', upgradeSeconds: 60 },
  ];
  const statuses = async (t: TestSimulator, ids: string[]) =>
    Promise.all(ids.map(async (id) => (await t.task(id)).status));

  it('the largest matching ratio applies; a matching cohort ratio replaces failureRatio, also downwards', async () => {
    const t = await startTestSimulator(
      testFleet({
        collectors,
        behaviour: {
          failureRatio: 1,
          failureRatioBy: { osName: { Linux: 0, 'Mac OS X': 0 }, osArch: { aarch64: 1 } },
        },
      }),
    );
    const ids = [];
    for (const c of collectors) ids.push(await t.createTask(c.id));
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    // Linux aarch64: max(0, 1); Linux amd64: 0; Mac aarch64: max(0, 1); Windows: no match, failureRatio 1.
    expect(await statuses(t, ids)).toEqual([3, 2, 3, 3]);
  });

  it('builds: the cohort ratios apply only to tasks to those builds', async () => {
    const t = await startTestSimulator(
      testFleet({
        collectors,
        behaviour: { failureRatio: 0, failureRatioBy: { osArch: { aarch64: 1 }, builds: [LATEST] } },
      }),
    );
    const toOther = [await t.createTask(1, '19.450-12'), await t.createTask(3, '19.450-12')];
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    expect(await statuses(t, toOther)).toEqual([2, 2]);
    const toLatest = [];
    for (const id of [1, 2, 3]) toLatest.push(await t.createTask(id, LATEST));
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    expect(await statuses(t, toLatest)).toEqual([3, 2, 3]);
  });
});

describe('failure causes of one Collector', () => {
  const causes: FailureCauseName[] = ['disk_space', 'upgrades_disabled', 'permission', 'network', 'unknown'];

  it('failureCause: every failed task of the Collector carries a message of that cause', async () => {
    const collectors = causes.flatMap((failureCause, i) =>
      [20 + 2 * i, 21 + 2 * i].map((id) => ({
        id,
        version: '19.400-5',
        outcome: 'fail' as const,
        upgradeSeconds: 60,
        failureCause,
      })),
    );
    const t = await startTestSimulator(testFleet({ collectors }));
    const ids = collectors.map((c) => c.id);
    for (const id of ids) await t.createTask(id);
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    const seen = new Set<string>();
    for (const c of await simCollectorDetails(t, ids)) {
      const task = c.tasks[0] as SimCollectorDetail['tasks'][number];
      expect(c.failureCause).not.toBeNull();
      expect(task).toMatchObject({ status: 3, result: 'failed', cause: c.failureCause });
      expect(causesMatching(task.message)).toEqual(c.failureCause === 'unknown' ? [] : [c.failureCause]);
      seen.add(task.message);
    }
    // Two messages per cause: the Collector's id picks one (even: the first, odd: the second).
    expect(seen.size).toBe(2 * causes.length);
  });

  it('network, "connection timed out": a quick failure, unlike the service time-out at 30 minutes', async () => {
    const t = await startTestSimulator(
      testFleet({
        collectors: [
          { id: 11, version: '19.400-5', outcome: 'fail', upgradeSeconds: 60, failureCause: 'network' },
          { id: 12, version: '19.400-5', outcome: 'stuck', upgradeSeconds: 60 },
        ],
      }),
    );
    const quick = await t.createTask(11);
    const slow = await t.createTask(12);
    const { requestTime } = await t.task(quick);
    t.at(requestTime, (ISSUE_SECONDS + HEARTBEAT_SECONDS + 60) * S + 1);
    const failed = await t.task(quick);
    expect(failed).toMatchObject({
      status: 3,
      message: 'Upgrade failed: could not download the installer: connection timed out.',
    });
    expect((await t.task(slow)).status).not.toBe(3);
    t.at(requestTime, TIMEOUT_SECONDS * S);
    const timedOut = await t.task(slow);
    expect(timedOut.status).toBe(3);
    expect(timedOut.message).toMatch(TIMED_OUT);
    expect(timedOut.message).not.toBe(failed.message);
    expect((await simCollectorDetail(t, 12)).tasks[0]).toMatchObject({ result: 'timedOut', cause: null });
  });

  it('failureMessage wins over failureCause (the cause is still recorded); without a cause it counts as custom', async () => {
    const t = await startTestSimulator(
      testFleet({
        collectors: [
          {
            id: 1,
            version: '19.400-5',
            outcome: 'fail',
            upgradeSeconds: 60,
            failureCause: 'disk_space',
            failureMessage: 'Disk /opt is full',
          },
          {
            id: 2,
            version: '19.400-5',
            outcome: 'fail',
            upgradeSeconds: 60,
            failureMessage: 'Something odd',
          },
        ],
      }),
    );
    const a = await t.createTask(1);
    const b = await t.createTask(2);
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    expect(await t.task(a)).toMatchObject({ status: 3, message: 'Disk /opt is full' });
    expect(await t.task(b)).toMatchObject({ status: 3, message: 'Something odd' });
    const [one, two] = await simCollectorDetails(t, [1, 2]);
    expect(one?.tasks[0]?.cause).toBe('disk_space');
    expect(two?.tasks[0]?.cause).toBeNull();
    expect((await t.stats()).failuresByCause).toMatchObject({ disk_space: 1, custom: 1 });
  });
});

describe('defaults: the fleet file without the new fields behaves as before', () => {
  const LEGACY_MESSAGES = [
    'Upgrade failed: not enough disk space on the host to unpack the new build.',
    "Upgrade failed: permission denied while replacing files in the Collector's installation directory.",
    'Upgrade failed: could not download the installer (connection reset by peer).',
    'Upgrade refused: remote upgrades are disabled on this Collector (disableUpgrade=true).',
    'Upgrade failed: the new build did not start; the Collector rolled back to the previous version.',
  ];

  it('failed tasks get one of the five messages of old, none says "timed out"; causes are recorded', async () => {
    const collectors = Array.from({ length: 60 }, (_, i) => ({
      id: 1 + i,
      version: '19.400-5',
      outcome: 'fail' as const,
      upgradeSeconds: 60,
    }));
    const t = await startTestSimulator(testFleet({ collectors }));
    for (const c of collectors) await t.createTask(c.id);
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    const seen = new Set<string>();
    for (const c of await simCollectorDetails(t)) {
      const task = c.tasks[0] as SimCollectorDetail['tasks'][number];
      expect(LEGACY_MESSAGES).toContain(task.message);
      expect(task.message).not.toMatch(TIMED_OUT);
      expect(causesMatching(task.message)).toEqual(task.cause === 'unknown' ? [] : [task.cause]);
      seen.add(task.message);
    }
    expect(seen.size).toBe(5);
  });

  it('no Collector stops after an upgrade, and offline Collectors are as they were', async () => {
    const t = await startTestSimulator();
    const all = await simCollectorDetails(t);
    expect(all.some((c) => c.stopsAfterUpgrade)).toBe(false);
    const id = await t.createTask(C.web1);
    t.clock.advance(TIMEOUT_SECONDS * S * 3);
    expect((await t.task(id)).status).toBe(2);
    expect(await simCollectorDetail(t, C.web1)).toMatchObject({ running: true, stopDueAt: null, stops: [] });
    const listed = (await listCollectors(t, 'toVersion=19.100-1')).find(
      (c) => c.id === C.web1,
    ) as CollectorRecord;
    expect(listed).toMatchObject({ alive: true, collectorVersion: LATEST });
    expect((await t.stats()).stoppedAfterUpgrade).toBe(0);
  });
});
