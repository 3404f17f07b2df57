/**
 * The job contract between the scheduler (which enqueues) and the workers (which run jobs): the
 * BullMQ queue "upgrades", its job data and job ids. Neither side owns it; both import it.
 *
 * One job per admission of a Collector: the id is `<rollout>#<collector>#<admission>` (the
 * Collector as `<org>/<id>` when it is not of the default organization), so that
 * enqueueing an admission twice is harmless, and a job of an earlier admission that is still
 * around (BullMQ removes completed jobs a moment later) never stands in for the new one. Job data
 * holds ids only, never a secret.
 */
import { type ConnectionOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import pLimit from 'p-limit';

export const QUEUE_NAME = 'upgrades';

export interface UpgradeJobData {
  rolloutId: string;
  collectorId: number;
  /** The Collector's organization; absent: the default one (a deployment without `orgs`). */
  org?: string;
  /** The admission this job drives (the record's `admissions`); a job of another one does nothing. */
  admission: number;
}

export function jobIdOf(job: UpgradeJobData): string {
  // BullMQ forbids ':' in custom ids; rollout ids are `<policy>@<build>`.
  const collector = job.org ? `${job.org}/${job.collectorId}` : String(job.collectorId);
  return `${job.rolloutId}#${collector}#${job.admission}`;
}

/** The job of a Collector's current admission (`org` kept only when it is not the default one). */
export function jobFor(
  rolloutId: string,
  r: { id: number; org?: string | undefined; admissions: number },
): UpgradeJobData {
  return {
    rolloutId,
    collectorId: r.id,
    admission: r.admissions,
    ...(r.org && r.org !== 'default' ? { org: r.org } : {}),
  };
}

export type UpgradeQueue = Queue<UpgradeJobData>;

export function createUpgradeQueue(connection: ConnectionOptions, prefix: string): UpgradeQueue {
  return new Queue<UpgradeJobData>(QUEUE_NAME, {
    connection,
    prefix,
    defaultJobOptions: {
      removeOnComplete: true,
      removeOnFail: { count: 10_000 },
      // Unexpected failures (Redis gone mid-step, a bug) are retried; expected ones are values.
      attempts: 50,
      backoff: { type: 'exponential', delay: 1000 },
    },
  });
}

/** BullMQ's largest job priority. */
const MAX_PRIORITY = 2_097_152;

/** Per queue, how many jobs each organization was given so far (this process's admissions). */
const given = new WeakMap<object, Map<string, number>>();

/**
 * Adds the jobs of one admission. Each organization's creates wait for its own API budget, and
 * the workers take jobs in queue order: in the order admitted (one organization's 500, then the
 * next one's), the workers would all wait on the first organization's budget while the others'
 * stood idle behind it. So each organization's n-th job (counted over this process's admissions)
 * gets priority n: the queue hands jobs out taking turns between organizations, each in its
 * admitted order (FIFO among equal priorities); with one organization it is plain FIFO. Jobs
 * that already exist stay as they are.
 */
export async function enqueueUpgrades(queue: UpgradeQueue, jobs: readonly UpgradeJobData[]): Promise<void> {
  if (jobs.length === 0) return;
  const counts = given.get(queue) ?? new Map<string, number>();
  given.set(queue, counts);
  await queue.addBulk(
    jobs.map((data) => {
      const org = data.org ?? 'default';
      const n = (counts.get(org) ?? 0) + 1;
      counts.set(org, n);
      return { name: 'upgrade', data, opts: { jobId: jobIdOf(data), priority: Math.min(n, MAX_PRIORITY) } };
    }),
  );
}

/** Lookups at once for the few jobs that need repairing (missing or failed ones). */
const LOOKUPS_AT_ONCE = 16;

/**
 * Makes sure each of `jobs` is live: missing ones are added, failed ones retried. Whether each
 * exists and whether it failed is read in one pipelined round trip on `redis` (BullMQ's keys
 * share the deployment's hash tag); only the few that need repair are looked at further.
 * `stillNeeded` is asked again for a job that is gone, since a job also goes away when it ends
 * the Collector's upgrade between our read of the record and of the queue. Returns how many
 * were repaired.
 */
export async function ensureJobs(
  queue: UpgradeQueue,
  redis: Redis,
  jobs: readonly UpgradeJobData[],
  stillNeeded: (job: UpgradeJobData) => Promise<boolean>,
): Promise<number> {
  if (jobs.length === 0) return 0;
  const pipe = redis.pipeline();
  for (const job of jobs) {
    pipe.exists(queue.toKey(jobIdOf(job)));
    pipe.zscore(queue.toKey('failed'), jobIdOf(job));
  }
  const replies = (await pipe.exec()) ?? [];
  const value = (i: number) => {
    const [err, v] = replies[i] ?? [new Error('no reply')];
    if (err) throw err;
    return v;
  };
  const limit = pLimit(LOOKUPS_AT_ONCE);
  const missing: UpgradeJobData[] = [];
  let retried = 0;
  await Promise.all(
    jobs.map((data, i) =>
      limit(async () => {
        if (value(2 * i) === 0) {
          if (await stillNeeded(data)) missing.push(data);
        } else if (value(2 * i + 1) !== null) {
          const job = await queue.getJob(jobIdOf(data));
          if (job && (await job.isFailed())) {
            await job.retry('failed');
            retried++;
          }
        }
      }),
    ),
  );
  await enqueueUpgrades(queue, missing);
  return retried + missing.length;
}

/**
 * Runs the jobs' next steps now rather than after their delay (the scheduler saw through the
 * listings that their tasks ended). A job that is not waiting on a delay is left as it is.
 * Returns how many were woken.
 */
export async function wakeUpgrades(queue: UpgradeQueue, jobs: readonly UpgradeJobData[]): Promise<number> {
  const limit = pLimit(LOOKUPS_AT_ONCE);
  const woken = await Promise.all(
    jobs.map((data) =>
      limit(async () => {
        const job = await queue.getJob(jobIdOf(data));
        if (!job) return false;
        try {
          await job.promote();
          return true;
        } catch {
          return false; // not delayed (running, or already done): nothing to wake
        }
      }),
    ),
  );
  return woken.filter(Boolean).length;
}
