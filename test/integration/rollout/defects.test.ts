/**
 * The defects that made the core one state machine with one admitter (issue #8), each shown
 * fixed through the real path: the orchestrator (scheduler + BullMQ workers, in this process or
 * as the built CLI) on the real Redis, against the simulator over HTTP at an accelerated clock.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetStatus } from '../../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { converged, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
const LATEST = '19.470-4';
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function setAlive(h: Harness, id: number, alive: boolean): Promise<void> {
  const res = await fetch(`${h.sim.url}/_sim/collectors/${id}`, {
    method: 'PATCH',
    body: JSON.stringify({ alive }),
  });
  expect(res.status).toBe(200);
}

function collectors(count: number, patch: Record<string, unknown> = {}) {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    version: '19.400-5',
    outcome: 'succeed' as const,
    upgradeSeconds: 60,
    ...patch,
  }));
}

function fleet(list: FleetFileInput['collectors'], users?: FleetFileInput['users']): FleetFileInput {
  return {
    builds: BUILDS,
    users: users ?? [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: list,
    behaviour: { incrementalAbove: 0 },
  };
}

const rollout = (s: FleetStatus) => s.rollouts[0];

describe('a Collector that comes back', () => {
  it('taken offline after the first scan, it ends not_alive, and is upgraded once it is back online while run runs', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(collectors(4)),
      policy: {
        name: 'returning',
        maxInFlight: 4,
        // The first wave is Collector 1 alone: Collector 4 is admitted after it went offline.
        waves: [1, '100%'],
        retry: { notAlive: { attempts: 2, backoff: '1m' } },
        poll: { initial: '20s', max: '1m' },
      },
    });
    const h = harness;
    await h.startRun({ scanIntervalMs: 2 * 60_000 });
    await h.waitFor((s) => (rollout(s)?.total ?? 0) === 4, 20_000);
    await setAlive(h, 4, false);
    await h.waitFor((s) => rollout(s)?.counts.not_alive === 1, 30_000);
    const down = (await h.records()).find((r) => r.id === 4);
    expect(down).toMatchObject({ state: 'not_alive', attempts: 2 });
    expect((await h.simCollectors()).find((c) => c.id === 4)?.tasks).toEqual([]);

    await setAlive(h, 4, true);
    const status = await h.waitFor((s) => rollout(s)?.counts.succeeded === 4, 30_000);
    expect(rollout(status)?.counts).toEqual({ succeeded: 4 });
    const back = (await h.records()).find((r) => r.id === 4);
    expect(back).toMatchObject({ state: 'succeeded', attempts: 3, admissions: 3 });
    const sim = (await h.simCollectors()).find((c) => c.id === 4);
    expect(sim?.version).toBe(LATEST);
    expect(sim?.tasks).toHaveLength(1);
  }, 60_000);
});

describe('a create answered 403', () => {
  // The defect: the record went back to `admitted` without counting the attempt; the create was
  // sent about once a second forever, the slot never given back, and `run --once` never ended.
  // Since organizations (issue 17), a 403 on create is the organization's (its key may read but
  // not manage Collectors): its Collectors wait without an error counted, their slots given back,
  // its part waits with one probe create per growing back-off, and `run --once` ends naming it.
  it('frees each slot, counts no error, probes with a growing back-off, and run --once ends naming the organization', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(collectors(5), [{ accessId: 'reader', accessKey: 'reader-secret', canCreate: false }]),
      policy: {
        name: 'forbidden',
        maxInFlight: 2,
        retry: { errors: { attempts: 3, backoff: '1m' } },
      },
    });
    const h = harness;
    const run = h.spawnCli(['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    expect(await exitOf(run, 60_000), run.output()).toBe(1);
    expect(run.output()).toMatch(/org default: credentials may not manage Collectors \(403\) since /);
    const records = await h.records();
    expect(records).toHaveLength(5);
    for (const r of records) {
      // Refused ones wait to be tried again; the others were never let through.
      expect(['waiting_retry', 'queued']).toContain(r.state);
      expect(r.errorAnswers).toBe(0);
      expect(r.attempts).toBeLessThanOrEqual(2);
    }
    expect(records.filter((r) => r.state === 'waiting_retry').length).toBeGreaterThanOrEqual(2);
    const stats = await h.simStats();
    // Two creates before the organization was known to refuse them, then one probe per back-off:
    // nothing like one a second.
    expect(stats.requests.byEndpoint.create).toBeGreaterThanOrEqual(2);
    expect(stats.requests.byEndpoint.create).toBeLessThanOrEqual(6);
    expect(stats.tasksCreated).toBe(0);
    const status = await h.status();
    expect(rollout(status)?.inflight).toBe(0);
    expect(await h.redis.scard(h.keys.slots('forbidden'))).toBe(0);
  }, 90_000);
});

describe('a retry and a halt', () => {
  // The defect: a Collector waiting to come alive took its slot back inside the worker, so a
  // halted rollout went on creating tasks for its retries.
  it('a Collector waiting to retry gets no create while the rollout is halted, and is upgraded after resume', async () => {
    const failing = collectors(6, { outcome: 'fail', failureCause: 'unknown', upgradeSeconds: 30 });
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet([...failing, { id: 50, version: '19.400-5', outcome: 'succeed', upgradeSeconds: 30 }]),
      policy: {
        name: 'halting',
        maxInFlight: 10,
        failureGate: { maxFailureRatio: 0.2, minOutcomes: 3 },
        retry: { notAlive: { attempts: 10, backoff: '2m' } },
        poll: { initial: '20s', max: '1m' },
      },
    });
    const h = harness;
    // Collector 50 is down when the rollout starts: its first create is answered not alive.
    await setAlive(h, 50, false);
    await h.startRun();
    const halted = await h.waitFor(
      (s) => rollout(s)?.phase === 'halted' && (rollout(s)?.inflight ?? 1) === 0,
      30_000,
    );
    expect(rollout(halted)?.counts.waiting_retry).toBe(1);
    await setAlive(h, 50, true);
    const createsAtHalt = (await h.simStats()).requests.byEndpoint.create;
    // Ten back-offs of simulated time pass: the retry is due many times over, and held.
    await new Promise((r) => setTimeout(r, (10 * 2 * 60_000) / 300));
    expect((await h.simStats()).requests.byEndpoint.create).toBe(createsAtHalt);
    expect((await h.simCollectors()).find((c) => c.id === 50)?.tasks).toEqual([]);

    const resume = h.spawnCli(['resume', rollout(halted)?.id as string]);
    expect(await exitOf(resume, 20_000), resume.output()).toBe(0);
    await h.waitFor((s) => rollout(s)?.counts.succeeded === 1, 30_000);
    expect((await h.simCollectors()).find((c) => c.id === 50)?.version).toBe(LATEST);
  }, 90_000);
});

describe('a newer build mid-rollout', () => {
  // The defect: in-flight was counted per policy but shown per rollout, so the old rollout showed
  // the new one's count too and the dashboard counted it twice.
  it('each rollout shows its own in-flight count, and together they keep the policy’s limit', async () => {
    harness = await startHarness({
      timeScale: 300,
      // The first six (the old rollout's) end one after another, so both rollouts run at once.
      fleet: fleet(collectors(24).map((c) => ({ ...c, upgradeSeconds: c.id <= 6 ? 60 + 120 * c.id : 120 }))),
      policy: { name: 'twice', maxInFlight: 6, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    await h.waitFor((s) => (rollout(s)?.inflight ?? 0) === 6, 20_000);
    const released = await fetch(`${h.sim.url}/_sim/builds`, {
      method: 'POST',
      body: JSON.stringify({ version: '19.480-1' }),
    });
    expect(released.status).toBe(201);
    const both = (s: FleetStatus) => s.rollouts.length === 2 && s.rollouts.every((r) => r.inflight > 0);
    const status = await h.waitFor(both, 30_000);
    const byId = new Map(status.rollouts.map((r) => [r.id, r]));
    const old = byId.get(`twice@${LATEST}`);
    const fresh = byId.get('twice@19.480-1');
    expect(old?.phase).toBe('superseded');
    for (const r of [old, fresh]) {
      const own =
        (r?.counts.admitted ?? 0) +
        (r?.counts.creating ?? 0) +
        (r?.counts.pending ?? 0) +
        (r?.counts.progressing ?? 0) +
        (r?.counts.reconciling ?? 0);
      expect(r?.inflight, r?.id).toBe(own);
    }
    expect((old?.inflight ?? 0) + (fresh?.inflight ?? 0)).toBeLessThanOrEqual(6);
    expect(old?.inflight).toBeLessThan(6);
    await h.waitFor(
      (s) => s.rollouts.some((r) => r.id === 'twice@19.480-1' && r.phase === 'converged'),
      60_000,
    );
    expect((await h.simStats()).maxConcurrentTasks).toBeLessThanOrEqual(6);
  }, 90_000);
});

describe('a policy that is disabled', () => {
  it('pauses its rollout: status shows paused (policy disabled), nothing new starts; enabled again, it converges', async () => {
    harness = await startHarness({
      timeScale: 300,
      tickMs: 100,
      fleet: fleet(collectors(20, { upgradeSeconds: 120 })),
      policy: { name: 'toggled', maxInFlight: 3, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    // Three tasks ended (their Collectors verified or under verification): most still queued.
    await h.waitFor(
      (s) => (rollout(s)?.counts.succeeded ?? 0) + (rollout(s)?.counts.verifying ?? 0) >= 3,
      30_000,
    );
    const { writeFileSync } = await import('node:fs');
    const { stringify } = await import('yaml');
    const policy = { name: 'toggled', maxInFlight: 3, poll: { initial: '30s', max: '1m' } };
    writeFileSync(h.policyFile, stringify({ ...policy, enabled: false }));
    // The policy folder is re-read every 2 s: the rollout pauses, its tasks under way end.
    const paused = await h.waitFor(
      (s) => rollout(s)?.phase === 'paused' && (rollout(s)?.inflight ?? 1) === 0,
      20_000,
    );
    const statusCli = h.spawnCli(['status']);
    expect(await exitOf(statusCli, 20_000)).toBe(0);
    expect(statusCli.output()).toMatch(/paused \(policy disabled\)/);
    const created = (await h.simStats()).tasksCreated;
    expect(rollout(paused)?.counts.queued ?? 0).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1500)); // 7.5 simulated minutes
    expect((await h.simStats()).tasksCreated).toBe(created);

    writeFileSync(h.policyFile, stringify(policy));
    const done = await h.waitFor(converged, 60_000);
    expect(rollout(done)?.counts).toEqual({ succeeded: 20 });
    run.kill('SIGTERM');
    await exitOf(run, 20_000);
  }, 120_000);
});
