/**
 * The operator commands as a user runs them (the built CLI, against the orchestrator and the
 * simulator over HTTP): pause holds first attempts and retries (the service sees no create after
 * the pause settles) and resume starts them again; abort creates no task after it; retry creates
 * exactly one new task per chosen Collector; a one-off `upgrade` of named Collectors; history and
 * the exit codes scripts rely on.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { converged, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function fleet(count: number, patch: Record<string, unknown> = {}): FleetFileInput {
  return {
    builds: BUILDS,
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 120,
      ...patch,
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

/** Runs a command of the built CLI to its end; its exit code and output. */
async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

const rollout = (h: Harness) => h.status().then((s) => s.rollouts.find((r) => !r.id.startsWith('upgrade-')));

describe('pause, resume, abort', () => {
  it('pause: the service sees no create once it settles; resume: creates go on', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(30),
      policy: { name: 'steered', maxInFlight: 3, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    await h.waitFor((s) => (s.rollouts[0]?.counts.succeeded ?? 0) >= 3, 30_000);
    const id = (await rollout(h))?.id as string;
    const paused = await cli(h, ['pause', id]);
    expect(paused.code, paused.out).toBe(0);
    expect(paused.out).toMatch(/paused by .*@/);
    // Tasks under way end; then nothing new is created.
    await h.waitFor((s) => s.rollouts[0]?.inflight === 0, 30_000);
    const created = (await h.simStats()).tasksCreated;
    await new Promise((r) => setTimeout(r, 1000)); // 5 simulated minutes
    expect((await h.simStats()).tasksCreated).toBe(created);
    expect((await h.simStats()).requests.byEndpoint.create).toBeLessThanOrEqual(created + 1);

    expect((await cli(h, ['resume', id])).out).toMatch(/released the pause by/);
    await h.waitFor(converged, 60_000);
    expect((await h.status()).rollouts[0]?.counts).toEqual({ succeeded: 30 });
    const history = await cli(h, ['history', id, '--json']);
    const types = (JSON.parse(history.out) as { events: { type: string; source: string }[] }).events.map(
      (e) => `${e.source}:${e.type}`,
    );
    expect(types).toEqual(
      expect.arrayContaining([
        'scheduler:rollout.started',
        'operator:rollout.paused',
        'operator:rollout.resumed',
        'scheduler:rollout.converged',
      ]),
    );
  }, 120_000);

  it('abort: no task is created after it; the rest end aborted; exit codes for what does not apply', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(20),
      policy: { name: 'stopped', maxInFlight: 2, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    await h.waitFor((s) => (s.rollouts[0]?.counts.succeeded ?? 0) >= 2, 30_000);
    const id = (await rollout(h))?.id as string;
    const aborted = await cli(h, ['abort', id, '--reason', 'bad build']);
    expect(aborted.code, aborted.out).toBe(0);
    const createsAtAbort = (await h.simStats()).requests.byEndpoint.create ?? 0;
    // Tasks under way end, and verification of those that succeeded goes on in the aborted rollout.
    await h.waitFor(
      (s) => s.rollouts[0]?.inflight === 0 && (s.rollouts[0]?.counts.verifying ?? 0) === 0,
      30_000,
    );
    // At most the creates already on their way when the abort landed.
    expect((await h.simStats()).requests.byEndpoint.create).toBeLessThanOrEqual(createsAtAbort + 2);
    const status = await h.status();
    expect(status.rollouts[0]?.phase).toBe('aborted');
    expect((status.rollouts[0]?.counts.aborted ?? 0) + (status.rollouts[0]?.counts.succeeded ?? 0)).toBe(20);
    expect(status.rollouts[0]?.abortReason).toMatch(/bad build/);

    // Scripts can tell what went wrong: 3 for a rollout in the wrong phase, 64 for a bad argument.
    expect((await cli(h, ['pause', id])).code).toBe(3);
    expect((await cli(h, ['resume', 'nobody@1.0-1'])).code).toBe(64);
    expect((await cli(h, ['retry', id, '--only', 'everything'])).code).toBe(64);
    expect((await cli(h, ['promote', id])).code).toBe(3);
  }, 120_000);
});

describe('approval', () => {
  it('a canary wave awaiting approval holds the next one until `promote`; status says so', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(12),
      policy: {
        name: 'canaried',
        maxInFlight: 10,
        waves: [{ size: 2, approval: 'manual' }, '100%'],
        poll: { initial: '30s', max: '1m' },
      },
    });
    const h = harness;
    await h.startRun();
    await h.waitFor((s) => s.rollouts[0]?.wave.waitingFor === 'approval', 30_000);
    const id = (await rollout(h))?.id as string;
    expect((await h.status()).rollouts[0]?.counts).toEqual({ succeeded: 2, queued: 10 });
    const status = await cli(h, ['status']);
    expect(status.out).toMatch(/awaiting approval/);
    expect(status.out).toMatch(new RegExp(`fleet-upgrade promote ${id.replace('.', '\\.')}`));
    // It holds: a while later, still only the canaries.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await h.simStats()).tasksCreated).toBe(2);
    const promoted = await cli(h, ['promote', id]);
    expect(promoted.code, promoted.out).toBe(0);
    await h.waitFor(converged, 60_000);
    expect((await h.status()).rollouts[0]?.counts).toEqual({ succeeded: 12 });
  }, 90_000);
});

describe('retry and a one-off upgrade', () => {
  it('retry --only failed creates exactly one new task per failed Collector', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: {
        ...fleet(8),
        collectors: Array.from({ length: 8 }, (_, i) => ({
          id: i + 1,
          version: '19.400-5',
          outcome: i < 3 ? ('fail' as const) : ('succeed' as const),
          // A cause the default policy fails outright (others go to the worklist or are retried).
          failureCause: 'unknown' as const,
          upgradeSeconds: 60,
        })),
      },
      policy: { name: 'again', maxInFlight: 8, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    await h.waitFor(converged, 30_000);
    const id = (await rollout(h))?.id as string;
    expect((await h.status()).rollouts[0]?.counts).toEqual({ succeeded: 5, failed: 3 });
    // The Collectors would succeed now (the cause was fixed).
    for (const c of [1, 2, 3])
      await fetch(`${h.sim.url}/_sim/collectors/${c}`, {
        method: 'PATCH',
        body: JSON.stringify({ outcome: 'succeed' }),
      });
    const retried = await cli(h, ['retry', id, '--only', 'failed']);
    expect(retried.out).toMatch(/3 Collectors get one new attempt/);
    await h.waitFor(
      (s) => s.rollouts[0]?.phase === 'converged' && s.rollouts[0]?.counts.succeeded === 8,
      30_000,
    );
    const sim = await h.simCollectors();
    for (const c of sim) expect(c.tasks.length, `collector ${c.id}`).toBe(c.id <= 3 ? 2 : 1);
    const records = await h.records(id);
    for (const r of records.filter((x) => x.id <= 3)) expect(r).toMatchObject({ retries: 1, attempts: 2 });
    const report = await cli(h, ['report', id, '--format', 'csv']);
    expect(report.out).toMatch(/1:created \d+ failed; 2:created \d+ succeeded/);
  }, 90_000);

  it('upgrade --collector: a one-off rollout of the named Collectors, pinned to its build', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(6),
      // The file policy covers Collector 1 only; the one-off takes 4 and 5 to an older build.
      policy: { name: 'only-one', select: { ids: [1] }, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    const started = await cli(h, ['upgrade', '--collector', '4,5', '--to', '19.450-12']);
    expect(started.code, started.out).toBe(0);
    const name = /one-off rollout (upgrade-[a-z0-9-]+)/.exec(started.out)?.[1] as string;
    expect(name).toBeTruthy();
    const id = `${name}@19.450-12`;
    await h.waitFor((s) => s.rollouts.some((r) => r.id === id && r.phase === 'converged'), 60_000);
    const sim = new Map((await h.simCollectors()).map((c) => [c.id, c]));
    expect(sim.get(4)?.version).toBe('19.450-12');
    expect(sim.get(5)?.version).toBe('19.450-12');
    expect(sim.get(6)?.tasks).toEqual([]);
    expect((await h.records(id)).map((r) => [r.id, r.state])).toEqual([
      [4, 'succeeded'],
      [5, 'succeeded'],
    ]);
    expect((await cli(h, ['upgrade', '--collector', '4,x', '--to', 'latest'])).code).toBe(64);
  }, 90_000);
});
