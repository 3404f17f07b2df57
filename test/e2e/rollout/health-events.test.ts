/**
 * Verified by the service's own word (issue #32), through the real path: the orchestrator on
 * the real Redis, the simulator over HTTP at an accelerated clock, the built CLI for `rollback`.
 * A build breaks the Source of a third of the Linux Collectors two minutes after their upgrade,
 * while they stay alive and heartbeat on it. With `verify.healthEvents` (the default) the broken
 * ones end `unhealthy` with the tracker as their cause, the Linux cohort is quarantined, and
 * `rollback --only unhealthy` takes them back: the simulator's truth says they collect again on
 * their previous build. Without it, the same run calls them succeeded while the simulator says
 * they collect nothing. Errors present before the upgrade (noise) never fail a Collector; the
 * service's hexadecimal ids are matched with the decimal ones (the records name the Collectors
 * the simulator broke).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import {
  agreesWithSimulator,
  exitOf,
  type Harness,
  type SimCollectorView,
  startHarness,
} from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
const LATEST = '19.470-4';
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * 30 Linux Collectors and 10 Windows ones, ids from 100000001; every third Linux one collects
 * with a LocalFile Source (the others with Syslog), which the latest build breaks a minute after
 * the upgrade. Half of them have trouble from before (noise).
 */
function fleet(): FleetFileInput {
  return {
    builds: BUILDS,
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: 40 }, (_, i) => ({
      id: 100_000_001 + i,
      version: i % 2 === 0 ? '19.400-5' : '19.450-12',
      osName: i < 30 ? 'Linux' : 'Windows',
      sourceType: i % 3 === 0 ? 'LocalFile' : 'Syslog',
      outcome: 'succeed' as const,
      upgradeSeconds: 60,
    })),
    behaviour: {
      incrementalAbove: 0,
      healthEvents: {
        noiseRatio: 0.5,
        breaks: [{ build: LATEST, osName: 'Linux', sourceType: 'LocalFile', ratio: 1, afterSeconds: 60 }],
      },
    },
    seed: 7,
  };
}

const policy = (healthEvents: boolean) => ({
  name: 'linux-health',
  maxInFlight: 3,
  poll: { initial: '20s', max: '1m' },
  verify: { bake: '3m', healthEvents },
  cohorts: { by: 'osName', maxFailureRatio: 0.1, minSample: 5 },
  failureGate: { maxFailureRatio: 0.9, minOutcomes: 40 },
});

const source = (s: FleetStatus) => s.rollouts.find((r) => r.policy === 'linux-health');
const rollbacks = (s: FleetStatus) => s.rollouts.filter((r) => r.policy.startsWith('rollback-'));
const settled = (r: RolloutStatus | undefined) => r !== undefined && r.phase === 'converged';
const byId = (list: SimCollectorView[]) => new Map(list.map((c) => [c.id, c]));
const broken = (c: SimCollectorView | undefined) =>
  (c?.health.events ?? []).some((e) => e.cause === 'break' && e.build === LATEST);
const noisyError = (c: SimCollectorView | undefined) =>
  (c?.health.events ?? []).some((e) => e.cause === 'noise' && e.severity === 'Error');

async function run(healthEvents: boolean) {
  harness = await startHarness({ timeScale: 300, fleet: fleet(), policy: policy(healthEvents) });
  const h = harness;
  const before = byId(await h.simCollectors());
  await h.startRun();
  const done = await h.waitFor((s) => settled(source(s)), 90_000);
  const r = source(done) as RolloutStatus;
  const records = await h.records(r.id);
  return { h, before, r, records, sim: byId(await h.simCollectors()) };
}

describe('verify.healthEvents', () => {
  it('a build that stops collection on a third of the Linux Collectors: unhealthy, quarantined, rolled back; without it, called succeeded', async () => {
    // Without health events: the heartbeat's word only.
    const blind = await run(false);
    const blindBroken = blind.records.filter((c) => broken(blind.sim.get(c.id)));
    expect(blindBroken.length).toBeGreaterThan(0);
    for (const c of blindBroken) {
      expect(c.state, `Collector ${c.id}`).toBe('succeeded');
      expect(blind.sim.get(c.id)).toMatchObject({ alive: true, collecting: false, version: LATEST });
    }
    expect(blind.r.counts.unhealthy ?? 0).toBe(0);
    expect(blind.r.counts.quarantined ?? 0).toBe(0);
    await harness?.close();
    harness = undefined;

    // With them (the same fleet, seed and policy but for verify.healthEvents).
    const { h, before, r, records, sim } = await run(true);
    const unhealthy = records.filter((c) => c.state === 'unhealthy');
    const brokenIds = records.filter((c) => broken(sim.get(c.id))).map((c) => c.id);
    expect(unhealthy.length).toBeGreaterThanOrEqual(3);
    // Exactly the Collectors the simulator broke (their hexadecimal ids read as decimal ones).
    expect(unhealthy.map((c) => c.id).sort()).toEqual(brokenIds.sort());
    for (const c of unhealthy) {
      expect(c.osName).toBe('Linux');
      expect(c.failureClass).toBe('health:FileCollectionBroken');
      expect(c.message).toMatch(
        /^health event File Collection Broken \(FileCollectionBroken, Error\) on 19\.470-4/,
      );
      expect(sim.get(c.id)).toMatchObject({ alive: true, running: true, collecting: false });
    }
    expect(
      records.map((c) => [c.id, agreesWithSimulator(c, sim.get(c.id))]).filter(([, why]) => why),
    ).toEqual([]);
    // The Linux cohort is quarantined; the Windows Collectors all succeeded.
    expect(r.counts.quarantined ?? 0).toBeGreaterThan(0);
    expect(records.filter((c) => c.state === 'quarantined').every((c) => c.osName === 'Linux')).toBe(true);
    expect(records.filter((c) => c.osName === 'Windows').map((c) => c.state)).toEqual(
      Array(10).fill('succeeded'),
    );
    // Errors raised before the upgrade never failed anyone.
    const noisyOk = records.filter((c) => noisyError(sim.get(c.id)) && !broken(sim.get(c.id)));
    expect(noisyOk.length).toBeGreaterThan(0);
    for (const c of noisyOk) expect(['succeeded', 'quarantined'], `Collector ${c.id}`).toContain(c.state);
    expect(noisyOk.some((c) => c.state === 'succeeded')).toBe(true);

    // status shows the verdicts; the rollout counts them.
    expect(r.healthUnhealthy).toBe(unhealthy.length);
    const status = h.spawnCli(['status']);
    expect(await exitOf(status, 30_000), status.output()).toBe(0);
    expect(status.output()).toMatch(new RegExp(`${unhealthy.length} unhealthy by a new health event`));

    // The broken ones go back: the simulator says they collect again, on their previous build.
    const child = h.spawnCli(['rollback', r.id, '--only', 'unhealthy']);
    expect(await exitOf(child, 30_000), child.output()).toBe(0);
    await h.waitFor((s) => rollbacks(s).length > 0 && rollbacks(s).every(settled), 90_000);
    const end = byId(await h.simCollectors());
    for (const c of unhealthy) {
      const e = end.get(c.id);
      expect(e?.version, `Collector ${c.id}`).toBe(before.get(c.id)?.version);
      expect(e?.collecting, `Collector ${c.id}`).toBe(true);
      expect(e?.tasks.map((t) => t.toVersion)).toEqual([LATEST, before.get(c.id)?.version]);
      expect(e?.health.events.find((x) => x.cause === 'break')?.resolvedAt).not.toBeNull();
    }
  }, 240_000);
});
