/**
 * Whole rollouts through the real path: the orchestrator (scheduler + BullMQ workers) on the
 * real Redis, against the simulator over HTTP at an accelerated clock. Outcomes are checked
 * against the simulator's own truth (/_sim/collectors), and its count of unfinished tasks
 * against maxInFlight.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import {
  agreesWithSimulator,
  converged,
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

describe('a rollout of 300 Collectors', () => {
  it('converges with outcomes matching the simulator, never more than maxInFlight unfinished tasks', async () => {
    const fleet: FleetFileInput = {
      builds: BUILDS,
      users: USERS,
      generate: { count: 300, seed: 11, hostedRatio: 0.02, offlineRatio: 0.03, upToDateRatio: 0 },
      behaviour: {
        upgradeSeconds: { median: 60, p95: 150 },
        failureRatio: 0.04,
        // Causes the default policy fails (unknown) or retries (network): a failure ends `failed`
        // unless its retry succeeds; none goes to the worklist, so `failed` is there for sure.
        failureCauses: { unknown: 1, network: 1 },
        stuckRatio: 0.02,
        incrementalAbove: 1,
      },
      faults: { rateLimit: { perSecond: 4, concurrent: 10 }, errorRatio: 0.01 },
      seed: 5,
    };
    harness = await startHarness({
      fleet,
      timeScale: 300,
      policy: {
        name: 'fleet-300',
        target: 'latest',
        maxInFlight: 25,
        retry: { notAlive: { attempts: 2, backoff: '1m' } },
        poll: { initial: '20s', max: '2m' },
        taskTimeout: '35m',
      },
    });
    const before = await harness.simCollectors();
    const eligible = before.filter((c) => c.type === 'Installable' && c.version !== LATEST);
    const startedAt = Date.now();
    await harness.startRun();
    const status = await harness.waitFor(converged, 90_000);
    const seconds = (Date.now() - startedAt) / 1000;

    const rollout = status.rollouts[0];
    expect(rollout?.id).toBe(`fleet-300@${LATEST}`);
    const records = await harness.records();
    expect(records.map((r) => r.id).sort()).toEqual(eligible.map((c) => c.id).sort());
    const sim = new Map((await harness.simCollectors()).map((c) => [c.id, c]));
    const disagreements = records
      .map((r) => [r.id, agreesWithSimulator(r, sim.get(r.id))])
      .filter(([, why]) => why);
    expect(disagreements).toEqual([]);
    // Every state the fleet can produce is there, so the comparison above covered each.
    const states = new Set(records.map((r) => r.state));
    for (const s of ['succeeded', 'failed', 'timed_out', 'not_alive']) expect(states).toContain(s);
    // No Collector got a second task, but after a network failure, which the default failure
    // causes retry (the service showed that no task runs and the build was not reached).
    const retriedOnlyAfterNetwork = (c: SimCollectorView) =>
      c.tasks.slice(0, -1).every((t) => t.result === 'failed' && t.cause === 'network');
    expect(
      [...sim.values()].filter((c) => c.tasks.length > 1 && !retriedOnlyAfterNetwork(c)).map((c) => c.id),
    ).toEqual([]);

    const stats = await harness.simStats();
    expect(stats.maxConcurrentTasks).toBeLessThanOrEqual(25);
    expect(stats.maxConcurrentTasks).toBeGreaterThanOrEqual(20);
    expect(stats.unfinishedTasks).toBe(0);
    // Figures for the issue note: status reads per Collector, and run time against its bound.
    const tasks = [...sim.values()].flatMap(
      (c) => c.tasks as unknown as { requestTime: number; finishTime: number }[],
    );
    const busy = tasks.reduce((sum, t) => sum + (t.finishTime - t.requestTime), 0);
    const first = Math.min(...tasks.map((t) => t.requestTime));
    const last = Math.max(...tasks.map((t) => t.finishTime));
    console.info(
      `[figures] 300-Collector rollout: ${records.length} selected, ${stats.tasksCreated} tasks, ` +
        `${((stats.requests.byEndpoint.status ?? 0) / stats.tasksCreated).toFixed(2)} status reads per task, ` +
        `simulated run ${((last - first) / 60_000).toFixed(1)} min vs lower bound ${(busy / 25 / 60_000).toFixed(1)} min ` +
        `(sum of task durations / maxInFlight), ${seconds.toFixed(1)} s real, ${stats.rateLimited} answers 429`,
    );
  }, 120_000);
});

describe('Collectors that are not alive', () => {
  it('are retried after the backoff and upgraded once they come back; ones that never do end not_alive', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: {
        builds: BUILDS,
        users: USERS,
        collectors: [
          { id: 1, version: '19.400-5', outcome: 'succeed', upgradeSeconds: 60 },
          { id: 2, version: '19.450-12', outcome: 'succeed', upgradeSeconds: 60 },
          {
            id: 3,
            version: '19.400-5',
            alive: false,
            offlineForSeconds: 200,
            outcome: 'succeed',
            upgradeSeconds: 60,
          },
          {
            id: 4,
            version: '19.450-12',
            alive: false,
            offlineForSeconds: 400,
            outcome: 'succeed',
            upgradeSeconds: 60,
          },
          { id: 5, version: '19.400-5', alive: false },
        ],
        behaviour: { incrementalAbove: 0 },
      },
      policy: {
        name: 'offline',
        maxInFlight: 10,
        retry: { notAlive: { attempts: 4, backoff: '3m' } },
        poll: { initial: '20s', max: '1m' },
      },
    });
    await harness.startRun();
    await harness.waitFor(converged, 60_000);
    const byId = new Map((await harness.records()).map((r) => [r.id, r]));
    expect([1, 2, 3, 4, 5].map((id) => byId.get(id)?.state)).toEqual([
      'succeeded',
      'succeeded',
      'succeeded',
      'succeeded',
      'not_alive',
    ]);
    expect(byId.get(1)?.attempts).toBe(1);
    expect(byId.get(3)?.attempts).toBeGreaterThanOrEqual(2);
    expect(byId.get(4)?.attempts).toBeGreaterThanOrEqual(3);
    expect(byId.get(5)?.attempts).toBe(4);
    expect(byId.get(5)?.message).toMatch(/not alive/);
    const sim = new Map((await harness.simCollectors()).map((c) => [c.id, c]));
    expect(sim.get(3)?.version).toBe(LATEST);
    expect(sim.get(4)?.version).toBe(LATEST);
    expect(sim.get(5)?.tasks).toHaveLength(0);
  }, 90_000);
});

describe('stuck tasks', () => {
  it("end as timed_out when the service's 30-minute time-out fails them, and free their slot", async () => {
    harness = await startHarness({
      timeScale: 600,
      fleet: {
        builds: BUILDS,
        users: USERS,
        collectors: [
          { id: 11, version: '19.400-5', outcome: 'stuck' },
          { id: 12, version: '19.400-5', outcome: 'stuck' },
          { id: 13, version: '19.400-5', outcome: 'succeed', upgradeSeconds: 30 },
        ],
      },
      // One slot: the third Collector starts only after a stuck one times out.
      policy: { name: 'stuck', maxInFlight: 1, poll: { initial: '30s', max: '5m' }, taskTimeout: '35m' },
    });
    await harness.startRun();
    const status = await harness.waitFor(converged, 60_000);
    const byId = new Map((await harness.records()).map((r) => [r.id, r]));
    expect(byId.get(11)?.state).toBe('timed_out');
    expect(byId.get(12)?.state).toBe('timed_out');
    expect(byId.get(11)?.message).toMatch(/timed out/);
    expect(byId.get(13)?.state).toBe('succeeded');
    expect(status.rollouts[0]?.inflight).toBe(0);
    expect((await harness.simStats()).maxConcurrentTasks).toBe(1);
  }, 90_000);
});

describe('waves and the failure gate', () => {
  it('admits the canary wave first, halts when failures climb, and judges anew after a resume', async () => {
    // Failures of the build itself (no cause a person must fix, none the policy retries).
    const failing = Array.from({ length: 10 }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'fail' as const,
      failureCause: 'unknown' as const,
      upgradeSeconds: 30,
    }));
    const fine = Array.from({ length: 10 }, (_, i) => ({
      id: i + 11,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 30,
    }));
    harness = await startHarness({
      timeScale: 300,
      fleet: {
        builds: BUILDS,
        users: USERS,
        collectors: [...failing, ...fine],
        behaviour: { incrementalAbove: 0 },
      },
      policy: {
        name: 'gated',
        maxInFlight: 10,
        waves: [5, '100%'],
        failureGate: { maxFailureRatio: 0.2, minOutcomes: 5 },
        poll: { initial: '20s', max: '1m' },
      },
    });
    await harness.startRun();
    const halted = (s: Awaited<ReturnType<Harness['status']>>) => {
      const r = s.rollouts[0];
      return r?.phase === 'halted' && r.inflight === 0;
    };
    let status = await harness.waitFor(halted, 30_000);
    // The canary wave (5 Collectors, all failing) ran alone; nothing else was admitted.
    expect(status.rollouts[0]?.counts).toEqual({ failed: 5, queued: 15 });
    expect(status.rollouts[0]?.haltReason).toMatch(/5 of 5 outcomes failed/);
    expect((await harness.simStats()).tasksCreated).toBe(5);

    const id = status.rollouts[0]?.id as string;
    // The operator's resume (the built CLI): the gate then judges only later outcomes, per wave too.
    const resume = harness.spawnCli(['resume', id]);
    expect(await exitOf(resume, 20_000), resume.output()).toBe(0);
    expect(resume.output()).toMatch(/released the failure gate's halt/);
    // The next wave starts; its five failures (ids 6..10 come first) trip the gate again.
    status = await harness.waitFor((s) => halted(s) && (s.rollouts[0]?.counts.failed ?? 0) >= 10, 30_000);
    expect(status.rollouts[0]?.counts.failed).toBe(10);
    expect((await harness.simStats()).tasksCreated).toBeLessThanOrEqual(20);
  }, 90_000);
});

describe('a newer latest build', () => {
  it('starts a new rollout; the old one is superseded, its unstarted Collectors skipped, none upgraded twice per rollout', async () => {
    const collectors = Array.from({ length: 30 }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 120,
    }));
    harness = await startHarness({
      timeScale: 300,
      fleet: { builds: BUILDS, users: USERS, collectors, behaviour: { incrementalAbove: 0 } },
      policy: { name: 'follow', target: 'latest', maxInFlight: 5, poll: { initial: '30s', max: '1m' } },
    });
    await harness.startRun();
    // A few upgrades done (verified or under verification), most still to come: a new build now.
    await harness.waitFor(
      (s) => (s.rollouts[0]?.counts.succeeded ?? 0) + (s.rollouts[0]?.counts.verifying ?? 0) >= 5,
      30_000,
    );
    const released = await fetch(`${harness.sim.url}/_sim/builds`, {
      method: 'POST',
      body: JSON.stringify({ version: '19.480-1' }),
    });
    expect(released.status).toBe(201);
    const status = await harness.waitFor(
      (s) => s.rollouts.some((r) => r.id === 'follow@19.480-1' && r.phase === 'converged'),
      60_000,
    );
    const old = status.rollouts.find((r) => r.id === `follow@${LATEST}`);
    const fresh = status.rollouts.find((r) => r.id === 'follow@19.480-1');
    expect(old?.phase).toBe('superseded');
    expect(old?.counts.skipped ?? 0).toBeGreaterThan(0);
    expect(old?.counts.queued ?? 0).toBe(0);
    expect(fresh?.counts).toEqual({ succeeded: 30 });
    const sim = await harness.simCollectors();
    expect(sim.every((c) => c.version === '19.480-1')).toBe(true);
    // The two rollouts of the policy share its limit while the old one's last upgrades finish.
    expect((await harness.simStats()).maxConcurrentTasks).toBeLessThanOrEqual(5);
    for (const c of sim) {
      expect(c.tasks.filter((t) => t.toVersion === LATEST).length, `collector ${c.id}`).toBeLessThanOrEqual(
        1,
      );
      expect(c.tasks.filter((t) => t.toVersion === '19.480-1').length, `collector ${c.id}`).toBe(1);
    }
  }, 90_000);
});
