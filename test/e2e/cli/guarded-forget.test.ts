/**
 * `forget` guarded (issue 20), through the built CLI on the real Redis, with the daemon and the
 * simulator: a converged rollout whose cohort gate quarantined a cohort. While the policy is
 * enabled and still selects its build, `forget` exits 3 (why, and what to do); while a rollback
 * request waits for the daemon, too; `--force` forgets it. The daemon then starts the same id
 * again (the policy still selects the build), and the quarantined cohort stays held: none of its
 * Collectors gets a task it did not have before.
 */
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const BAD_OS = 'Windows Server 2019';
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** 14 Windows Collectors whose upgrades fail, 6 Linux ones that succeed. */
function fleet(): FleetFileInput {
  return {
    builds: ['19.400-5', '19.470-4'],
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: 20 }, (_, i) => {
      const bad = i % 10 < 7;
      return {
        id: i + 1,
        version: '19.400-5',
        osName: bad ? BAD_OS : 'Linux',
        outcome: bad ? ('fail' as const) : ('succeed' as const),
        failureCause: 'unknown' as const,
        upgradeSeconds: 60,
      };
    }),
    behaviour: { incrementalAbove: 0 },
  };
}

const POLICY = {
  name: 'held',
  maxInFlight: 2,
  poll: { initial: '20s', max: '1m' },
  cohorts: { by: 'osName', maxFailureRatio: 0.1, confidence: 0.95, minSample: 5 },
};

const rollout = (s: FleetStatus) => s.rollouts.find((r) => r.policy === 'held');

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

describe('guarded forget', () => {
  it('exits 3 while the policy selects the build or a rollback waits; --force forgets; the same id comes back with its cohort still held', async () => {
    harness = await startHarness({ timeScale: 300, fleet: fleet(), policy: POLICY });
    const h = harness;
    // The CLI reads the policy files `run` reads.
    h.env.FLEET_UPGRADE_POLICIES = dirname(h.policyFile);
    const daemon = await h.startRun();
    const done = await h.waitFor((s) => rollout(s)?.phase === 'converged', 90_000);
    const r = rollout(done) as RolloutStatus;
    expect(r.quarantined?.map((q) => q.cohort)).toEqual([`osName=${BAD_OS}`]);
    const before = new Map((await h.simCollectors()).map((c) => [c.id, c.tasks.length]));
    const held = (await h.records(r.id)).filter((c) => c.state === 'quarantined').map((c) => c.id);
    expect(held.length).toBeGreaterThan(0);
    // The daemon stops, so that a rollback request stays pending.
    await daemon.stop();

    const selected = await cli(h, ['forget', r.id]);
    expect(selected.code, selected.out).toBe(3);
    expect(selected.out).toMatch(
      /its policy held still selects: the policy is enabled and selects 19\.470-4/,
    );
    expect(selected.out).toMatch(/Change the policy's target or remove its file .* or pass --force/);

    const rolled = await cli(h, ['rollback', r.id, '--only', 'failed']);
    expect(rolled.code, rolled.out).toBe(0);
    const pending = await cli(h, ['forget', r.id]);
    expect(pending.code, pending.out).toBe(3);
    expect(pending.out).toMatch(/has a rollback request the daemon has not carried out yet/);
    expect(pending.out).toMatch(/--force/);
    expect(await h.state.rollouts.get(r.id)).toBeDefined();

    const forced = await cli(h, ['forget', r.id, '--force']);
    expect(forced.code, forced.out).toBe(0);
    expect(forced.out).toMatch(/quarantined cohort \(osName=Windows Server 2019\) stays held/);
    expect(await h.state.rollouts.get(r.id)).toBeUndefined();

    // The daemon again: its policy still selects the build, so the same id starts again, with the
    // cohort held from the start.
    await h.startRun();
    const again = await h.waitFor(
      (s) => rollout(s)?.id === r.id && rollout(s)?.phase === 'converged' && (rollout(s)?.total ?? 0) > 0,
      90_000,
    );
    const back = rollout(again) as RolloutStatus;
    expect(back.quarantined?.map((q) => q.cohort)).toEqual([`osName=${BAD_OS}`]);
    const records = await h.records(r.id);
    const windows = records.filter((c) => c.osName === BAD_OS);
    expect(windows.length).toBeGreaterThan(0);
    expect(windows.every((c) => c.state === 'quarantined')).toBe(true);
    // No Collector got a task after the forget: the held cohort's stayed where it was.
    const after = await h.simCollectors();
    for (const c of after) expect(c.tasks.length, `Collector ${c.id}`).toBe(before.get(c.id));
    const history = await h.state.events.history(r.id);
    expect(history.map((e) => e.type)).toContain('cohort.quarantined');
  }, 180_000);
});
