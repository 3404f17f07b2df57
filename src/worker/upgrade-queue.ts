/**
 * The BullMQ queue "upgrades": one job per rollout × Collector, with a stable job id, so that
 * enqueueing a Collector twice is harmless. Job data holds ids only, never a secret.
 */
import { type ConnectionOptions, Queue } from 'bullmq';
import type { UpgradeJobData } from './upgrade-processor.js';

export const QUEUE_NAME = 'upgrades';

export function jobIdOf(rolloutId: string, collectorId: number): string {
  // BullMQ forbids ':' in custom ids; rollout ids are `<policy>@<build>`.
  return `${rolloutId}#${collectorId}`;
}

export function createUpgradeQueue(connection: ConnectionOptions, prefix: string): Queue<UpgradeJobData> {
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

/** Enqueues the Collectors' jobs; ones that already exist stay as they are. */
export async function enqueueUpgrades(
  queue: Queue<UpgradeJobData>,
  rolloutId: string,
  collectorIds: readonly number[],
): Promise<void> {
  if (collectorIds.length === 0) return;
  await queue.addBulk(
    collectorIds.map((collectorId) => ({
      name: 'upgrade',
      data: { rolloutId, collectorId },
      opts: { jobId: jobIdOf(rolloutId, collectorId) },
    })),
  );
}

/**
 * Makes sure each Collector has a live job: missing ones are added, failed ones retried.
 * `stillNeeded` is asked again for a Collector whose job is gone, since a job also goes away
 * when it ends the Collector's upgrade between our read of the record and of the queue.
 * Returns how many were repaired.
 */
export async function ensureJobs(
  queue: Queue<UpgradeJobData>,
  rolloutId: string,
  collectorIds: readonly number[],
  stillNeeded: (collectorId: number) => Promise<boolean>,
): Promise<number> {
  let repaired = 0;
  const missing: number[] = [];
  for (const id of collectorIds) {
    const job = await queue.getJob(jobIdOf(rolloutId, id));
    if (!job) {
      if (await stillNeeded(id)) missing.push(id);
    } else if (await job.isFailed()) {
      await job.retry('failed');
      repaired++;
    }
  }
  await enqueueUpgrades(queue, rolloutId, missing);
  return repaired + missing.length;
}
