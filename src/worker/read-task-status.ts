/**
 * The status-read step of a Collector in `pending` or `progressing`: reads its task and turns the
 * answer into an event: `succeeded` (or `verify`, when the policy verifies successes), `failed`
 * (or `cause_retry` / `manual`, by the failure message's class: policy `failureCauses`), `timed_out` (the service's own 30-minute time-out
 * however late its answer is read, or our local deadline), `status` (unfinished: read again
 * later), or `status_error` (a task id the service does not know, an answer that cannot be used:
 * after a few in a row only the listings can tell, see collector-state.ts). Transient errors
 * (5xx, 429, network) only delay the next read, until well past the deadline.
 * Durations are measured on the deployment's shared clock, from the time the create was answered.
 */
import { ApiError, SERVICE_TASK_TIMEOUT_MS, type TaskStatusResult } from '../api/index.js';
import type { CollectorEvent } from '../rollout/index.js';
import { actionFor, classifyFailure } from './classify-failure.js';
import { pollDelay } from './create-task-step.js';
import { apiOf, done, retryReasonOf, type Step, type StepContext, TRANSIENT_KINDS } from './step-context.js';

/** The service fails a task not succeeded this long after its request (interface section 8). */
export const SERVICE_TIMEOUT_MS = SERVICE_TASK_TIMEOUT_MS;

/** Whether a failed task is the service's own time-out: its message says so, and it is that old. */
export function isServiceTimeout(message: string, sinceSentMs: number): boolean {
  // Measured from when the create was sent (never later than the task's true request), so a
  // time-out read late or early is still told apart from a quick failure that mentions a time-out.
  return sinceSentMs >= SERVICE_TIMEOUT_MS * 0.98 && /time(d)?[ -]?out/i.test(message);
}

export async function readTaskStatus(ctx: StepContext): Promise<Step> {
  const { deps, settings, record, log } = ctx;
  const requestTime = record.requestTime ?? ctx.now;
  if (!record.taskId) {
    await ctx.apply({ type: 'status_error', notFound: true, message: 'no task id recorded' });
    return { kind: 'delay', ms: pollDelay(ctx, ctx.now - requestTime) };
  }
  const counters = { statusReads: 1 };
  let answer: TaskStatusResult;
  try {
    answer = await apiOf(deps, record).getTask(record.taskId);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const elapsed = deps.clock.now() - requestTime;
    if (elapsed > settings.taskTimeoutMs + settings.pollMaxMs * 4) {
      // No status past the deadline: the listings tell whether the build was reached (reconciling).
      await ctx.apply(
        {
          type: 'status_error',
          notFound: false,
          exhausted: true,
          message: `no status could be read past the task's deadline: ${err.message}`,
        },
        { counters },
      );
      return done;
    }
    if (TRANSIENT_KINDS.includes(err.kind)) {
      deps.events?.onRetry?.(retryReasonOf(err));
      await ctx.count(counters);
    } else {
      log.error({ kind: err.kind, err: err.message }, 'status read answered with an error');
      await ctx.apply({ type: 'status_error', notFound: false, message: err.message }, { counters });
    }
    return next(ctx, elapsed);
  }
  // The read may have waited for the API budget: judge the task by when its status was seen.
  const seen = deps.clock.now() - requestTime;
  if (answer.kind === 'not_found') {
    await ctx.apply(
      { type: 'status_error', notFound: true, message: `task ${record.taskId} not found: ${answer.message}` },
      { counters },
    );
    return next(ctx, seen);
  }
  const task = answer.task;
  if (task.state === 'succeeded') {
    // With verification on, the listings must now show it alive on the build (verify-collectors.ts).
    const verify = settings.verify;
    const event = verify
      ? ({ type: 'verify', status: task.status, dueAt: deps.clock.now() + verify.intervalMs } as const)
      : ({ type: 'succeeded', status: task.status } as const);
    await ctx.apply(event, {
      counters,
      durationMs: trueDuration(record.lastUnfinishedAt, requestTime, seen),
    });
    return done;
  }
  if (task.state === 'failed') {
    const sinceSent = deps.clock.now() - (record.createSentAt ?? requestTime);
    const event = isServiceTimeout(task.message, sinceSent)
      ? ({ type: 'timed_out', message: task.message, status: task.status } as const)
      : failureEvent(ctx, task.message, task.status);
    await ctx.apply(event, { counters, durationMs: seen });
    return done;
  }
  if (seen >= settings.taskTimeoutMs) {
    const minutes = Math.round(settings.taskTimeoutMs / 60_000);
    const message = `no final status ${minutes} minutes after the request (last status ${task.status})`;
    await ctx.apply({ type: 'timed_out', message, status: task.status }, { counters });
    return done;
  }
  if (!(await ctx.apply({ type: 'status', status: task.status }, { counters }))) return done;
  return { kind: 'delay', ms: pollDelay(ctx, seen) };
}

/** After a read that changed nothing final: read again later while a job still drives it. */
function next(ctx: StepContext, elapsedMs: number): Step {
  const s = ctx.record.state;
  return s === 'pending' || s === 'progressing' ? { kind: 'delay', ms: pollDelay(ctx, elapsedMs) } : done;
}

/**
 * A failed task, by its message's class (policy `failureCauses`): a new attempt after a back-off
 * while the class's `retry` allows, the worklist (`manual`), or `failed`.
 */
export function failureEvent(ctx: StepContext, message: string, status: number): CollectorEvent {
  const causes = ctx.settings.causes;
  const failureClass = classifyFailure(message, causes?.patterns);
  const action = causes ? actionFor(failureClass, causes) : undefined;
  if (action?.action === 'retry' && (ctx.record.causeRetries ?? 0) < action.attempts)
    return { type: 'cause_retry', message, failureClass, backoffMs: action.backoff, status };
  if (action?.action === 'manual') return { type: 'manual', message, failureClass, status };
  return { type: 'failed', message, status, failureClass };
}

/**
 * What a finished task's duration is learned as: it ended between the last read that found it
 * unfinished and this one (`seenMs` after the request), so the middle of that span. Learning the
 * noticed end instead would teach the poll schedule durations too long by the polling's own delay.
 */
export function trueDuration(
  lastUnfinishedAt: number | undefined,
  requestTime: number,
  seenMs: number,
): number {
  if (lastUnfinishedAt === undefined || lastUnfinishedAt < requestTime) return Math.round(seenMs / 2);
  return Math.round((lastUnfinishedAt - requestTime + seenMs) / 2);
}
