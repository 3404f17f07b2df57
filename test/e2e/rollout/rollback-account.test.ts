/**
 * An honest rollback account (issue 20), through the real path: the daemon on the real Redis, the
 * simulator over HTTP, the built CLI. A converged rollout with succeeded, failed, timed-out,
 * not-alive and unhealthy Collectors is rolled back (`--all`); once the rollback's rollouts end,
 * `rollback --wait`, `status` (text and --json) and `report` say of each category how many, and the counts are the
 * simulator's truth: the succeeded ones are back on their previous builds, the failed and
 * timed-out ones were on them already (nothing to do), the unhealthy ones (stopped for good) are
 * not alive and cannot be moved. "rolled back" is written only for those back.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, type SimCollectorView, startHarness } from '../../support/rollout-harness.js';

const LATEST = '19.470-4';
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/**
 * 1-4 succeed, 5-6 fail, 7 is stuck (its task times out), 8 is not alive, 9-10 succeed and then
 * stop heartbeating for good (unhealthy). Odd ones on 19.400-5, even ones on 19.450-12.
 */
function fleet(): FleetFileInput {
  const outcome = (id: number) => (id === 5 || id === 6 ? 'fail' : id === 7 ? 'stuck' : 'succeed');
  return {
    builds: ['19.400-5', '19.450-12', LATEST],
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: 10 }, (_, i) => ({
      id: i + 1,
      version: i % 2 === 0 ? '19.400-5' : '19.450-12',
      outcome: outcome(i + 1),
      failureCause: 'unknown' as const,
      upgradeSeconds: 60,
      alive: i + 1 !== 8,
      stopsAfterUpgrade: i + 1 >= 9,
    })),
    behaviour: {
      incrementalAbove: 0,
      taskTimeoutSeconds: 3600,
      offlineAfterSeconds: 120,
      stopAfterUpgrade: { ratio: 0, afterSeconds: 30, restartAfterSeconds: 10_000_000 },
    },
  };
}

const POLICY = {
  name: 'mixed',
  maxInFlight: 10,
  poll: { initial: '20s', max: '1m' },
  // Before the service's own (an hour here): the stuck task ends timed out on our side.
  taskTimeout: '30m',
  retry: { notAlive: { attempts: 1, backoff: '1m' } },
};

const source = (s: FleetStatus) => s.rollouts.find((r) => r.policy === 'mixed');
const rollbacks = (s: FleetStatus) => s.rollouts.filter((r) => r.policy.startsWith('rollback-'));
const ended = (r: RolloutStatus) => ['converged', 'halted', 'aborted', 'paused'].includes(r.phase);

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 90_000);
  return { code, out: child.output() };
}

const ids = (list: SimCollectorView[], test: (c: SimCollectorView) => boolean) =>
  list
    .filter(test)
    .map((c) => c.id)
    .sort((a, b) => a - b);

describe('rollback account', () => {
  it('says how many were requested, rolled back, already on their previous build, not alive, failed and under way, as the simulator saw it', async () => {
    harness = await startHarness({ timeScale: 300, fleet: fleet(), policy: POLICY });
    const h = harness;
    const before = new Map((await h.simCollectors()).map((c) => [c.id, c.version]));
    await h.startRun();
    const done = await h.waitFor((s) => source(s)?.phase === 'converged', 90_000);
    const r = source(done) as RolloutStatus;
    expect(r.counts).toEqual({ succeeded: 4, failed: 2, timed_out: 1, not_alive: 1, unhealthy: 2 });

    // --wait: the command follows the rollback to its end and says what became of each.
    const rolled = await cli(h, ['rollback', r.id, '--all', '--wait', '60']);
    expect(rolled.code, rolled.out).toBe(0);
    // The not-alive one never had a task: nothing of it to take back, so not requested.
    // Its sentences are wrapped within 80 columns (issue 26): read as one line each.
    const said = rolled.out.replace(/\n {2}/g, ' ');
    expect(said).toMatch(/rollback of 9 Collectors .* requested/);
    expect(said).toContain(
      'rollback of 9 Collectors requested: rolled back: 4, 3 already on their previous build (nothing to do), 2 not alive (cannot be moved now)\n',
    );

    const after = await h.waitFor((s) => {
      const a = source(s)?.rollbackAccounts?.[0];
      return a !== undefined && a.underWay === 0 && rollbacks(s).length > 0 && rollbacks(s).every(ended);
    }, 120_000);
    const account = source(after)?.rollbackAccounts?.[0];

    // The simulator's truth.
    const sim = await h.simCollectors();
    const back = ids(sim, (c) => c.version === before.get(c.id) && c.tasks.at(-1)?.toVersion === c.version);
    const onBuild = ids(
      sim,
      (c) => c.version === before.get(c.id) && !c.tasks.some((t) => t.toVersion === c.version),
    );
    const stillUp = ids(sim, (c) => c.version === LATEST);
    expect(back).toEqual([1, 2, 3, 4]);
    expect(onBuild).toEqual([5, 6, 7, 8]); // 8 was not requested (never upgraded)
    expect(stillUp).toEqual([9, 10]);
    for (const c of sim.filter((x) => stillUp.includes(x.id))) expect(c.alive).toBe(false);

    expect(account).toMatchObject({
      requested: 9,
      back: back.length,
      onBuild: onBuild.filter((id) => id !== 8).length,
      notAlive: stillUp.length,
      failed: 0,
      underWay: 0,
      unavailable: 0,
      unknown: 0,
    });
    expect(account?.rollouts.every((x) => ended({ phase: x.phase } as RolloutStatus))).toBe(true);

    // `status` in words: "rolled back" only for those back.
    const status = await cli(h, ['status']);
    expect(status.code, status.out).toBe(0);
    expect(status.out.replace(/\s+/g, ' ')).toContain(
      'rollback of 9 Collectors requested: rolled back: 4, 3 already on their previous build (nothing to do), 2 not alive (cannot be moved now)',
    );
    console.info(
      `[figures] rollback account: ${status.out.replace(/\s+/g, ' ').match(/rollback of [^;]*/)?.[0]}`,
    );
    const json = await cli(h, ['status', '--json']);
    const fromJson = (JSON.parse(json.out) as FleetStatus).rollouts.find((x) => x.id === r.id);
    expect(fromJson?.rollbackAccounts?.[0]).toMatchObject({ requested: 9, back: 4, onBuild: 3, notAlive: 2 });

    // `report`: each rollback entry follows its rollout to its end (not left at "started").
    const report = await cli(h, ['report', r.id, '--format', 'json']);
    expect(report.code, report.out).toBe(0);
    const rollout = (JSON.parse(report.out) as { rollout: RolloutStatus }).rollout;
    expect(rollout.rollbacks?.length).toBeGreaterThan(0);
    for (const e of rollout.rollbacks ?? [])
      expect(['converged', 'halted', 'paused', 'aborted']).toContain(e.phase);
    expect(rollout.rollbackAccounts?.[0]).toMatchObject({ requested: 9, back: 4, onBuild: 3, notAlive: 2 });
  }, 240_000);
});
