/**
 * A BullMQ worker that runs upgrade steps (upgrade-processor.ts). A step that needs the Collector
 * later moves its job to the delayed set and frees the worker slot (BullMQ's DelayedError), so
 * `concurrency` bounds requests under way, not upgrades followed.
 */
import { type ConnectionOptions, DelayedError, type Job, Worker } from 'bullmq';
import { QUEUE_NAME, type UpgradeJobData } from '../queue/upgrade-job.js';
import { type ProcessorDeps, processUpgrade } from './upgrade-processor.js';

export interface UpgradeWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  deps: ProcessorDeps;
  /** Steps run at once in this process (default 20). */
  concurrency?: number;
  /** Clock ms per real ms: delays of the state machine are in clock time (default 1). */
  timeScale?: number;
  /** Real ms after which a job whose process died is taken up again (default 30 000). */
  stalledIntervalMs?: number;
}

export function startUpgradeWorker(options: UpgradeWorkerOptions): Worker<UpgradeJobData> {
  const scale = options.timeScale ?? 1;
  const stalled = options.stalledIntervalMs ?? 30_000;
  const worker = new Worker<UpgradeJobData>(
    QUEUE_NAME,
    async (job: Job<UpgradeJobData>, token?: string) => {
      const step = await processUpgrade(job.data, options.deps);
      if (step.kind === 'delay') {
        await job.moveToDelayed(Date.now() + Math.max(1, Math.round(step.ms / scale)), token);
        throw new DelayedError();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 20,
      stalledInterval: stalled,
      lockDuration: stalled,
      // A job is never given up for stalling: its record says where it was.
      maxStalledCount: 1_000_000,
      autorun: true,
    },
  );
  worker.on('error', (err) => options.deps.logger.error({ err: err.message }, 'worker error'));
  worker.on('failed', (job, err) =>
    options.deps.logger.error(
      { jobId: job?.id, attempts: job?.attemptsMade, err: err.message },
      'upgrade step failed',
    ),
  );
  return worker;
}
