/**
 * One step of a Collector's upgrade, run by a BullMQ job (the job contract is in
 * src/queue/upgrade-job.ts; the Collector's states and moves in src/rollout/collector/collector-state.ts).
 * A job drives the states whose owner is the worker: `admitted` (send the create), `creating`
 * (an unanswered create found after a restart) and `pending`/`progressing` (read the status).
 * When the Collector needs attention later the job is re-delayed instead of sleeping in a worker
 * slot, so that a few workers follow thousands of running upgrades. Any other state is someone
 * else's (the admitter's, the scheduler's listings) or final: the job ends.
 *
 * Crash safety: `creating` is written, with the time it is sent, right before each create goes
 * out (once the API budget lets it), and the task id right after, so a process killed at any
 * instant leaves a record that says what may have happened. A `creating` record found soon after
 * its create was sent is sent again (the service judges: `collector.in.upgrading` means the
 * first one took); found later, it goes to `reconciling` and the scheduler resolves it from the
 * listings, never by sending it again: no Collector gets a second task.
 */
import type { UpgradeJobData } from '../queue/upgrade-job.js';
import { admits, collectorKey, ownerOf } from '../rollout/index.js';
import { createTaskStep } from './create-task-step.js';
import { readTaskStatus } from './read-task-status.js';
import { createStepContext, done, type ProcessorDeps, type Step } from './step-context.js';

export { SERVICE_TIMEOUT_MS } from './read-task-status.js';
export type { ProcessorDeps, Step, UpgradeEvents } from './step-context.js';

/** A create found unanswered for less than this (clock ms) is sent again; older ones are reconciled. */
export const AMBIGUITY_WINDOW_MS = 5_000;

export async function processUpgrade(data: UpgradeJobData, deps: ProcessorDeps): Promise<Step> {
  const view = await deps.rollouts.loadStep(data.rolloutId, collectorKey(data.org, data.collectorId));
  const { record, rollout } = view;
  // A job of an earlier admission (BullMQ had not removed it yet) never stands in for the new one.
  if (!record || !rollout || ownerOf(record.state) !== 'worker') return done;
  if (data.admission !== undefined && data.admission !== record.admissions) return done;
  const ctx = createStepContext(deps, { record, rollout });

  switch (record.state) {
    case 'admitted':
      // The rollout stopped admitting after this Collector was admitted: no create is sent.
      if (rollout.phase === 'aborted') {
        await ctx.apply({ type: 'abort', message: 'the rollout was aborted before its task was created' });
        return done;
      }
      if (rollout.phase === 'superseded') {
        await ctx.apply({
          type: 'supersede',
          message: 'superseded by a newer rollout before its task was created',
        });
        return done;
      }
      if (!admits(rollout.phase)) {
        await ctx.apply({
          type: 'withdraw',
          message: `the rollout is ${rollout.phase}: the create was not sent`,
        });
        return done;
      }
      return createTaskStep(ctx, false);
    case 'creating': {
      const since = ctx.now - (record.createSentAt ?? 0);
      if (since < AMBIGUITY_WINDOW_MS) return createTaskStep(ctx, true);
      await ctx.apply({
        type: 'task_unknown',
        proven: false,
        message: 'a create of unknown outcome was found after a restart',
      });
      ctx.log.warn({ sinceMs: since }, 'create of unknown outcome found after a restart; reconciling');
      return done;
    }
    case 'pending':
    case 'progressing':
      return readTaskStatus(ctx);
    default:
      return done;
  }
}
