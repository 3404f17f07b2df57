/**
 * The BullMQ queue "upgrades" and the worker on a real Redis: stable job ids make enqueueing
 * twice harmless, ensureJobs repairs missing and failed jobs, and the worker runs the upgrade
 * steps, re-delaying the job between them instead of holding a worker slot (driven by a
 * scaled clock and an in-process stand-in of the service, so a 60 s poll takes a few ms).
 */
import { type Queue, UnrecoverableError, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import type { CreateTaskResult, TaskStatusResult } from '../../../src/api/index.js';
import { createScaledClock } from '../../../src/lib/clock.js';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis.js';
import { InflightSlots } from '../../../src/rollout/inflight-slots.js';
import { createKeys } from '../../../src/rollout/keys.js';
import { type CollectorResult, ResultStore } from '../../../src/rollout/result-store.js';
import { RolloutStore } from '../../../src/rollout/rollout-store.js';
import { startUpgradeWorker } from '../../../src/worker/start-upgrade-worker.js';
import type { ProcessorDeps, UpgradeJobData } from '../../../src/worker/upgrade-processor.js';
import {
  createUpgradeQueue,
  enqueueUpgrades,
  ensureJobs,
  jobIdOf,
  QUEUE_NAME,
} from '../../../src/worker/upgrade-queue.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

const ROLLOUT = 'linux-fleet@19.470-4';

function bullConnection(): Redis {
  const c = createRedis(ctx.url, { name: 'queue-test', forBullmq: true });
  closers.push(() => closeRedis(c));
  return c;
}

function queue(): Queue<UpgradeJobData> {
  const q = createUpgradeQueue(bullConnection(), createKeys(ctx.prefix).bullPrefix);
  closers.push(() => q.close());
  return q;
}

describe('jobIdOf', () => {
  it('is stable, unique per rollout × Collector, and free of the ":" BullMQ forbids', () => {
    expect(jobIdOf(ROLLOUT, 101)).toBe(jobIdOf(ROLLOUT, 101));
    expect(jobIdOf(ROLLOUT, 101)).not.toBe(jobIdOf(ROLLOUT, 102));
    expect(jobIdOf(ROLLOUT, 101)).not.toBe(jobIdOf('linux-fleet@19.450-12', 101));
    expect(jobIdOf(ROLLOUT, 101)).not.toContain(':');
  });
});

describe('upgrade queue', () => {
  it('is named "upgrades" and keeps its keys under the deployment prefix', async () => {
    const q = queue();
    expect(q.name).toBe(QUEUE_NAME);
    await enqueueUpgrades(q, ROLLOUT, [1]);
    const keys = await ctx.redis.keys(`${ctx.prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(`${ctx.prefix}{fleet-upgrade}:bull:upgrades:`))).toBe(true);
  });

  it('enqueues one job per Collector, and enqueueing again adds none', async () => {
    const q = queue();
    await enqueueUpgrades(q, ROLLOUT, [1, 2, 3]);
    await enqueueUpgrades(q, ROLLOUT, [2, 3, 4]);
    await enqueueUpgrades(q, ROLLOUT, []);
    expect(await q.count()).toBe(4);
    const job = await q.getJob(jobIdOf(ROLLOUT, 3));
    expect(job?.data).toEqual({ rolloutId: ROLLOUT, collectorId: 3 });
  });

  it('ensureJobs adds the missing jobs that are still needed and retries failed ones', async () => {
    const q = queue();
    // Job 2 fails for good (say, a bug): taken by hand and failed without a retry.
    await enqueueUpgrades(q, ROLLOUT, [2]);
    const taker = new Worker<UpgradeJobData>(QUEUE_NAME, null, {
      connection: bullConnection(),
      prefix: createKeys(ctx.prefix).bullPrefix,
      autorun: false,
    });
    closers.push(() => taker.close());
    const failing = await taker.getNextJob('test-token');
    expect(failing?.id).toBe(jobIdOf(ROLLOUT, 2));
    await failing?.moveToFailed(new UnrecoverableError('boom'), 'test-token', false);
    expect(await (await q.getJob(jobIdOf(ROLLOUT, 2)))?.isFailed()).toBe(true);
    await enqueueUpgrades(q, ROLLOUT, [1]);

    const asked: number[] = [];
    const repaired = await ensureJobs(q, ROLLOUT, [1, 2, 3, 4], async (id) => {
      asked.push(id);
      return id === 3; // 4 finished meanwhile
    });
    expect(repaired).toBe(2);
    expect(asked).toEqual([3, 4]);
    expect(await (await q.getJob(jobIdOf(ROLLOUT, 2)))?.isFailed()).toBe(false);
    expect(await q.getJob(jobIdOf(ROLLOUT, 3))).toBeDefined();
    expect(await q.getJob(jobIdOf(ROLLOUT, 4))).toBeUndefined();
    expect(await ensureJobs(q, ROLLOUT, [1, 2, 3], async () => true)).toBe(0);
  });
});

describe('startUpgradeWorker', () => {
  it('runs a Collector to its outcome, re-delaying the job between status reads', async () => {
    const keys = createKeys(ctx.prefix);
    const results = new ResultStore(ctx.redis, keys);
    const rollouts = new RolloutStore(ctx.redis, keys);
    const slots = new InflightSlots(ctx.redis, keys);
    const scale = 1_000; // a 60 s poll takes 60 ms
    const clock = createScaledClock(scale);
    const reads: number[] = [];
    let createdAt = 0;
    // The service, in process: the task succeeds 3 minutes (clock time) after its request.
    const api: ProcessorDeps['api'] = {
      createTask: async (): Promise<CreateTaskResult> => {
        createdAt = clock.now();
        return { kind: 'created', taskId: '77', href: undefined, attempts: 1 };
      },
      getTask: async (): Promise<TaskStatusResult> => {
        reads.push(clock.now() - createdAt);
        const done = clock.now() - createdAt >= 180_000;
        return {
          kind: 'found',
          task: {
            id: '77',
            collectorId: 101,
            toVersion: '19.470-4',
            requestTime: createdAt,
            status: done ? 2 : 6,
            state: done ? 'succeeded' : 'progressing',
            message: '',
          },
        };
      },
    };
    const { rollout } = await rollouts.ensure(
      'linux-fleet',
      'latest',
      '19.470-4',
      5,
      {
        pollInitialMs: 60_000,
        pollMaxMs: 300_000,
        pollJitter: 0,
        taskTimeoutMs: 2_100_000,
        notAliveAttempts: 3,
        notAliveBackoffMs: 600_000,
      },
      clock.now(),
    );
    const record: CollectorResult = {
      id: 101,
      name: 'web-1',
      hostName: 'web-1',
      from: '19.450-12',
      to: '19.470-4',
      state: 'admitted',
      attempts: 0,
      statusReads: 0,
      discoveredAt: clock.now(),
    };
    await results.put(rollout.id, record);
    await slots.acquire(rollout.id, [101], 5);

    const finals: CollectorResult[] = [];
    const worker: Worker<UpgradeJobData> = startUpgradeWorker({
      connection: bullConnection(),
      prefix: keys.bullPrefix,
      timeScale: scale,
      concurrency: 1,
      deps: {
        api,
        results,
        rollouts,
        slots,
        clock,
        logger: captureLogger('debug').logger,
        random: () => 0.5,
        events: { onFinal: (_r, rec) => finals.push(rec) },
      },
    });
    closers.push(() => worker.close());
    const q = queue();
    await enqueueUpgrades(q, rollout.id, [101]);

    // Bounded waits (a few hundred real ms at most). Between two steps the job is delayed, not
    // active: the worker slot is free while the task runs.
    const states = new Set<string>();
    for (let i = 0; i < 400 && finals.length === 0; i++) {
      if ((await results.get(rollout.id, 101))?.state !== 'admitted')
        states.add(await q.getJobState(jobIdOf(rollout.id, 101)));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(states).toContain('delayed');
    expect(finals.map((f) => f.state)).toEqual(['succeeded']);
    const r = await results.get(rollout.id, 101);
    expect(r).toMatchObject({ state: 'succeeded', taskId: '77', statusReads: reads.length });
    // Reads came on the poll schedule (first at poll.initial), not in a busy loop.
    expect(reads.length).toBeGreaterThanOrEqual(1);
    expect(reads.length).toBeLessThanOrEqual(12);
    expect(reads[0]).toBeGreaterThanOrEqual(60_000);
    expect(await slots.count(rollout.id)).toBe(0);
    // The job went away when it ended (removeOnComplete), and nothing failed.
    expect(await q.getJobCounts('failed', 'delayed', 'waiting', 'active')).toEqual({
      failed: 0,
      delayed: 0,
      waiting: 0,
      active: 0,
    });
  });
});
