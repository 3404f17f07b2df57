/**
 * The scheduler against a real Redis and a real BullMQ queue, with the service's listing stubbed
 * (what a scan sees is the test's to say): the one admitter (order, maxInFlight, waves, windows,
 * halts; retries under the same rules), catch-up of Collectors that come back, the resolution of
 * tasks of unknown id from the listings, policies disabled or removed, supersede. Every write
 * goes through the real store, so the slot set, counts and indexes are checked as they are.
 * (Whole rollouts against the simulator are in rollout.test.ts and defects.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import type { BuildTarget } from '../../../src/api/index.js';
import { Policy } from '../../../src/policy/schema.js';
import { jobIdOf } from '../../../src/queue/upgrade-job.js';
import { readFleetStatus } from '../../../src/rollout/life/index.js';
import {
  reconcileUnknownTasks,
  UNANSWERED_CREATE,
  UNSEEN_PAST_DEADLINE,
} from '../../../src/rollout/listings/index.js';
import {
  BUILD,
  collector,
  expectSlotsTrue,
  MINUTE,
  NEWER,
  OLD,
  useSchedulerHarness,
} from '../../support/scheduler-harness.js';

const setup = useSchedulerHarness();

describe('the one admitter', () => {
  it('admits from the first scan in discovery order up to maxInFlight, each with the job of its admission', async () => {
    const s = await setup({ maxInFlight: 3 });
    for (const id of [11, 12, 13, 14, 15]) s.fleet.set(id, collector(id));
    await s.tick();
    const rolloutId = await s.rolloutId();
    expect(await s.slots()).toEqual([11, 12, 13]);
    for (const id of [11, 12, 13]) {
      expect(await s.record(id)).toMatchObject({ state: 'admitted', admissions: 1 });
      const job = await s.queue.getJob(jobIdOf({ rolloutId, collectorId: id, admission: 1 }));
      expect(job?.data).toEqual({ rolloutId, collectorId: id, admission: 1 });
    }
    expect(await s.counts()).toEqual({ admitted: 3, queued: 2 });
    expect(await s.store.indexed(rolloutId, 'queued')).toEqual([14, 15]);

    // Another round admits nobody new while the slots are taken, and enqueues nothing twice.
    s.clock.advance(1000);
    await s.tick();
    expect(await s.slots()).toEqual([11, 12, 13]);
    expect(await s.queue.count()).toBe(3);
  });

  it('admits during the first scan, page by page, before the listing has ended', async () => {
    const s = await setup({ maxInFlight: 3, pageSize: 2 });
    for (let id = 101; id <= 110; id++) s.fleet.set(id, collector(id));
    const heldBefore: number[] = [];
    s.beforePage = async (index, toVersion) => {
      if (toVersion === BUILD && index > 0) heldBefore.push((await s.slots()).length);
    };
    await s.tick();
    // After the first page (two Collectors) both started; after the second, the third slot.
    expect(heldBefore).toEqual([2, 3, 3, 3]);
    expect(await s.slots()).toEqual([101, 102, 103]);
    expect((await s.counts()).queued).toBe(7);
  });

  it('waits for the whole first listing when the first wave selects its canaries', async () => {
    const s = await setup({ maxInFlight: 3, pageSize: 2, waves: [{ select: { ids: [109] } }, '100%'] });
    for (let id = 101; id <= 110; id++) s.fleet.set(id, collector(id));
    const heldBefore: number[] = [];
    s.beforePage = async (index, toVersion) => {
      if (toVersion === BUILD && index > 0) heldBefore.push((await s.slots()).length);
    };
    await s.tick();
    expect(heldBefore).toEqual([0, 0, 0, 0]);
    // The canary goes first.
    expect(await s.slots()).toEqual([109]);
  });

  it('gives retries that are due a slot first, and never one before its time', async () => {
    const s = await setup({ maxInFlight: 2 });
    await s.tick();
    const waiting = await s.seed(21, 'waiting_retry');
    await s.seed(22, 'queued');
    await s.seed(23, 'queued');
    s.clock.advance(1000);
    await s.tick();
    // The retry is not due yet: the queued ones go first.
    expect(await s.slots()).toEqual([22, 23]);
    expect((await s.record(21)).state).toBe('waiting_retry');
    // Slots free up and the retry's time comes.
    const r22 = await s.record(22);
    await s.store.apply(await s.rolloutId(), [
      { from: 'admitted', event: 'supersede', next: { ...r22, state: 'skipped' } },
    ]);
    s.clock.set(waiting.nextAttemptAt as number);
    await s.tick();
    expect(await s.record(21)).toMatchObject({ state: 'admitted', admissions: 2 });
    expect(await s.slots()).toEqual([21, 23]);
  });

  it('holds retries while the window is closed, like first attempts', async () => {
    // Open Monday 10:00-11:00 UTC; the clock starts Monday 09:00 UTC.
    const s = await setup({
      maxInFlight: 5,
      windows: [{ days: ['mon'], start: '10:00', end: '11:00', timeZone: 'UTC' }],
    });
    s.fleet.set(31, collector(31));
    await s.tick();
    const r = await s.seed(32, 'waiting_retry');
    expect(r.nextAttemptAt).toBeLessThanOrEqual(s.clock.now() + 5 * MINUTE);
    s.clock.advance(30 * MINUTE);
    await s.tick();
    expect(await s.counts()).toEqual({ queued: 1, waiting_retry: 1 });
    expect(await s.slots()).toEqual([]);
    s.clock.set(Date.UTC(2025, 0, 6, 10, 1, 0));
    await s.tick();
    expect(await s.slots()).toEqual([31, 32]);
  });

  // The defect behind it: a Collector waiting to come alive took its slot back inside the worker,
  // so a halted rollout (and waves and windows) never held its retries.
  it('holds retries of a halted rollout, and admits them again after resume', async () => {
    const s = await setup({ maxInFlight: 5, failureGate: { maxFailureRatio: 0.1, minOutcomes: 2 } });
    await s.tick();
    await s.seed(41, 'failed');
    await s.seed(42, 'failed');
    const retry = await s.seed(43, 'waiting_retry');
    s.clock.set((retry.nextAttemptAt as number) + 1);
    await s.tick();
    const rolloutId = await s.rolloutId();
    expect((await s.rollouts.get(rolloutId))?.phase).toBe('halted');
    expect((await s.record(43)).state).toBe('waiting_retry');
    expect(await s.slots()).toEqual([]);

    await s.rollouts.resume(rolloutId, await s.counts(), s.clock.now(), await s.store.waveCounts(rolloutId));
    await s.tick();
    expect(await s.record(43)).toMatchObject({ state: 'admitted', admissions: 2 });
  });

  it('lets the next wave wait for the earlier one, retries included', async () => {
    const s = await setup({ maxInFlight: 10, waves: [2, '100%'] });
    for (const id of [51, 52, 53, 54]) s.fleet.set(id, collector(id));
    await s.tick();
    expect(await s.slots()).toEqual([51, 52]);
    // 51 succeeds; 52 waits for a retry: the wave is not done, the next one waits.
    await s.drive(51, [
      { type: 'send' },
      { type: 'created', taskId: 't51', requestTime: s.clock.now(), createdBy: 'test' },
      { type: 'succeeded' },
    ]);
    await s.drive(52, [{ type: 'send' }, { type: 'not_alive', message: 'down' }]);
    s.clock.advance(1000);
    await s.tick();
    expect(await s.counts()).toEqual({ succeeded: 1, waiting_retry: 1, queued: 2 });
    // The retry is due: it is the first wave's; the second wave still waits for its outcome.
    s.clock.set(((await s.record(52)).nextAttemptAt as number) + 1);
    await s.tick();
    expect(await s.counts()).toEqual({ succeeded: 1, admitted: 1, queued: 2 });
  });
});

describe('catch-up of Collectors that come back', () => {
  // The defect behind it: a Collector recorded not_alive that came back online was never upgraded
  // ("already known are left alone").
  it('queues a not_alive Collector again when a scan lists it alive, and admits it', async () => {
    const s = await setup({ maxInFlight: 5 });
    await s.tick();
    await s.seed(61, 'not_alive');
    s.fleet.set(61, collector(61, { alive: false }));
    s.clock.advance(6 * MINUTE);
    await s.tick();
    expect((await s.record(61)).state).toBe('not_alive');

    s.fleet.set(61, collector(61, { alive: true }));
    s.clock.advance(6 * MINUTE);
    await s.tick();
    expect(await s.record(61)).toMatchObject({ state: 'admitted', notAliveAnswers: 0 });
    expect(s.log.lines().some((l) => l.msg === 'scan found Collectors' && l.caughtUp === 1)).toBe(true);
  });

  it('does not catch up after retry.notAlive.until, nor while the rollout is halted', async () => {
    const s = await setup({ retry: { notAlive: { until: '1h' } } });
    await s.tick();
    await s.seed(62, 'not_alive');
    s.fleet.set(62, collector(62));
    s.clock.advance(61 * MINUTE);
    await s.tick();
    expect((await s.record(62)).state).toBe('not_alive');

    const t = await setup({ failureGate: { maxFailureRatio: 0.1, minOutcomes: 1 } });
    await t.tick();
    await t.seed(63, 'failed');
    await t.seed(64, 'not_alive');
    t.clock.advance(1000);
    await t.tick();
    expect((await t.rollouts.get(await t.rolloutId()))?.phase).toBe('halted');
    t.fleet.set(64, collector(64));
    t.clock.advance(6 * MINUTE);
    await t.tick();
    expect((await t.record(64)).state).toBe('not_alive');
  });
});

describe('tasks of unknown id, resolved from the listings', () => {
  it('a task of ours whose id was lost (an unreadable 202) that ended without the build: failed, no second task', async () => {
    const s = await setup();
    await s.tick();
    await s.seed(71, 'reconciling');
    expect(await s.slots()).toEqual([71]);
    s.fleet.set(71, collector(71)); // offered again: no task runs, the build was not reached
    s.clock.advance(MINUTE);
    await s.tick();
    const r = await s.record(71);
    expect(r.state).toBe('failed');
    expect(r.message).toMatch(/task of unknown id ended without reaching the build/);
    expect(await s.slots()).toEqual([]);
    // Later scans leave it alone: a new attempt is the operator's to ask for.
    s.clock.advance(10 * MINUTE);
    await s.tick();
    expect((await s.record(71)).state).toBe('failed');
  });

  it('a task proven by a resend, offered again 31 minutes after its first create: timed_out (the service timed it out); 5 minutes after: failed (issue 25)', async () => {
    const s = await setup();
    await s.tick();
    // 78 and 79: first create sent now; no answer; sent again 2 minutes later, answered
    // collector.in.upgrading: a task of ours runs, its id never came.
    for (const id of [78, 79]) await s.seed(id, 'creating');
    s.clock.advance(2 * MINUTE);
    for (const id of [78, 79])
      await s.drive(id, [
        { type: 'resend' },
        { type: 'task_unknown', proven: true, message: 'collector.in.upgrading after a resend' },
      ]);
    s.clock.advance(3 * MINUTE);
    s.fleet.set(79, collector(79)); // offered again 5 minutes after the first create
    await s.tick();
    const early = await s.record(79);
    expect(early.state).toBe('failed');
    expect(early.message).toMatch(/task of unknown id ended without reaching the build/);
    s.clock.advance(26 * MINUTE);
    s.fleet.set(78, collector(78)); // offered again 31 minutes after the first create (29 after the resend)
    await s.tick();
    const late = await s.record(78);
    expect(late.state).toBe('timed_out');
    expect(late.message).toMatch(/31 min after its first create: .*30-minute time-out/);
    expect(await s.slots()).toEqual([]);
  });

  it('an unanswered create, offered again: unknown (no task was made, or one ended short of the build), never sent again, not a failure', async () => {
    const s = await setup({ failureGate: { maxFailureRatio: 0.01, minOutcomes: 1 } });
    await s.tick();
    await s.seed(72, 'creating');
    await s.drive(72, [{ type: 'task_unknown', proven: false, message: 'no answer' }]);
    s.fleet.set(72, collector(72));
    s.clock.advance(MINUTE);
    await s.tick();
    const r = await s.record(72);
    expect(r).toMatchObject({ state: 'unknown', admissions: 1, attempts: 1 });
    expect(r.message).toBe(`no answer; ${UNANSWERED_CREATE}`);
    expect(await s.slots()).toEqual([]);
    s.clock.advance(10 * MINUTE);
    await s.tick();
    expect(await s.record(72)).toMatchObject({ state: 'unknown', admissions: 1 });
    // The failure gate (1 % of 1 outcome) did not count it.
    expect((await s.rollout()).phase).not.toBe('halted');
  });

  it('an unanswered create, neither offered again nor on the build past its deadline: unknown', async () => {
    const s = await setup();
    await s.tick();
    await s.seed(76, 'creating');
    await s.drive(76, [{ type: 'task_unknown', proven: false, message: 'no answer' }]);
    s.clock.advance(40 * MINUTE);
    await s.tick();
    const r = await s.record(76);
    expect(r.state).toBe('unknown');
    expect(r.message).toBe(`no answer; ${UNSEEN_PAST_DEADLINE}`);
    expect(await s.slots()).toEqual([]);
  });

  it('seen on the build through another build’s listing: verified as a success; neither seen past the deadline: timed_out', async () => {
    const s = await setup();
    await s.tick();
    await s.seed(73, 'reconciling');
    await s.seed(74, 'reconciling');
    s.fleet.set(73, collector(73, { collectorVersion: BUILD }));
    s.clock.advance(MINUTE);
    await s.tick();
    // On the build: a success like any other, so verified like any other (the policy's default).
    expect(await s.record(73)).toMatchObject({ state: 'verifying', succeededAt: s.clock.now() });
    expect((await s.record(74)).state).toBe('reconciling');
    expect(s.listings).toContain(OLD);
    s.clock.advance(40 * MINUTE);
    await s.tick();
    expect(await s.record(74)).toMatchObject({ state: 'timed_out' });
    expect(await s.slots()).toEqual([]);
    await expectSlotsTrue(s, await s.rolloutId());
  });

  it('ignores a listing page read before the Collector went to reconciling', async () => {
    const s = await setup();
    await s.tick();
    const rolloutId = await s.rolloutId();
    await s.seed(75, 'reconciling');
    // A page read a moment before: the scheduler must not take it as evidence.
    const rollout = await s.rollouts.get(rolloutId);
    if (!rollout) throw new Error('no rollout');
    await reconcileUnknownTasks(
      {
        api: { collectorPages: async function* () {} },
        store: s.store,
        clock: s.clock,
        logger: s.log.logger,
      },
      rollout,
      { listed: new Map([[75, s.clock.now() - 1]]), pageSize: 1000, targets: s.targets },
    );
    expect((await s.record(75)).state).toBe('reconciling');
  });
});

describe('policies that are disabled, removed or superseded', () => {
  it('a disabled policy’s rollout shows paused (policy disabled) and admits nothing; enabled again it runs', async () => {
    const s = await setup({ maxInFlight: 1 });
    for (const id of [81, 82]) s.fleet.set(id, collector(id));
    await s.tick();
    const rolloutId = await s.rolloutId();
    expect(await s.slots()).toEqual([81]);
    const disabled = Policy.parse({ name: 'linux-fleet', maxInFlight: 1, enabled: false });
    await s.tick([disabled]);
    const status = (await readFleetStatus({ redis: s.redis, keys: s.keys, rollouts: s.rollouts }))
      .rollouts[0];
    expect(status).toMatchObject({
      phase: 'paused',
      pauseReason: 'policy disabled',
      phaseText: 'paused (policy disabled)',
    });
    // 81 finishes; 82 is not admitted while paused.
    const r81 = await s.record(81);
    await s.store.apply(rolloutId, [
      { from: 'admitted', event: 'supersede', next: { ...r81, state: 'skipped' } },
    ]);
    await s.tick([disabled]);
    expect((await s.record(82)).state).toBe('queued');
    await s.tick();
    expect((await s.rollouts.get(rolloutId))?.phase).toBe('running');
    expect((await s.record(82)).state).toBe('admitted');
  });

  it('a removed policy’s rollout shows paused (policy removed)', async () => {
    const s = await setup();
    s.fleet.set(83, collector(83));
    await s.tick();
    await s.tick([]);
    const r = await s.rollouts.get(await s.rolloutId());
    expect(r).toMatchObject({ phase: 'paused', pauseReason: 'policy removed' });
  });

  it('a newer build supersedes: waiting Collectors skipped with their slots freed, and each rollout shows its own in-flight', async () => {
    const s = await setup({ maxInFlight: 5 });
    for (const id of [91, 92]) s.fleet.set(id, collector(id));
    await s.tick();
    const oldId = await s.rolloutId();
    await s.seed(93, 'pending', 't93');
    await s.seed(94, 'reconciling');
    await s.seed(95, 'waiting_retry');
    await s.seed(96, 'queued');
    // A newer latest build is released.
    s.targets.push({ version: NEWER, latest: true });
    (s.targets[1] as BuildTarget).latest = false;
    s.clock.advance(2 * MINUTE);
    await s.tick();
    const newId = await s.rolloutId();
    expect(newId).not.toBe(oldId);
    expect((await s.rollouts.get(oldId))?.phase).toBe('superseded');
    expect((await s.record(95, oldId)).state).toBe('skipped');
    expect((await s.record(96, oldId)).state).toBe('skipped');
    // Under way: the pending task is followed by its job; the task of unknown id keeps its slot.
    expect((await s.record(93, oldId)).state).toBe('pending');
    expect((await s.record(94, oldId)).state).toBe('reconciling');
    await expectSlotsTrue(s, oldId);
    await expectSlotsTrue(s, newId);
    // The old rollout holds 4 of the policy's 5 slots (91, 92 admitted, 93, 94); the new one
    // admits into the one left, and each shows its own count.
    const status = await readFleetStatus({ redis: s.redis, keys: s.keys, rollouts: s.rollouts });
    const byId = new Map(status.rollouts.map((r) => [r.id, r]));
    expect(byId.get(oldId)?.inflight).toBe(4);
    expect(byId.get(newId)?.inflight).toBe(1);
  });

  it('follows a superseded rollout until its tasks of unknown id are resolved, then lets it go', async () => {
    const s = await setup({ maxInFlight: 5 });
    await s.tick();
    const oldId = await s.rolloutId();
    await s.seed(97, 'reconciling');
    s.targets.push({ version: NEWER, latest: true });
    (s.targets[1] as BuildTarget).latest = false;
    s.clock.advance(2 * MINUTE);
    await s.tick();
    expect(await s.redis.smembers(s.keys.followed)).toEqual([oldId]);
    // The task ends without reaching the old rollout's build: its listing offers it again.
    s.fleet.set(97, collector(97));
    s.clock.advance(MINUTE);
    await s.tick();
    const r = await s.record(97, oldId);
    expect(r.state).toBe('failed');
    expect(r.message).toMatch(/ended without reaching the build/);
    expect(await s.slots(oldId)).toEqual([]);
    await s.tick();
    expect(await s.redis.smembers(s.keys.followed)).toEqual([]);
  });
});
