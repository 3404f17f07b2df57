/**
 * The per-Collector upgrade state machine (processUpgrade) against the real simulator over HTTP
 * and a real Redis, driven step by step: each test calls processUpgrade as BullMQ would, and
 * moves the manual clock shared by the simulator and the processor by the delay the step asked
 * for (or by less, to look at an intermediate state). No BullMQ here.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/index.js';
import { InflightSlots } from '../../../src/rollout/inflight-slots.js';
import { createKeys } from '../../../src/rollout/keys.js';
import { type CollectorResult, type CollectorState, ResultStore } from '../../../src/rollout/result-store.js';
import { type RolloutSettings, RolloutStore } from '../../../src/rollout/rollout-store.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import {
  AMBIGUITY_WINDOW_MS,
  type ProcessorDeps,
  processUpgrade,
  type Step,
  type UpgradeEvents,
} from '../../../src/worker/upgrade-processor.js';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';
import {
  C,
  LATEST,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  TIMEOUT_SECONDS,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';
import {
  type SeenRequest,
  startDroppingProxy,
  startStubServer,
  stopStubServers,
} from '../../support/stub-server.js';

const ctx = useTestRedis();

afterEach(async () => {
  await closeTestClients();
  await stopStubServers();
  await stopTestSimulators();
});

const MINUTE = 60_000;
const SETTINGS: RolloutSettings = {
  pollInitialMs: 60_000,
  pollMaxMs: 5 * MINUTE,
  pollJitter: 0,
  taskTimeoutMs: 35 * MINUTE,
  notAliveAttempts: 3,
  notAliveBackoffMs: 10 * MINUTE,
};

interface Harness {
  t: TestSimulator;
  deps: ProcessorDeps;
  results: ResultStore;
  rollouts: RolloutStore;
  slots: InflightSlots;
  rolloutId: string;
  events: {
    created: number;
    retries: string[];
    finals: { state: CollectorState; durationMs?: number }[];
    slotsFreed: number;
  };
  log: ReturnType<typeof captureLogger>;
  /** Writes the Collector's record (from the simulator's view of it) in `state`; slot states take a slot. */
  seed(id: number, state?: CollectorState, extra?: Partial<CollectorResult>): Promise<CollectorResult>;
  step(id: number): Promise<Step>;
  record(id: number): Promise<CollectorResult>;
  /** Steps and follows the delays until the job is done; returns the steps' delays. */
  runToEnd(id: number, maxSteps?: number): Promise<number[]>;
}

interface HarnessOptions {
  fleet?: FleetFileInput;
  settings?: Partial<RolloutSettings>;
  maxInFlight?: number;
  /** Point the client here instead of at the simulator (a proxy in front of it). */
  baseUrl?: (t: TestSimulator) => Promise<string>;
  api?: (real: ProcessorDeps['api']) => ProcessorDeps['api'];
}

async function harness(options: HarnessOptions = {}): Promise<Harness> {
  const t = await startTestSimulator(options.fleet ?? testFleet());
  const baseUrl = options.baseUrl ? await options.baseUrl(t) : t.sim.baseUrl;
  const { client } = createTestClient(baseUrl);
  const keys = createKeys(ctx.prefix);
  const results = new ResultStore(ctx.redis, keys);
  const rollouts = new RolloutStore(ctx.redis, keys);
  const slots = new InflightSlots(ctx.redis, keys);
  const log = captureLogger('debug');
  const events: Harness['events'] = { created: 0, retries: [], finals: [], slotsFreed: 0 };
  const hooks: UpgradeEvents = {
    onTaskCreated: () => {
      events.created++;
    },
    onRetry: (reason) => {
      events.retries.push(reason);
    },
    onSlotFreed: (id) => {
      expect(id).toBe(rolloutId);
      events.slotsFreed++;
    },
    onFinal: (_rollout, record, durationMs) => {
      events.finals.push({ state: record.state, ...(durationMs === undefined ? {} : { durationMs }) });
    },
  };
  const deps: ProcessorDeps = {
    api: options.api ? options.api(client) : client,
    results,
    rollouts,
    slots,
    clock: t.clock,
    logger: log.logger,
    events: hooks,
    random: () => 0.5,
  };
  const { rollout } = await rollouts.ensure(
    'linux-fleet',
    'latest',
    LATEST,
    options.maxInFlight ?? 10,
    { ...SETTINGS, ...options.settings },
    t.clock.now(),
  );
  const rolloutId = rollout.id;
  const slotStates: readonly CollectorState[] = [
    'admitted',
    'creating',
    'reconciling',
    'pending',
    'progressing',
  ];

  const h: Harness = {
    t,
    deps,
    results,
    rollouts,
    slots,
    rolloutId,
    events,
    log,
    async seed(id, state = 'admitted', extra = {}) {
      const sim = (await t.simCollectors()).find((c) => c.id === id);
      const now = t.clock.now();
      const r: CollectorResult = {
        id,
        name: sim?.name ?? `collector-${id}`,
        hostName: `host-${id}`,
        from: sim?.version ?? '19.400-5',
        to: LATEST,
        state,
        attempts: 0,
        statusReads: 0,
        discoveredAt: now,
        ...(state === 'queued' ? {} : { admittedAt: now }),
        ...extra,
      };
      expect(await results.put(rolloutId, r)).toBe(true);
      if (slotStates.includes(state)) expect(await slots.acquire(rolloutId, [id], 1000)).toEqual([id]);
      return r;
    },
    step: (id) => processUpgrade({ rolloutId, collectorId: id }, deps),
    async record(id) {
      const r = await results.get(rolloutId, id);
      if (!r) throw new Error(`no record of ${id}`);
      return r;
    },
    async runToEnd(id, maxSteps = 200) {
      const delays: number[] = [];
      for (let i = 0; i < maxSteps; i++) {
        const s = await h.step(id);
        if (s.kind === 'done') return delays;
        expect(s.ms).toBeGreaterThan(0);
        delays.push(s.ms);
        t.clock.advance(s.ms);
      }
      throw new Error(`collector ${id} did not finish within ${maxSteps} steps`);
    },
  };
  return h;
}

/** A fleet whose Collector `id` is changed by `patch`. */
function fleetWith(id: number, patch: Record<string, unknown>, base = testFleet()): FleetFileInput {
  return {
    ...base,
    collectors: (base.collectors ?? []).map((c) => (c.id === id ? { ...c, ...patch } : c)),
  };
}

/**
 * A proxy in front of the simulator: `fault(req, n)` answers some requests itself (a status code
 * with a JSON error body) instead of forwarding them.
 */
async function faultyProxy(t: TestSimulator, fault: (req: SeenRequest, n: number) => number | undefined) {
  const stub = await startStubServer(async (req, res, n) => {
    const status = fault(req, n);
    if (status !== undefined) {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        status === 429
          ? JSON.stringify({
              id: 'RATEL-IMITE-D0000',
              errors: [{ code: 'rate.limit.exceeded', message: 'slow down' }],
            })
          : JSON.stringify({
              status,
              id: 'FAULT-FAULT-FAULT',
              code: 'service.unavailable',
              message: 'injected',
            }),
      );
      return;
    }
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    const answer = await request(`${t.sim.url}${req.url}`, {
      method: req.method as 'GET',
      headers: headers as Record<string, string>,
      ...(req.body ? { body: req.body } : {}),
    });
    const text = await answer.body.text();
    const type = answer.headers['content-type'];
    res.writeHead(answer.statusCode, typeof type === 'string' ? { 'content-type': type } : {});
    res.end(text);
  });
  return stub;
}

describe('processUpgrade: a Collector that upgrades', () => {
  it('goes admitted → pending → progressing → succeeded with the right record', async () => {
    const h = await harness();
    const t0 = h.t.clock.now();
    await h.seed(C.web1);

    // Create: the task id is recorded, the first read is poll.initial later.
    expect(await h.step(C.web1)).toEqual({ kind: 'delay', ms: SETTINGS.pollInitialMs });
    const sim = await h.t.simCollector(C.web1);
    expect(sim.tasks).toHaveLength(1);
    const taskId = String(sim.tasks[0]?.id);
    expect(await h.record(C.web1)).toMatchObject({
      state: 'pending',
      taskId,
      attempts: 1,
      statusReads: 0,
      createSentAt: t0,
      requestTime: t0,
    });
    expect(await h.slots.members(h.rolloutId)).toEqual([C.web1]);
    expect(h.events.created).toBe(1);

    // An early wake (1 s): the task is not started yet (status 0): still pending, one read spent.
    h.t.clock.advance(1000);
    expect(await h.step(C.web1)).toEqual({ kind: 'delay', ms: SETTINGS.pollInitialMs - 1000 });
    expect(await h.record(C.web1)).toMatchObject({ state: 'pending', statusReads: 1, lastStatus: 0 });

    // At poll.initial the Collector has picked it up (status 6).
    h.t.clock.set(t0 + SETTINGS.pollInitialMs);
    const s = await h.step(C.web1);
    expect(s.kind).toBe('delay');
    expect(await h.record(C.web1)).toMatchObject({ state: 'progressing', statusReads: 2, lastStatus: 6 });
    expect(await h.results.counts(h.rolloutId)).toEqual({ progressing: 1 });

    if (s.kind === 'delay') h.t.clock.advance(s.ms);
    const later = await h.runToEnd(C.web1);
    const done = await h.record(C.web1);
    const finishedTask = (await h.t.simCollector(C.web1)).tasks[0];
    expect(done).toMatchObject({
      state: 'succeeded',
      taskId,
      attempts: 1,
      statusReads: 3 + later.length,
      lastStatus: 2,
      message: '',
      from: '19.400-5',
      to: LATEST,
      requestTime: t0,
      finishedAt: h.t.clock.now(),
    });
    expect(finishedTask?.status).toBe(2);
    // Noticed at most ~20% (or the 15 s floor) after the service finished it.
    const serviceDuration = (finishedTask?.finishTime as number) - t0;
    expect(serviceDuration).toBeGreaterThanOrEqual(UPGRADE_SECONDS * 1000);
    const lateness = (done.finishedAt as number) - (finishedTask?.finishTime as number);
    expect(lateness).toBeGreaterThanOrEqual(0);
    expect(lateness).toBeLessThanOrEqual(Math.max(15_000, 0.2 * serviceDuration) + 1);

    // Slot given back, duration recorded, counters exact.
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    expect(await h.rollouts.durations(h.rolloutId)).toEqual([(done.finishedAt as number) - t0]);
    expect(await h.rollouts.get(h.rolloutId)).toMatchObject({
      statusReads: done.statusReads,
      createRequests: 1,
    });
    expect(await h.results.counts(h.rolloutId)).toEqual({ succeeded: 1 });
    expect(h.events.finals).toEqual([{ state: 'succeeded', durationMs: (done.finishedAt as number) - t0 }]);
    expect(h.events.slotsFreed).toBe(1);

    // A job that runs again after the end does nothing.
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect((await h.t.stats()).requests.byEndpoint.status).toBe(done.statusReads);
  });

  it('admits a queued Collector itself when a slot is free, and waits when none is', async () => {
    const h = await harness({ maxInFlight: 1 });
    await h.seed(C.web2, 'pending', { taskId: '424242' }); // holds the only slot
    await h.seed(C.web1, 'queued');
    const waiting = await h.step(C.web1);
    expect(waiting.kind).toBe('delay');
    if (waiting.kind === 'delay') expect(waiting.ms).toBeGreaterThanOrEqual(1000);
    expect((await h.record(C.web1)).state).toBe('queued');
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(0);

    await h.slots.release(h.rolloutId, C.web2);
    expect((await h.step(C.web1)).kind).toBe('delay');
    expect(await h.record(C.web1)).toMatchObject({
      state: 'pending',
      attempts: 1,
      admittedAt: h.t.clock.now(),
    });
    expect(await h.slots.members(h.rolloutId)).toEqual([C.web1]);
  });

  it('learns the first read from the durations this rollout observed', async () => {
    const h = await harness();
    for (let i = 0; i < 10; i++) await h.rollouts.recordDuration(h.rolloutId, 150_000 + i * 1000);
    await h.seed(C.web1);
    const first = await h.step(C.web1);
    expect(first.kind).toBe('delay');
    if (first.kind === 'delay') {
      expect(first.ms).toBeGreaterThanOrEqual(150_000);
      expect(first.ms).toBeLessThanOrEqual(152_000);
    }
  });

  it('upgrades an old Collector in increments within one task', async () => {
    const h = await harness();
    await h.seed(C.old);
    await h.runToEnd(C.old);
    expect(await h.record(C.old)).toMatchObject({ state: 'succeeded', attempts: 1, from: '19.100-1' });
    const sim = await h.t.simCollector(C.old);
    expect(sim.tasks).toHaveLength(1);
    expect(sim.version).toBe(LATEST);
  });
});

describe('processUpgrade: final outcomes other than success', () => {
  it('a task the service fails ends failed with the service’s message', async () => {
    const message = 'Upgrade failed: not enough disk space on the host to unpack the new build.';
    const h = await harness({ fleet: fleetWith(C.failing, { failureMessage: message }) });
    await h.seed(C.failing);
    await h.runToEnd(C.failing);
    const r = await h.record(C.failing);
    expect(r).toMatchObject({ state: 'failed', message, lastStatus: 3, attempts: 1 });
    expect(r.finishedAt).toBe(h.t.clock.now());
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    // Only successes teach the poll schedule.
    expect(await h.rollouts.durations(h.rolloutId)).toEqual([]);
    expect(h.events.finals.map((f) => f.state)).toEqual(['failed']);
    expect((await h.t.simCollector(C.failing)).tasks).toHaveLength(1);
  });

  it('a failure with a random service message keeps that message verbatim', async () => {
    const h = await harness();
    await h.seed(C.failing);
    await h.runToEnd(C.failing);
    const simTask = (await h.t.simCollector(C.failing)).tasks[0];
    expect(simTask?.status).toBe(3);
    expect(await h.record(C.failing)).toMatchObject({ state: 'failed', message: simTask?.message });
  });

  // Regression test (fixed) (src/worker/upgrade-processor.ts, poll(): `/time(d)?[ -]?out/i.test(task.message)`): any
  // failure whose message mentions a time-out (a download that timed out after 2 minutes) is
  // recorded as timed_out. The service's time-out is the task not finishing within 30 minutes of
  // its request; a task that failed 2 minutes in is `failed`, whatever its message says.
  it('a quick failure whose message mentions a time-out is failed, not timed_out', async () => {
    const message = 'Upgrade failed: the download of the installer timed out (connection to the CDN).';
    const h = await harness({ fleet: fleetWith(C.failing, { failureMessage: message }) });
    await h.seed(C.failing);
    await h.runToEnd(C.failing);
    const r = await h.record(C.failing);
    expect((r.finishedAt as number) - (r.requestTime as number)).toBeLessThan(10 * MINUTE);
    expect(r).toMatchObject({ state: 'failed', message });
  });

  it('a stuck task ends timed_out after the service’s 30 minutes, with the service’s message', async () => {
    const h = await harness();
    const t0 = h.t.clock.now();
    await h.seed(C.stuck);
    const delays = await h.runToEnd(C.stuck);
    const r = await h.record(C.stuck);
    const simTask = (await h.t.simCollector(C.stuck)).tasks[0];
    expect(simTask?.status).toBe(3);
    expect(simTask?.message).toMatch(/timed out/);
    expect(r).toMatchObject({ state: 'timed_out', message: simTask?.message, lastStatus: 3 });
    const elapsed = (r.finishedAt as number) - t0;
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000);
    expect(elapsed).toBeLessThanOrEqual(TIMEOUT_SECONDS * 1000 + SETTINGS.pollMaxMs + 1);
    // Few reads for 30 minutes of waiting.
    expect(r.statusReads).toBe(delays.length);
    expect(r.statusReads).toBeLessThanOrEqual(25);
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    expect(await h.rollouts.durations(h.rolloutId)).toEqual([]);
  });

  it('a task whose status never turns final ends timed_out at the local deadline', async () => {
    const h = await harness({ fleet: testFleet({ behaviour: { taskTimeoutSeconds: 7200 } }) });
    const t0 = h.t.clock.now();
    await h.seed(C.stuck);
    await h.runToEnd(C.stuck);
    const r = await h.record(C.stuck);
    expect(r.state).toBe('timed_out');
    expect(r.lastStatus).toBe(6);
    expect(r.message).toMatch(/no final status 35 minutes after the request/);
    const elapsed = (r.finishedAt as number) - t0;
    expect(elapsed).toBeGreaterThanOrEqual(SETTINGS.taskTimeoutMs);
    expect(elapsed).toBeLessThanOrEqual(SETTINGS.taskTimeoutMs + 1);
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    // The service still runs the task; we stopped following it.
    expect((await h.t.simCollector(C.stuck)).tasks[0]?.status).toBe(6);
  });

  it('a Hosted Collector is rejected at once, not retried', async () => {
    const h = await harness();
    await h.seed(C.hosted);
    expect(await h.step(C.hosted)).toEqual({ kind: 'done' });
    const r = await h.record(C.hosted);
    expect(r).toMatchObject({ state: 'rejected', attempts: 1, finishedAt: h.t.clock.now() });
    expect(r.message).toMatch(/^collector\.type\.invalid: /);
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    expect(h.events.finals.map((f) => f.state)).toEqual(['rejected']);
    expect(h.events.slotsFreed).toBe(1);
    expect(h.events.retries).toEqual([]);
    // Running the job again sends nothing.
    expect(await h.step(C.hosted)).toEqual({ kind: 'done' });
    expect((await h.t.stats()).requests.byEndpoint.create).toBe(1);
  });

  it('an unknown build and a Collector we may not use are rejected with the vendor code', async () => {
    const h = await harness();
    await h.seed(C.web1, 'admitted', { to: '19.999-1' });
    await h.seed(999_999);
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect(await h.step(999_999)).toEqual({ kind: 'done' });
    expect((await h.record(C.web1)).message).toMatch(/^collector\.version\.invalid: /);
    expect((await h.record(999_999)).message).toMatch(/^collector\.invalid: /);
    expect(await h.results.counts(h.rolloutId)).toEqual({ rejected: 2 });
  });

  it('a task id the service does not know ends failed, naming the id', async () => {
    const h = await harness();
    await h.seed(C.web1, 'pending', { taskId: '99999999', requestTime: h.t.clock.now(), attempts: 1 });
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    const r = await h.record(C.web1);
    expect(r.state).toBe('failed');
    expect(r.message).toMatch(/^task 99999999 not found/);
    expect(await h.slots.count(h.rolloutId)).toBe(0);
  });
});

describe('processUpgrade: Collectors that are not alive', () => {
  it('waits with its slot released, and upgrades once the Collector is back', async () => {
    const h = await harness({ maxInFlight: 1 });
    const t0 = h.t.clock.now();
    await h.seed(C.offline);

    expect(await h.step(C.offline)).toEqual({ kind: 'delay', ms: SETTINGS.notAliveBackoffMs });
    expect(await h.record(C.offline)).toMatchObject({
      state: 'waiting_alive',
      attempts: 1,
      nextAttemptAt: t0 + SETTINGS.notAliveBackoffMs,
      message: `Collector ${C.offline} is not alive.`,
    });
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    expect(h.events.retries).toEqual(['collector_not_alive']);
    expect(h.events.slotsFreed).toBe(1);

    // Woken early: it waits out the rest of the backoff without a request.
    h.t.clock.advance(MINUTE);
    expect(await h.step(C.offline)).toEqual({ kind: 'delay', ms: SETTINGS.notAliveBackoffMs - MINUTE });
    expect((await h.rollouts.get(h.rolloutId))?.createRequests).toBe(1);

    // Meanwhile another Collector took the only slot: at the end of the backoff it waits for one.
    await h.seed(C.web2, 'pending', { taskId: '424242' });
    h.t.clock.set(t0 + SETTINGS.notAliveBackoffMs);
    const blocked = await h.step(C.offline);
    expect(blocked.kind).toBe('delay');
    expect((await h.record(C.offline)).state).toBe('waiting_alive');
    expect((await h.rollouts.get(h.rolloutId))?.createRequests).toBe(1);
    await h.slots.release(h.rolloutId, C.web2);

    // The Collector comes back.
    const patched = await h.t.raw('PATCH', `/_sim/collectors/${C.offline}`, { body: { alive: true } });
    expect(patched.status).toBe(200);
    await h.runToEnd(C.offline);
    const r = await h.record(C.offline);
    expect(r).toMatchObject({ state: 'succeeded', attempts: 2, message: '' });
    expect(r.admittedAt).toBeGreaterThanOrEqual(t0 + SETTINGS.notAliveBackoffMs);
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    const sim = await h.t.simCollector(C.offline);
    expect(sim.tasks).toHaveLength(1);
    expect(sim.version).toBe(LATEST);
    expect(String(sim.tasks[0]?.id)).toBe(r.taskId);
  });

  it('ends not_alive once the attempts are spent, without any task', async () => {
    const h = await harness({ settings: { notAliveAttempts: 3 } });
    const t0 = h.t.clock.now();
    await h.seed(C.offline);
    const delays = await h.runToEnd(C.offline);
    expect(delays).toEqual([SETTINGS.notAliveBackoffMs, SETTINGS.notAliveBackoffMs]);
    const r = await h.record(C.offline);
    expect(r).toMatchObject({
      state: 'not_alive',
      attempts: 3,
      message: `Collector ${C.offline} is not alive.`,
      finishedAt: t0 + 2 * SETTINGS.notAliveBackoffMs,
    });
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    expect((await h.t.simCollector(C.offline)).tasks).toHaveLength(0);
    expect((await h.rollouts.get(h.rolloutId))?.createRequests).toBe(3);
    expect(h.events.retries).toEqual(['collector_not_alive', 'collector_not_alive']);
    expect(h.events.finals.map((f) => f.state)).toEqual(['not_alive']);
  });

  it('with one attempt allowed, ends not_alive at the first answer', async () => {
    const h = await harness({ settings: { notAliveAttempts: 1 } });
    await h.seed(C.offline);
    expect(await h.step(C.offline)).toEqual({ kind: 'done' });
    expect(await h.record(C.offline)).toMatchObject({ state: 'not_alive', attempts: 1 });
  });
});

describe('processUpgrade: creates of unknown outcome', () => {
  it('a record found in creating older than the ambiguity window is reconciled, not created again', async () => {
    const h = await harness();
    // The first create reached the service; the process died before recording the task id.
    await h.t.createTask(C.web1, LATEST);
    const sentAt = h.t.clock.now();
    await h.seed(C.web1, 'creating', { createSentAt: sentAt, attempts: 1 });
    h.t.clock.advance(AMBIGUITY_WINDOW_MS + 1000);

    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect(await h.record(C.web1)).toMatchObject({
      state: 'reconciling',
      reconcilingSince: sentAt,
      attempts: 1,
    });
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(1);
    expect((await h.t.stats()).requests.byEndpoint.create).toBe(1); // the test's own
    // Reconciling keeps the slot: the task may still be running.
    expect(await h.slots.members(h.rolloutId)).toEqual([C.web1]);
    expect(h.events.slotsFreed).toBe(0);
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect((await h.record(C.web1)).state).toBe('reconciling');
  });

  it('a younger creating record is retried; collector.in.upgrading then means reconciling', async () => {
    const h = await harness();
    await h.t.createTask(C.web1, LATEST);
    await h.seed(C.web1, 'creating', { createSentAt: h.t.clock.now(), attempts: 1 });
    h.t.clock.advance(AMBIGUITY_WINDOW_MS - 2000);

    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    const r = await h.record(C.web1);
    expect(r).toMatchObject({ state: 'reconciling', attempts: 1 });
    expect(r.message).toMatch(/currently being upgraded/);
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(1);
    expect((await h.t.stats()).requests.byEndpoint.create).toBe(2);
    expect(await h.slots.members(h.rolloutId)).toEqual([C.web1]);
  });

  it('a younger creating record whose create never arrived gets its task on the retry', async () => {
    const h = await harness();
    await h.seed(C.web1, 'creating', { createSentAt: h.t.clock.now(), attempts: 1 });
    h.t.clock.advance(1000);
    expect((await h.step(C.web1)).kind).toBe('delay');
    const r = await h.record(C.web1);
    const sim = await h.t.simCollector(C.web1);
    expect(sim.tasks).toHaveLength(1);
    expect(r).toMatchObject({ state: 'pending', attempts: 1, taskId: String(sim.tasks[0]?.id) });
  });

  it('a create whose answer was lost is retried at once; the service then says it took', async () => {
    let creates = 0;
    const h = await harness({
      baseUrl: async (t) => {
        const proxy = await startDroppingProxy(t.sim.url, (req) => req.method === 'POST' && ++creates === 1);
        return proxy.baseUrl;
      },
    });
    await h.seed(C.web1);
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect((await h.record(C.web1)).state).toBe('reconciling');
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(1);
    expect(creates).toBe(2);
  });
});

describe('processUpgrade: service faults are retried, never a Collector’s failure', () => {
  it('a create answered 503 on every retry goes back to admitted and tries again later', async () => {
    let failing = true;
    const h = await harness({
      baseUrl: async (t) =>
        (await faultyProxy(t, (req) => (failing && req.method === 'POST' ? 503 : undefined))).baseUrl,
    });
    await h.seed(C.web1);
    const s = await h.step(C.web1);
    expect(s.kind).toBe('delay');
    expect(await h.record(C.web1)).toMatchObject({ state: 'admitted', attempts: 0 });
    expect(h.events.retries).toEqual(['server_error']);
    expect(await h.slots.members(h.rolloutId)).toEqual([C.web1]);
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(0);

    failing = false;
    await h.runToEnd(C.web1);
    expect(await h.record(C.web1)).toMatchObject({ state: 'succeeded', attempts: 1 });
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(1);
  });

  it('status reads answered 429 leave the record as it was and are read again later', async () => {
    let limited = false;
    const h = await harness({
      baseUrl: async (t) =>
        (await faultyProxy(t, (req) => (limited && req.method === 'GET' ? 429 : undefined))).baseUrl,
    });
    await h.seed(C.web1);
    const first = await h.step(C.web1);
    if (first.kind === 'delay') h.t.clock.advance(first.ms);
    limited = true;
    const before = await h.record(C.web1);
    const s = await h.step(C.web1);
    expect(s.kind).toBe('delay');
    expect(await h.record(C.web1)).toEqual(before);
    expect(h.events.retries).toEqual(['rate_limited']);

    limited = false;
    if (s.kind === 'delay') h.t.clock.advance(s.ms);
    await h.runToEnd(C.web1);
    expect((await h.record(C.web1)).state).toBe('succeeded');
  });

  it('gives up reading a status that never comes only well past the deadline, as timed_out', async () => {
    const h = await harness({
      api: (real) => ({
        createTask: (input, signal) => real.createTask(input, signal),
        getTask: async () => {
          throw new ApiError('server', 'GET status answered 503', { endpoint: 'status', status: 503 });
        },
      }),
    });
    const t0 = h.t.clock.now();
    await h.seed(C.web1);
    await h.runToEnd(C.web1);
    const r = await h.record(C.web1);
    expect(r.state).toBe('timed_out');
    expect(r.message).toMatch(/^no status could be read: /);
    expect((r.finishedAt as number) - t0).toBeGreaterThan(SETTINGS.taskTimeoutMs);
    expect(await h.slots.count(h.rolloutId)).toBe(0);
    expect(h.events.retries.every((x) => x === 'server_error')).toBe(true);
  });
});

describe('processUpgrade: crash leftovers', () => {
  // Regression test (fixed) (src/worker/upgrade-processor.ts, `finish` and the final-state case of the switch): the
  // outcome is written, then the slot released, in two steps. A process killed between them leaves
  // a final record that still holds an in-flight slot; the stalled job runs again, finds a final
  // state and returns `done` without releasing it, and nothing else ever does: the rollout's
  // effective maxInFlight shrinks by one for good with every such crash.
  it('a final record still holding a slot gets it back on the next step', async () => {
    const h = await harness();
    await h.seed(C.web1, 'succeeded', { taskId: '1', finishedAt: h.t.clock.now() });
    await h.slots.acquire(h.rolloutId, [C.web1], 10);
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect(await h.slots.count(h.rolloutId)).toBe(0);
  });

  // Regression test (fixed) (same cause, the collector.not.alive branch of `create`): killed between writing
  // waiting_alive and releasing the slot, the Collector keeps its slot for the whole backoff
  // (10 minutes by default), and the step that finds it early re-delays without releasing it.
  it('a waiting_alive record still holding a slot gives it back while it waits', async () => {
    const h = await harness();
    const now = h.t.clock.now();
    await h.seed(C.offline, 'waiting_alive', {
      attempts: 1,
      nextAttemptAt: now + SETTINGS.notAliveBackoffMs,
    });
    await h.slots.acquire(h.rolloutId, [C.offline], 10);
    expect(await h.step(C.offline)).toEqual({ kind: 'delay', ms: SETTINGS.notAliveBackoffMs });
    expect(await h.slots.count(h.rolloutId)).toBe(0);
  });

  it('two steps of one Collector at once (a stalled job taken up twice) create one task', async () => {
    const h = await harness();
    for (const id of [C.web1, C.web2, C.old]) await h.seed(id);
    const steps = await Promise.all([C.web1, C.web2, C.old].flatMap((id) => [h.step(id), h.step(id)]));
    expect(steps.filter((s) => s.kind === 'delay').length).toBeGreaterThanOrEqual(3);
    for (const id of [C.web1, C.web2, C.old]) {
      const sim = await h.t.simCollector(id);
      expect(sim.tasks).toHaveLength(1);
      expect(await h.record(id)).toMatchObject({
        state: 'pending',
        attempts: 1,
        taskId: String(sim.tasks[0]?.id),
      });
    }
    expect(await h.results.counts(h.rolloutId)).toEqual({ pending: 3 });
  });

  it('an admitted record (killed before the create was sent) creates its task', async () => {
    const h = await harness();
    await h.seed(C.web1, 'admitted');
    expect((await h.step(C.web1)).kind).toBe('delay');
    expect(await h.record(C.web1)).toMatchObject({ state: 'pending', attempts: 1 });
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(1);
  });

  it('a pending record (killed while following the task) picks up polling where it was', async () => {
    const h = await harness();
    const taskId = await h.t.createTask(C.web1, LATEST);
    const t0 = h.t.clock.now();
    await h.seed(C.web1, 'pending', { taskId, requestTime: t0, createSentAt: t0, attempts: 1 });
    h.t.clock.advance(10 * MINUTE);
    expect(await h.step(C.web1)).toEqual({ kind: 'done' });
    expect(await h.record(C.web1)).toMatchObject({ state: 'succeeded', taskId, statusReads: 1, attempts: 1 });
    expect((await h.t.simCollector(C.web1)).tasks).toHaveLength(1);
    expect(await h.rollouts.durations(h.rolloutId)).toEqual([10 * MINUTE]);
  });
});

describe('processUpgrade: records it must leave alone', () => {
  it('does nothing for final or reconciling records, or records and rollouts that do not exist', async () => {
    const h = await harness();
    for (const [id, state] of [
      [C.web1, 'succeeded'],
      [C.web2, 'failed'],
      [C.old, 'reconciling'],
      [C.failing, 'skipped'],
    ] as const) {
      await h.seed(id, state);
      expect(await h.step(id)).toEqual({ kind: 'done' });
      expect((await h.record(id)).state).toBe(state);
    }
    expect(await h.step(C.stuck)).toEqual({ kind: 'done' }); // no record
    expect(await processUpgrade({ rolloutId: 'nobody@1.0-1', collectorId: C.web1 }, h.deps)).toEqual({
      kind: 'done',
    });
    const stats = await h.t.stats();
    expect(stats.requests.byEndpoint.create + stats.requests.byEndpoint.status).toBe(0);
  });
});
