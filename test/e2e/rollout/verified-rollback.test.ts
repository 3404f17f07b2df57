/**
 * Verified upgrades and rollback through the real path: the orchestrator (scheduler + workers)
 * on the real Redis, the simulator over HTTP at an accelerated clock, and the built CLI for the
 * operator's commands. A task's success is checked against the listings: Collectors that stop
 * heartbeating after a successful upgrade end `unhealthy`, with what was seen; `rollback`
 * downgrades exactly the chosen Collectors to the build each had, with one task each; a failure
 * gate with `onTrip: rollback-wave` does it by itself for the tripped wave; the `manual` class of
 * failures lands on the worklist and not in the gate.
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
const USERS = [{ accessId: 'ops', accessKey: 'ops-secret' }];
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Collectors 1..count, odd ones on 19.400-5, even ones on 19.450-12; `stopping` stop after their upgrade. */
function fleet(
  count: number,
  stopping: readonly number[],
  extra: Partial<FleetFileInput> = {},
): FleetFileInput {
  return {
    builds: BUILDS,
    users: USERS,
    collectors: Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      version: i % 2 === 0 ? '19.400-5' : '19.450-12',
      outcome: 'succeed' as const,
      upgradeSeconds: 60,
      stopsAfterUpgrade: stopping.includes(i + 1),
    })),
    behaviour: {
      incrementalAbove: 0,
      // A stopped Collector is restarted (by its host's watchdog) half an hour later.
      stopAfterUpgrade: { ratio: 0, afterSeconds: 30, restartAfterSeconds: 1800 },
    },
    ...extra,
  };
}

const POLICY = { poll: { initial: '20s', max: '1m' } };

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

const source = (s: FleetStatus, policy: string) => s.rollouts.find((r) => r.policy === policy);
const rollbacks = (s: FleetStatus) => s.rollouts.filter((r) => r.policy.startsWith('rollback-'));
const settled = (r: RolloutStatus | undefined) => r !== undefined && r.phase === 'converged';

function byId(list: SimCollectorView[]): Map<number, SimCollectorView> {
  return new Map(list.map((c) => [c.id, c]));
}

describe('verified upgrades', () => {
  it('Collectors that stop heartbeating after success end unhealthy; rollback --only unhealthy takes them back with one task each', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(10, [3, 8]),
      policy: { name: 'verified', maxInFlight: 10, ...POLICY },
    });
    const h = harness;
    const before = byId(await h.simCollectors());
    await h.startRun();
    const done = await h.waitFor((s) => settled(source(s, 'verified')), 60_000);
    const id = source(done, 'verified')?.id as string;
    expect(source(done, 'verified')?.counts).toEqual({ succeeded: 8, unhealthy: 2 });
    const records = await h.records(id);
    const unhealthy = records.filter((r) => r.state === 'unhealthy');
    expect(unhealthy.map((r) => r.id)).toEqual([3, 8]);
    for (const r of unhealthy) expect(r.message).toMatch(/stopped heartbeating on 19\.470-4/);
    // What we recorded is what the simulator knows happened.
    const sim = byId(await h.simCollectors());
    expect(
      records.map((r) => [r.id, agreesWithSimulator(r, sim.get(r.id))]).filter(([, why]) => why),
    ).toEqual([]);

    const rolled = await cli(h, ['rollback', id, '--only', 'unhealthy']);
    expect(rolled.code, rolled.out).toBe(0);
    expect(rolled.out).toMatch(/rollback of 2 Collectors \(unhealthy\)/);
    // One rollout per previous build: 3 was on 19.400-5, 8 on 19.450-12. The stopped Collectors
    // pick their task up when they restart; then they are verified on their old build.
    const after = await h.waitFor((s) => rollbacks(s).length === 2 && rollbacks(s).every(settled), 60_000);
    expect(rollbacks(after).map((r) => [r.build, r.counts, r.rollbackOf])).toEqual(
      expect.arrayContaining([
        ['19.400-5', { succeeded: 1 }, id],
        ['19.450-12', { succeeded: 1 }, id],
      ]),
    );
    const end = byId(await h.simCollectors());
    for (const c of [3, 8]) {
      expect(end.get(c)?.version).toBe(before.get(c)?.version);
      expect(end.get(c)?.tasks.map((t) => t.toVersion)).toEqual([LATEST, before.get(c)?.version]);
    }
    // Nobody else got a second task.
    for (const c of [1, 2, 4, 5, 6, 7, 9, 10]) expect(end.get(c)?.tasks).toHaveLength(1);
    expect(source(after, 'verified')?.rollbacks?.map((e) => [e.build, e.collectors, e.state])).toEqual(
      expect.arrayContaining([
        ['19.400-5', 1, 'started'],
        ['19.450-12', 1, 'started'],
      ]),
    );
    const history = await cli(h, ['history', id]);
    expect(history.out).toMatch(/rollback\.requested/);
    expect(history.out).toMatch(/rollback\.started/);
  }, 120_000);

  it('rollback --all returns every upgraded Collector to its previous build with one task each', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(6, []),
      policy: { name: 'all-back', maxInFlight: 6, ...POLICY },
    });
    const h = harness;
    const before = byId(await h.simCollectors());
    await h.startRun();
    const done = await h.waitFor((s) => settled(source(s, 'all-back')), 60_000);
    const id = source(done, 'all-back')?.id as string;
    expect(source(done, 'all-back')?.counts).toEqual({ succeeded: 6 });
    const rolled = await cli(h, ['rollback', id, '--all']);
    expect(rolled.code, rolled.out).toBe(0);
    await h.waitFor((s) => rollbacks(s).length === 2 && rollbacks(s).every(settled), 60_000);
    const end = byId(await h.simCollectors());
    for (const [cid, c] of before) {
      expect(end.get(cid)?.version, `Collector ${cid}`).toBe(c.version);
      expect(end.get(cid)?.tasks.map((t) => t.toVersion)).toEqual([LATEST, c.version]);
    }
    // A rollback of outcomes the rollout does not have is refused, with the exit code for it.
    expect((await cli(h, ['rollback', id, '--only', 'unhealthy'])).code).toBe(3);
  }, 120_000);

  it('onTrip: rollback-wave halts the rollout and takes the tripped wave back; the next wave never starts', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(12, [2]),
      policy: {
        name: 'guarded',
        maxInFlight: 4,
        waves: [4, '100%'],
        failureGate: { unhealthy: { max: 0 }, onTrip: 'rollback-wave' },
        ...POLICY,
      },
    });
    const h = harness;
    const before = byId(await h.simCollectors());
    await h.startRun();
    const halted = await h.waitFor(
      (s) =>
        source(s, 'guarded')?.phase === 'halted' && rollbacks(s).length === 2 && rollbacks(s).every(settled),
      60_000,
    );
    const g = source(halted, 'guarded') as RolloutStatus;
    expect(g.haltReason).toMatch(/unhealthy: 1 Collector, above the gate's max of 0/);
    expect(g.counts).toMatchObject({ succeeded: 3, unhealthy: 1, queued: 8 });
    const end = byId(await h.simCollectors());
    for (const c of [1, 2, 3, 4]) {
      expect(end.get(c)?.version, `wave 1 Collector ${c}`).toBe(before.get(c)?.version);
      expect(end.get(c)?.tasks).toHaveLength(2);
    }
    for (const c of [5, 6, 7, 8, 9, 10, 11, 12])
      expect(end.get(c)?.tasks, `wave 2 Collector ${c}`).toHaveLength(0);
    const status = await cli(h, ['status']);
    expect(status.out).toMatch(/halted/);
    expect(status.out).toMatch(/rolled back: /);
  }, 120_000);
});

describe('failure causes', () => {
  it('the manual class lands on the worklist and not in the gate; network failures are retried', async () => {
    const collectors = [
      ...[1, 2, 3, 4].map((id) => ({
        id,
        version: '19.400-5',
        outcome: 'fail' as const,
        failureCause: 'disk_space' as const,
      })),
      { id: 5, version: '19.400-5', outcome: 'fail' as const, failureCause: 'network' as const },
      ...[6, 7, 8, 9, 10].map((id) => ({ id, version: '19.400-5', outcome: 'succeed' as const })),
    ].map((c) => ({ ...c, upgradeSeconds: 60 }));
    harness = await startHarness({
      timeScale: 300,
      fleet: { builds: BUILDS, users: USERS, collectors, behaviour: { incrementalAbove: 0 } },
      policy: {
        name: 'causes',
        maxInFlight: 10,
        // 4 of 10 on the worklist would trip a 20 % gate if they counted.
        failureGate: { maxFailureRatio: 0.2, minOutcomes: 5 },
        failureCauses: { actions: { network: { action: 'retry', attempts: 2, backoff: '2m' } } },
        ...POLICY,
      },
    });
    const h = harness;
    await h.startRun();
    const done = await h.waitFor((s) => settled(source(s, 'causes')), 60_000);
    const r = source(done, 'causes') as RolloutStatus;
    expect(r.counts).toEqual({ succeeded: 5, manual: 4, failed: 1 });
    const records = await h.records(r.id);
    // The network failure was tried three times (the first and two retries), then failed.
    expect(records.find((c) => c.id === 5)).toMatchObject({
      state: 'failed',
      failureClass: 'network',
      attempts: 3,
    });
    expect((await h.simCollectors()).find((c) => c.id === 5)?.tasks).toHaveLength(3);
    const worklist = await cli(h, ['report', r.id, '--worklist']);
    expect(worklist.code, worklist.out).toBe(0);
    const list = JSON.parse(worklist.out) as {
      worklist: { id: number; failureClass: string; message: string }[];
    };
    expect(list.worklist.map((w) => [w.id, w.failureClass])).toEqual([
      [1, 'disk_space'],
      [2, 'disk_space'],
      [3, 'disk_space'],
      [4, 'disk_space'],
    ]);
    for (const w of list.worklist) expect(w.message).toMatch(/not enough disk space/i);
  }, 120_000);
});
