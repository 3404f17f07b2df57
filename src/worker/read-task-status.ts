/**
 * The status-read step of a Collector in `pending` or `progressing`: reads its task and moves it
 * to `succeeded`, `failed` or `timed_out` (the service's own time-out, our local deadline, or no
 * status readable for long past it), or stays in `pending`/`progressing` until the next read.
 * Durations are measured on our clock, from the time the create was answered.
 */
import { ApiError } from '../api/index.js';
import type { CollectorResult, CollectorState } from '../rollout/result-store.js';
import { done, type ProcessorDeps, type Step, type StepContext, transientReason } from './step-context.js';

/** The service fails a task not succeeded this long after its request (interface section 8). */
export const SERVICE_TIMEOUT_MS = 30 * 60_000;

export async function readTaskStatus(ctx: StepContext, current: CollectorResult): Promise<Step> {
  const { deps, rollout, settings, log, now, save, finish, nextPoll } = ctx;
  const { rollouts, clock } = deps;
  const requestTime = current.requestTime ?? now;
  const elapsed = now - requestTime;
  if (!current.taskId) return done;
  let answer: Awaited<ReturnType<ProcessorDeps['api']['getTask']>>;
  try {
    await rollouts.countRequest(rollout.id, 'statusReads');
    answer = await deps.api.getTask(current.taskId);
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (['rate_limited', 'server', 'network', 'timeout'].includes(err.kind))
      deps.events?.onRetry?.(transientReason(err));
    else log.error({ kind: err.kind, err: err.message }, 'status read failed; will try again');
    if (elapsed > settings.taskTimeoutMs + settings.pollMaxMs * 4) {
      return finish(
        {
          ...current,
          state: 'timed_out',
          message: `no status could be read: ${err.message}`,
          finishedAt: now,
        },
        current.state,
      );
    }
    return { kind: 'delay', ms: nextPoll(elapsed) };
  }
  const reads = current.statusReads + 1;
  // The read may have waited for the API budget: judge the task by when its status was seen.
  const seenAt = clock.now();
  const seen = seenAt - requestTime;
  if (answer.kind === 'not_found') {
    return finish(
      {
        ...current,
        statusReads: reads,
        state: 'failed',
        message: `task ${current.taskId} not found: ${answer.message}`,
        finishedAt: seenAt,
      },
      current.state,
    );
  }
  const task = answer.task;
  // Durations are measured on our clock: the service's requestTime is on its own.
  const base: CollectorResult = { ...current, statusReads: reads, lastStatus: task.status, requestTime };
  if (task.state === 'succeeded')
    return finish({ ...base, state: 'succeeded', message: '', finishedAt: seenAt }, current.state, seen);
  if (task.state === 'failed') {
    // The service's own time-out, not any failure whose message says "timed out" (a download, say).
    const timedOut = seen >= SERVICE_TIMEOUT_MS * 0.9 && /time(d)?[ -]?out/i.test(task.message);
    return finish(
      { ...base, state: timedOut ? 'timed_out' : 'failed', message: task.message, finishedAt: seenAt },
      current.state,
      seen,
    );
  }
  if (seen >= settings.taskTimeoutMs) {
    const message = `no final status ${Math.round(settings.taskTimeoutMs / 60_000)} minutes after the request (last status ${task.status})`;
    return finish({ ...base, state: 'timed_out', message, finishedAt: seenAt }, current.state);
  }
  const state: CollectorState = task.state === 'progressing' ? 'progressing' : 'pending';
  if (!(await save({ ...base, state }, current.state))) return done;
  return { kind: 'delay', ms: nextPoll(seen) };
}
