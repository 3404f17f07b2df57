/**
 * Version targets of #21 through the real path (the scheduler and workers of `run` on the real
 * Redis, the simulator over HTTP at an accelerated clock): `latest-1` goes to the build before
 * the latest and follows a new one; `minAge` starts a build only once this deployment first saw
 * it that long ago, the first sighting kept across a restart of `run`; `minimumBuild` moves the
 * Collectors below it through a closed window and a freeze, under the in-flight limit, and no
 * other; `knownIssues` keep matching Collectors from any task (skip with the note, manual on the
 * worklist with the note).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { formatStatus } from '../../../src/cli/render/format-status.js';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { converged, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];

function fleet(collectors: FleetFileInput['collectors'], builds = BUILDS): FleetFileInput {
  return { builds, collectors, behaviour: { incrementalAbove: 0 } };
}

const on = (version: string, ids: number[], patch: Record<string, unknown> = {}) =>
  ids.map((id) => ({ id, version, outcome: 'succeed' as const, upgradeSeconds: 120, ...patch }));

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function release(h: Harness, version: string): Promise<void> {
  const res = await fetch(`${h.sim.url}/_sim/builds`, { method: 'POST', body: JSON.stringify({ version }) });
  expect(res.status).toBe(201);
}

const byId = (s: FleetStatus, id: string) => s.rollouts.find((r) => r.id === id) as RolloutStatus | undefined;

const POLL = { initial: '30s', max: '1m' };

describe('latest-N', () => {
  it('latest-1 goes to the build before the latest, and follows when a newer latest appears', async () => {
    harness = await startHarness({
      timeScale: 600,
      fleet: fleet(on('19.400-5', range(1, 6))),
      policy: { name: 'behind', target: 'latest-1', maxInFlight: 3, poll: POLL },
    });
    const h = harness;
    await h.startRun();
    const first = await h.waitFor((s) => byId(s, 'behind@19.450-12')?.phase === 'converged', 30_000);
    expect(first.rollouts.map((r) => r.id)).toEqual(['behind@19.450-12']);
    expect((await h.simCollectors()).map((c) => c.version)).toEqual(Array(6).fill('19.450-12'));

    await release(h, '19.480-2');
    await h.waitFor((s) => byId(s, 'behind@19.470-4')?.phase === 'converged', 30_000);
    const sim = await h.simCollectors();
    expect(sim.map((c) => c.version)).toEqual(Array(6).fill('19.470-4'));
    // Never the latest itself.
    expect(sim.flatMap((c) => c.tasks.map((t) => t.toVersion))).not.toContain('19.480-2');
  }, 90_000);
});

describe('minAge', () => {
  it('a build starts once first seen minAge ago; the first sighting is kept across a restart of run', async () => {
    const scale = 600;
    const minAge = 3_600_000; // 1h simulated: 6 real seconds
    harness = await startHarness({
      timeScale: scale,
      fleet: fleet(on('19.400-5', range(1, 4)), ['19.400-5', '19.450-12']),
      policy: { name: 'aged', minAge: '1h', maxInFlight: 4, poll: POLL },
    });
    const h = harness;
    const seenKey = h.keys.buildsSeen('default');
    let run = await h.startRun();
    const young = await h.waitFor((s) => s.targetWaits.some((w) => w.policy === 'aged'), 10_000);
    const wait = young.targetWaits.find((w) => w.policy === 'aged');
    expect(wait).toMatchObject({ kind: 'age', reason: 'young', build: '19.450-12' });
    expect(wait?.text).toMatch(/first seen here .*becomes a target once 1h old, at \d{4}-\d\d-\d\d/);
    const firstSeen = Number(await h.redis.hget(seenKey, '19.450-12'));
    expect(firstSeen).toBeGreaterThan(0);
    expect(wait?.until).toBe(firstSeen + minAge);
    expect(young.rollouts).toEqual([]);

    // A restart a while later: the build's age counts from its first sighting, not the restart.
    const clock = run.clock;
    await run.stop();
    await new Promise((r) => setTimeout(r, 2500));
    const restartedAt = clock.now();
    run = await h.startRun();
    const started = await h.waitFor((s) => byId(s, 'aged@19.450-12') !== undefined, 20_000);
    expect(Number(await h.redis.hget(seenKey, '19.450-12'))).toBe(firstSeen);
    const startedAt = byId(started, 'aged@19.450-12')?.startedAt as number;
    expect(startedAt).toBeGreaterThanOrEqual(firstSeen + minAge);
    expect(startedAt).toBeLessThan(restartedAt + minAge);
    // A build released now is young again; the one that started converges.
    await release(h, '19.470-4');
    await h.waitFor((s) => byId(s, 'aged@19.450-12')?.phase === 'converged', 30_000);
    const later = await h.waitFor(
      (s) => s.targetWaits.some((w) => w.policy === 'aged' && w.build === '19.470-4'),
      10_000,
    );
    expect(later.targetWaits.find((w) => w.policy === 'aged')?.running).toBe('19.450-12');
    expect(byId(later, 'aged@19.470-4')).toBeUndefined();
  }, 90_000);
});

describe('minimumBuild', () => {
  it('with a window closed and a freeze in force, the Collectors below the minimum move, under the in-flight limit; the others wait', async () => {
    const scale = 300;
    // The deployment's clock starts at the wall clock's now: a window three days away is closed
    // for the whole test, and a freeze spans it.
    const now = Date.now();
    const day = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'][new Date(now + 3 * 86_400_000).getUTCDay()];
    const iso = (ms: number) => new Date(ms).toISOString().slice(0, 16).concat('Z');
    harness = await startHarness({
      timeScale: scale,
      // 1-8 below the minimum, 9-12 at it: all behind the target.
      fleet: fleet([...on('19.400-5', range(1, 8)), ...on('19.450-12', range(9, 12))]),
      policy: {
        name: 'floor',
        minimumBuild: '19.450-12',
        maxInFlight: 2,
        poll: POLL,
        windows: [{ days: day, start: '01:00', end: '02:00' }],
        freeze: [{ start: iso(now - 86_400_000), end: iso(now + 30 * 86_400_000), reason: 'year-end' }],
      },
    });
    const h2 = harness;
    await h2.startRun();
    const done = await h2.waitFor((s) => (s.rollouts[0]?.counts.succeeded ?? 0) >= 8, 60_000);
    const stats = await h2.simStats();
    expect(stats.maxConcurrentTasks).toBeLessThanOrEqual(2);
    const sim = await h2.simCollectors();
    expect(sim.filter((c) => c.id <= 8).map((c) => c.version)).toEqual(Array(8).fill('19.470-4'));
    // The others wait for the window and the freeze: no task at all.
    expect(sim.filter((c) => c.id > 8).flatMap((c) => c.tasks)).toEqual([]);
    const r = done.rollouts[0] as RolloutStatus;
    expect(r.belowMinimum).toBe(8);
    expect(r.minimumBuild).toBe('19.450-12');
    expect(formatStatus({ rollouts: done.rollouts, now: Date.now() }, { wide: true })).toContain(
      '8 below minimumBuild 19.450-12 moved first',
    );
    await new Promise((res) => setTimeout(res, 1500));
    expect((await h2.simStats()).tasksCreated).toBe(8);
    // status says what holds the others.
    expect((await h2.status()).rollouts[0]?.holding ?? '').toMatch(/freeze|window/);
  }, 120_000);
});

describe('minimumBuild and the gates', () => {
  it('a halt holds the Collectors below the minimum too: after the failure gate trips, no task', async () => {
    harness = await startHarness({
      timeScale: 600,
      fleet: fleet(on('19.400-5', range(1, 6), { outcome: 'fail', failureCause: 'unknown' })),
      policy: {
        name: 'gated',
        minimumBuild: '19.450-12',
        maxInFlight: 1,
        poll: POLL,
        failureGate: { failed: { max: 0 } },
        freeze: [{ start: '2000-01-01T00:00:00Z', end: '2100-01-01T00:00:00Z', reason: 'test' }],
      },
    });
    const h = harness;
    await h.startRun();
    const halted = await h.waitFor((s) => s.rollouts[0]?.phase === 'halted', 30_000);
    expect(halted.rollouts[0]?.counts.failed).toBe(1);
    await new Promise((res) => setTimeout(res, 1500)); // 15 simulated minutes
    expect((await h.simStats()).tasksCreated).toBe(1);
  }, 60_000);

  it('in a wave of their own: they move while the first wave awaits approval, which they do not count in', async () => {
    harness = await startHarness({
      timeScale: 600,
      // 1-4 below the minimum; 5-10 at it.
      fleet: fleet([...on('19.400-5', range(1, 4)), ...on('19.450-12', range(5, 10))]),
      policy: {
        name: 'waved',
        minimumBuild: '19.450-12',
        maxInFlight: 4,
        poll: POLL,
        waves: [{ size: 2, approval: 'manual' }, '100%'],
      },
    });
    const h = harness;
    await h.startRun();
    const waiting = await h.waitFor((s) => s.rollouts[0]?.wave.waitingFor === 'approval', 30_000);
    // The four below the minimum and the first wave's two: the first wave is two of the others.
    expect(waiting.rollouts[0]?.counts).toEqual({ succeeded: 6, queued: 4 });
    const sim = await h.simCollectors();
    expect(sim.filter((c) => c.id <= 4).map((c) => c.version)).toEqual(Array(4).fill('19.470-4'));
    expect(sim.filter((c) => c.id > 4 && c.version === '19.470-4')).toHaveLength(2);
  }, 60_000);
});

describe('knownIssues', () => {
  it('matching Collectors never get a task: skip leaves them out with the note, manual puts them on the worklist with it', async () => {
    const collectors = [
      ...on('19.400-5', range(1, 4), { osName: 'Linux' }),
      ...on('19.400-5', range(5, 7), { osName: 'Mac OS X' }),
      ...on('19.400-5', range(8, 9), { osName: 'Windows Server 2019' }),
    ];
    harness = await startHarness({
      timeScale: 600,
      fleet: fleet(collectors),
      policy: {
        name: 'careful',
        maxInFlight: 3,
        poll: POLL,
        knownIssues: [
          {
            build: '19.470-*',
            select: { osName: 'Mac OS X' },
            action: 'skip',
            note: 'stops until restarted by hand',
          },
          {
            build: '19.470-4',
            select: { osName: 'Windows Server 2019' },
            action: 'manual',
            note: 'needs the service account re-entered',
          },
        ],
      },
    });
    const h = harness;
    await h.startRun();
    const done = await h.waitFor(converged, 60_000);
    const r = done.rollouts[0] as RolloutStatus;
    expect(r.counts).toEqual({ succeeded: 4, skipped: 3, manual: 2 });
    expect(r.knownIssueSkipped).toBe(3);
    expect(r.knownIssueManual).toBe(2);
    expect(r.knownIssues?.map((i) => i.note)).toEqual([
      'stops until restarted by hand',
      'needs the service account re-entered',
    ]);
    const records = await h.records();
    for (const rec of records.filter((x) => x.id >= 5 && x.id <= 7))
      expect(rec).toMatchObject({ state: 'skipped', message: 'stops until restarted by hand' });
    for (const rec of records.filter((x) => x.id >= 8))
      expect(rec).toMatchObject({
        state: 'manual',
        message: 'needs the service account re-entered',
        failureClass: 'known_issue',
      });
    // status names each issue with its note under the rollout's row.
    const shown = formatStatus({ rollouts: done.rollouts, now: Date.now() }, { wide: true });
    expect(shown).toContain(
      'known issue of 19.470-* (osName=Mac OS X): stops until restarted by hand — matching Collectors skipped',
    );
    expect(shown).toMatch(
      /known issue of 19\.470-4 \(osName=Windows Server 2019\): needs the service account re-entered — matching Collectors on the worklist/,
    );
    const sim = await h.simCollectors();
    expect(sim.filter((c) => c.id >= 5).flatMap((c) => c.tasks)).toEqual([]);
    expect(sim.filter((c) => c.id <= 4).map((c) => c.version)).toEqual(Array(4).fill('19.470-4'));
  }, 90_000);
});
