/**
 * The status snapshot of `status`, `/status` and the metrics, read from a real Redis: every
 * rollout newest first, with its counts per state, its own in-flight count (its Collectors in
 * slot states, even when rollouts of one policy share the slots), total, done (settled), the
 * phase as a person reads it, and the upgrade queue's job counts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import { createUpgradeQueue, enqueueUpgrades } from '../../../src/queue/upgrade-job.js';
import { type CollectorEvent, newRecord, transition } from '../../../src/rollout/collector/index.js';
import type { RolloutSettings } from '../../../src/rollout/life/index.js';
import { PAUSE_REASONS, readFleetStatus, rolloutStatus } from '../../../src/rollout/life/index.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS } from '../../support/rollout-settings.js';

const ctx = useTestRedis();
const connections: Redis[] = [];

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

const T0 = 1_736_150_400_000;
const SETTINGS: RolloutSettings = {
  ...TEST_SETTINGS,
  notAliveAttempts: 1,
  errorAttempts: 1,
  transientAttempts: 3,
};

const admit: CollectorEvent = { type: 'admit' };
const send: CollectorEvent = { type: 'send' };
const created: CollectorEvent = { type: 'created', taskId: '1', requestTime: T0, createdBy: 'test' };
const unknown: CollectorEvent = { type: 'task_unknown', proven: true, message: 'collector.in.upgrading' };

function open() {
  return createState(ctx.redis, ctx.prefix);
}

/** Discovers Collector `id` of a rollout and drives it through `events` (every move written). */
async function collector(rolloutId: string, id: number, events: CollectorEvent[]) {
  const { store } = open();
  await store.discover(rolloutId, [
    newRecord({ id, name: `c${id}`, collectorVersion: '19.400-5' }, '19.470-4', T0),
  ]);
  for (const event of events) {
    const t = transition(await store.get(rolloutId, id), event, { now: T0, settings: SETTINGS });
    if (!t.ok) throw new Error(t.reason);
    expect(await store.apply(rolloutId, [t.move], { limit: 10 })).toEqual(['written']);
  }
}

describe('readFleetStatus', () => {
  it('reads every rollout, newest first, with its counts, its own in-flight count, total and done', async () => {
    const s = open();
    await s.rollouts.start({
      policy: 'a',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 5,
      settings: SETTINGS,
      now: 1000,
    });
    await s.rollouts.start({
      policy: 'b',
      target: '19.470-4',
      build: '19.470-4',
      maxInFlight: 2,
      settings: SETTINGS,
      now: 2000,
    });
    const a = 'a@19.450-12';
    await collector(a, 1, [admit, send, created, { type: 'succeeded' }]);
    await collector(a, 2, [admit, send, created, { type: 'failed', message: 'disk full' }]);
    await collector(a, 3, [admit, send, created]);
    await collector(a, 4, []);
    await collector(a, 5, [admit, send, { type: 'not_alive', message: 'collector.not.alive' }]);
    await collector(a, 6, [{ type: 'supersede', message: 'newer build' }]);
    await collector(a, 7, [admit, send, unknown]);
    await collector(a, 8, [admit, { type: 'withdraw', message: 'paused' }]);

    const status = await readFleetStatus(s);
    expect(status.rollouts.map((r) => r.id)).toEqual(['b@19.470-4', a]);
    expect(status.queue).toEqual({});
    const counts = {
      succeeded: 1,
      failed: 1,
      pending: 1,
      queued: 1,
      not_alive: 1,
      skipped: 1,
      reconciling: 1,
      waiting_retry: 1,
    };
    expect(status.rollouts[1]).toEqual({
      ...(await s.rollouts.get(a)),
      counts,
      phaseText: 'running',
      inflight: 2,
      total: 8,
      done: 4,
      // Collector 8 waits to be tried again: when the first such try is due (issue #26).
      nextRetryAt: expect.any(Number),
      // One organization (a deployment without `orgs`): its part is the whole rollout.
      byOrg: [{ org: 'default', build: '19.450-12', counts, inflight: 2, total: 8, done: 4 }],
    });
    expect(status.orgProblems).toEqual([]);
    expect(status.rollouts[0]).toMatchObject({
      total: 0,
      done: 0,
      inflight: 0,
      counts: {},
      phaseText: 'running',
    });
  });

  // Regression: every rollout of a policy showed the policy's slots as its own in-flight count.
  it('shows each rollout of a policy its own in-flight count although they share the slots', async () => {
    const s = open();
    const older = 'linux@19.450-12';
    const newer = 'linux@19.470-4';
    await s.rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 5,
      settings: SETTINGS,
      now: 1000,
    });
    await s.rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: 2000,
    });
    await collector(older, 1, [admit, send, unknown]);
    await collector(older, 2, [admit, send, created]);
    await collector(newer, 1, [admit]);
    await collector(newer, 2, [admit, send]);
    await collector(newer, 3, [admit, send, created, { type: 'status', status: 6 }]);
    await collector(newer, 4, []);
    expect(await ctx.redis.scard(s.keys.slots('linux'))).toBe(5);

    const status = await readFleetStatus(s);
    expect(status.rollouts.map((r) => [r.id, r.inflight, r.total, r.done])).toEqual([
      [newer, 3, 4, 0],
      [older, 2, 2, 0],
    ]);
  });

  it('shows why a rollout is paused, and halted ones as halted', async () => {
    const s = open();
    const { rollout: a } = await s.rollouts.start({
      policy: 'a',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: 1000,
    });
    const { rollout: b } = await s.rollouts.start({
      policy: 'b',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: 2000,
    });
    await s.rollouts.move(a, 'pause', 3000, PAUSE_REASONS.policyDisabled);
    await s.rollouts.move(b, 'halt', 3000, '3 of 4 outcomes failed');
    const status = await readFleetStatus(s);
    expect(status.rollouts.map((r) => [r.id, r.phase, r.phaseText])).toEqual([
      ['b@19.470-4', 'halted', 'halted'],
      ['a@19.470-4', 'paused', 'paused (policy disabled)'],
    ]);
    expect(rolloutStatus({ ...a, phase: 'paused', pauseReason: undefined }, {}).phaseText).toBe('paused');
  });

  it('adds the upgrade queue’s job counts when given the queue', async () => {
    const s = open();
    const connection = createRedis(ctx.url, { name: 'status-test', forBullmq: true });
    connections.push(connection);
    const queue = createUpgradeQueue(connection, s.keys.bullPrefix);
    try {
      await enqueueUpgrades(queue, [
        { rolloutId: 'a@1', collectorId: 1, admission: 1 },
        { rolloutId: 'a@1', collectorId: 2, admission: 1 },
        { rolloutId: 'a@1', collectorId: 3, admission: 1 },
        // The same admission again is the same job.
        { rolloutId: 'a@1', collectorId: 3, admission: 1 },
      ]);
      await queue.add(
        'upgrade',
        { rolloutId: 'a@1', collectorId: 4, admission: 1 },
        { jobId: 'a@1#4#1', delay: 60_000 },
      );
      const status = await readFleetStatus({ ...s, queue });
      // Admissions' jobs carry a priority (turns between organizations): BullMQ counts them as
      // prioritized, the waiting of the jobs that have one.
      expect(status.queue).toEqual({
        waiting: 0,
        active: 0,
        delayed: 1,
        failed: 0,
        completed: 0,
        prioritized: 3,
      });
    } finally {
      await queue.close();
    }
  });
});
