/**
 * The job contract (src/queue/upgrade-job.ts) and the worker on a real Redis: one job per
 * admission of a Collector with a stable id, so enqueueing an admission twice is harmless and a
 * new admission gets a job of its own; ensureJobs repairs missing and failed jobs; and the worker
 * runs a Collector's steps against the real simulator over HTTP, re-delaying the job between
 * them instead of holding a worker slot (on a scaled clock shared with the simulator, so that a
 * 60 s poll takes 60 ms).
 */
import { type Job, type Queue, UnrecoverableError, Worker } from 'bullmq';
import { afterEach, describe, expect, it } from 'vitest';
import { createScaledClock } from '../../../src/lib/clock.js';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import { Policy } from '../../../src/policy/schema.js';
import {
  createUpgradeQueue,
  enqueueUpgrades,
  ensureJobs,
  jobIdOf,
  QUEUE_NAME,
  type UpgradeJobData,
} from '../../../src/queue/upgrade-job.js';
import {
  type CollectorRecord,
  CollectorStore,
  newRecord,
  transition,
} from '../../../src/rollout/collector/index.js';
import { createKeys } from '../../../src/rollout/index.js';
import { RolloutStore } from '../../../src/rollout/life/index.js';
import { settingsOf } from '../../../src/rollout/tick/index.js';
import { startUpgradeWorker } from '../../../src/worker/start-upgrade-worker.js';
import type { ProcessorDeps } from '../../../src/worker/upgrade-processor.js';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';
import { C, LATEST, startTestSimulator, stopTestSimulators, testFleet } from '../../support/simulator.js';

const ctx = useTestRedis();
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await closeTestClients();
  await stopTestSimulators();
});

const ROLLOUT = 'linux-fleet@19.470-4';

const job = (collectorId: number, admission = 1, rolloutId = ROLLOUT): UpgradeJobData => ({
  rolloutId,
  collectorId,
  admission,
});

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

/** Ids of every job in the queue, whatever its state, sorted. */
async function jobIds(q: Queue<UpgradeJobData>): Promise<string[]> {
  const jobs: Job<UpgradeJobData>[] = await q.getJobs([
    'waiting',
    'delayed',
    'active',
    'failed',
    'prioritized',
  ]);
  return jobs.map((j) => j.id as string).sort();
}

describe('jobIdOf', () => {
  it('is `<rollout>#<collector>#<admission>`, stable, and free of the ":" BullMQ forbids', () => {
    expect(jobIdOf(job(101, 2))).toBe('linux-fleet@19.470-4#101#2');
    expect(jobIdOf(job(101, 2))).toBe(jobIdOf({ collectorId: 101, admission: 2, rolloutId: ROLLOUT }));
    for (const rollout of [ROLLOUT, 'windows@19.450-12', 'a-b-c@1.0-1'])
      expect(jobIdOf(job(7, 3, rollout))).not.toContain(':');
  });

  it('is unique per rollout × Collector × admission', () => {
    const ids = new Set<string>();
    let n = 0;
    for (const rollout of [ROLLOUT, 'linux-fleet@19.450-12', 'windows@19.470-4'])
      for (const collector of [1, 11, 101, 111])
        for (const admission of [0, 1, 11, 101]) {
          ids.add(jobIdOf(job(collector, admission, rollout)));
          n++;
        }
    expect(ids.size).toBe(n);
  });
});

describe('upgrade queue', () => {
  it('is named "upgrades" and keeps its keys under the deployment prefix', async () => {
    const q = queue();
    expect(QUEUE_NAME).toBe('upgrades');
    expect(q.name).toBe(QUEUE_NAME);
    await enqueueUpgrades(q, [job(1)]);
    const keys = await ctx.redis.keys(`${ctx.prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith(`${ctx.prefix}{fleet-upgrade}:bull:upgrades:`))).toBe(true);
  });

  it('enqueues one job per admission; again adds none, a new admission adds one', async () => {
    const q = queue();
    await enqueueUpgrades(q, [job(1), job(2), job(3)]);
    await enqueueUpgrades(q, [job(2), job(3), job(4)]);
    await enqueueUpgrades(q, []);
    expect(await q.count()).toBe(4);
    const three = await q.getJob(jobIdOf(job(3)));
    // Ids only: the job carries no record, no secret.
    expect(three?.data).toEqual({ rolloutId: ROLLOUT, collectorId: 3, admission: 1 });
    expect(three?.name).toBe('upgrade');

    // Collector 3 admitted again (after a retry wait): a job of its own, the old one untouched.
    await enqueueUpgrades(q, [job(3, 2)]);
    expect(await q.count()).toBe(5);
    expect((await q.getJob(jobIdOf(job(3, 2))))?.data).toEqual({
      rolloutId: ROLLOUT,
      collectorId: 3,
      admission: 2,
    });
    expect(await q.getJob(jobIdOf(job(3, 1)))).toBeDefined();
    // The same Collector in another rollout is another job too.
    await enqueueUpgrades(q, [job(3, 1, 'linux-fleet@19.450-12')]);
    expect(await jobIds(q)).toEqual(
      [
        jobIdOf(job(1)),
        jobIdOf(job(2)),
        jobIdOf(job(3)),
        jobIdOf(job(3, 2)),
        jobIdOf(job(4)),
        jobIdOf(job(3, 1, 'linux-fleet@19.450-12')),
      ].sort(),
    );
  });

  it('ensureJobs adds missing jobs still needed, retries failed ones, skips those no longer needed', async () => {
    const q = queue();
    // Job 2 fails for good (say, a bug): taken by hand and failed without a retry.
    await enqueueUpgrades(q, [job(2)]);
    const taker = new Worker<UpgradeJobData>(QUEUE_NAME, null, {
      connection: bullConnection(),
      prefix: createKeys(ctx.prefix).bullPrefix,
      autorun: false,
    });
    closers.push(() => taker.close());
    const failing = await taker.getNextJob('test-token');
    expect(failing?.id).toBe(jobIdOf(job(2)));
    await failing?.moveToFailed(new UnrecoverableError('boom'), 'test-token', false);
    expect(await (await q.getJob(jobIdOf(job(2))))?.isFailed()).toBe(true);
    // Collector 1 has its job; Collector 5 has only a job of its previous admission.
    await enqueueUpgrades(q, [job(1), job(5, 1)]);

    const asked: string[] = [];
    const repaired = await ensureJobs(
      q,
      ctx.redis,
      [job(1), job(2), job(3), job(4), job(5, 2)],
      async (j) => {
        asked.push(jobIdOf(j));
        return j.collectorId !== 4; // 4 finished between the read of its record and of the queue
      },
    );
    expect(repaired).toBe(3); // 2 retried, 3 and 5 (admission 2) added
    expect(asked.sort()).toEqual([jobIdOf(job(3)), jobIdOf(job(4)), jobIdOf(job(5, 2))].sort());
    expect(await (await q.getJob(jobIdOf(job(2))))?.isFailed()).toBe(false);
    expect((await q.getJob(jobIdOf(job(3))))?.data).toEqual(job(3));
    expect(await q.getJob(jobIdOf(job(4)))).toBeUndefined();
    expect((await q.getJob(jobIdOf(job(5, 2))))?.data).toEqual(job(5, 2));
    expect(await jobIds(q)).toEqual(
      [jobIdOf(job(1)), jobIdOf(job(2)), jobIdOf(job(3)), jobIdOf(job(5, 1)), jobIdOf(job(5, 2))].sort(),
    );

    // Everything live now: nothing to repair, and nobody is asked.
    asked.length = 0;
    expect(await ensureJobs(q, ctx.redis, [job(1), job(2), job(3), job(5, 2)], async () => true)).toBe(0);
    expect(asked).toEqual([]);
    expect(await ensureJobs(q, ctx.redis, [], async () => true)).toBe(0);
  });
});

describe('startUpgradeWorker', () => {
  const BUILD = LATEST; // 19.470-4
  const SCALE = 1_000; // a 60 s poll takes 60 ms

  /** A real simulator on a scaled clock, a rollout, and web-1 admitted (slot taken) through the store. */
  async function setup() {
    const keys = createKeys(ctx.prefix);
    const outcomes: CollectorRecord[] = [];
    // Outcomes are told by the store as it writes them (the one writer).
    const store = new CollectorStore(ctx.redis, keys, undefined, {
      onOutcome: (_rollout, record) => outcomes.push(record),
    });
    const rollouts = new RolloutStore(ctx.redis, keys);
    const clock = createScaledClock(SCALE);
    const sim = await startTestSimulator(testFleet(), { clock });
    const { client } = createTestClient(sim.sim.baseUrl);
    const reads: number[] = [];
    let createdAt = 0;
    let creates = 0;
    // The real client, watched: when each create and status read was sent (clock time).
    const api: ProcessorDeps['api'] = {
      createTask: (input, signal, beforeSend) => {
        creates++;
        createdAt = clock.now();
        return client.createTask(input, signal, beforeSend);
      },
      getTask: (id, signal) => {
        reads.push(clock.now() - createdAt);
        return client.getTask(id, signal);
      },
    };
    // Only the worker runs here: the scheduler's verification of successes is not part of it.
    const settings = settingsOf(
      Policy.parse({ name: 'linux-fleet', maxInFlight: 5, poll: { jitter: 0 }, verify: false }),
    );
    const { rollout } = await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: BUILD,
      maxInFlight: 5,
      settings,
      now: clock.now(),
    });
    const found = newRecord(
      { id: C.web1, name: 'web-1', hostName: 'web-1.prod.internal', collectorVersion: '19.400-5' },
      BUILD,
      clock.now(),
    );
    expect(await store.discover(rollout.id, [found])).toEqual([C.web1]);
    const admit = transition(found, { type: 'admit' }, { now: clock.now(), settings });
    if (!admit.ok) throw new Error(admit.reason);
    expect(await store.apply(rollout.id, [admit.move], { limit: rollout.maxInFlight })).toEqual(['written']);
    const admitted = admit.move.next;
    expect(admitted).toMatchObject({ state: 'admitted', admissions: 1 });

    const created: string[] = [];
    const worker: Worker<UpgradeJobData> = startUpgradeWorker({
      connection: bullConnection(),
      prefix: keys.bullPrefix,
      timeScale: SCALE,
      concurrency: 1,
      deps: {
        api,
        store,
        rollouts,
        clock,
        logger: captureLogger('debug').logger,
        random: () => 0.5,
        events: {
          onTaskCreated: (id) => created.push(id),
        },
      },
    });
    closers.push(() => worker.close());
    return { sim, store, rollout, admitted, reads, creates: () => creates, outcomes, created, q: queue() };
  }

  it('runs a Collector to its outcome, re-delaying the job between status reads', async () => {
    const s = await setup();
    const data: UpgradeJobData = {
      rolloutId: s.rollout.id,
      collectorId: C.web1,
      admission: s.admitted.admissions,
    };
    await enqueueUpgrades(s.q, [data]);

    // Bounded wait (10 s real at most; it takes a few hundred ms). Between two steps the job is
    // delayed, not active: the worker slot is free while the task runs.
    const states = new Set<string>();
    const deadline = Date.now() + 10_000;
    while (s.outcomes.length === 0 && Date.now() < deadline) {
      if ((await s.store.get(s.rollout.id, C.web1))?.state !== 'admitted')
        states.add(await s.q.getJobState(jobIdOf(data)));
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(states).toContain('delayed');
    expect(s.outcomes.map((o) => o.state)).toEqual(['succeeded']);
    expect(s.created).toEqual([s.rollout.id]);
    const r = await s.store.get(s.rollout.id, C.web1);
    expect(r).toMatchObject({
      state: 'succeeded',
      attempts: 1,
      admissions: 1,
      statusReads: s.reads.length,
      statusErrors: 0,
      lastStatus: 2,
    });
    expect(r?.taskId).toMatch(/^\d+$/);
    // Reads came on the poll schedule (first at poll.initial), not in a busy loop.
    expect(s.reads.length).toBeGreaterThanOrEqual(1);
    expect(s.reads.length).toBeLessThanOrEqual(12);
    expect(s.reads[0]).toBeGreaterThanOrEqual(60_000);
    // One create, one task at the service, and the Collector is on the build.
    expect(s.creates()).toBe(1);
    const simWeb1 = await s.sim.simCollector(C.web1);
    expect(simWeb1.tasks).toHaveLength(1);
    expect(String(simWeb1.tasks[0]?.id)).toBe(r?.taskId);
    expect(simWeb1.version).toBe(BUILD);
    // The slot was given back, the counts follow the record.
    expect(await s.store.slotHolders('linux-fleet')).toEqual([]);
    expect(await s.store.counts(s.rollout.id)).toEqual({ succeeded: 1 });
    // The job went away when it ended (removeOnComplete), and nothing failed.
    expect(await s.q.getJobCounts('failed', 'delayed', 'waiting', 'active')).toEqual({
      failed: 0,
      delayed: 0,
      waiting: 0,
      active: 0,
    });
  });

  it('a job of another admission ends without touching the Collector', async () => {
    const s = await setup();
    // Left over from an earlier admission (BullMQ had not removed it yet), and one from the future.
    const stale: UpgradeJobData = { rolloutId: s.rollout.id, collectorId: C.web1, admission: 0 };
    const other: UpgradeJobData = { rolloutId: s.rollout.id, collectorId: C.web1, admission: 2 };
    await enqueueUpgrades(s.q, [stale, other]);
    const deadline = Date.now() + 10_000;
    while (
      Date.now() < deadline &&
      ((await s.q.getJob(jobIdOf(stale))) || (await s.q.getJob(jobIdOf(other))))
    )
      await new Promise((r) => setTimeout(r, 5));
    // Both ran (and were removed on completion), neither failed.
    expect(await s.q.getJob(jobIdOf(stale))).toBeUndefined();
    expect(await s.q.getJob(jobIdOf(other))).toBeUndefined();
    expect(await s.q.getJobCounts('failed')).toEqual({ failed: 0 });
    expect(s.creates()).toBe(0);
    expect(s.outcomes).toEqual([]);
    expect(await s.store.get(s.rollout.id, C.web1)).toEqual(s.admitted);
    expect((await s.sim.simCollector(C.web1)).tasks).toEqual([]);
    expect(await s.store.slotHolders('linux-fleet')).toEqual([
      { rolloutId: s.rollout.id, key: C.web1, org: 'default', collectorId: C.web1 },
    ]);
  });
});

describe('enqueueUpgrades across organizations', () => {
  it('hands the jobs out taking turns between organizations, each in its admitted order', async () => {
    const q = queue();
    const ofOrg = (org: string, ids: number[]) => ids.map((id) => ({ ...job(id), org }));
    // One admission of org a's five, then one of b's three (a scan admits organization by organization).
    await enqueueUpgrades(q, ofOrg('a', [1, 2, 3, 4, 5]));
    await enqueueUpgrades(q, ofOrg('b', [11, 12, 13]));
    const taken: string[] = [];
    const worker = new Worker<UpgradeJobData>(
      QUEUE_NAME,
      async (j) => {
        taken.push(`${j.data.org}${j.data.collectorId}`);
      },
      { connection: bullConnection(), prefix: createKeys(ctx.prefix).bullPrefix, concurrency: 1 },
    );
    closers.push(() => worker.close());
    const deadline = Date.now() + 10_000;
    while (taken.length < 8 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // In admitted order, b's jobs would wait behind all of a's (and behind a's API budget).
    expect(taken).toEqual(['a1', 'b11', 'a2', 'b12', 'a3', 'b13', 'a4', 'a5']);
  });
});
