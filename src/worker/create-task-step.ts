/**
 * The create step: `admitted` (or a `creating` found within the ambiguity window) → `creating`,
 * written with the time it is sent, then the service's answer decides: `pending` with the task id,
 * `waiting_alive` (slot given back until the backoff ends) or `not_alive` after the last attempt,
 * `rejected`, or `reconciling` when a task may exist whose id we do not know. An error answer or a
 * request that never arrived puts the record back to `admitted` to try again after a backoff.
 */
import { hostname } from 'node:os';
import { ApiError } from '../api/index.js';
import type { CollectorResult, CollectorState } from '../rollout/result-store.js';
import { done, type ProcessorDeps, type Step, type StepContext, transientReason } from './step-context.js';

const PROCESS_NAME = `${hostname()}:${process.pid}`;

export async function createTaskStep(
  ctx: StepContext,
  from: CollectorState,
  current: CollectorResult,
  retryAmbiguous = true,
): Promise<Step> {
  const { deps, rollout, settings, log, now, save, finish, backoff, nextPoll } = ctx;
  const { rollouts, slots, clock } = deps;
  const sending: CollectorResult = {
    ...current,
    state: 'creating',
    createSentAt: now,
    attempts: current.attempts + 1,
  };
  if (!(await save(sending, from))) return done;
  let result: Awaited<ReturnType<ProcessorDeps['api']['createTask']>>;
  try {
    await rollouts.countRequest(rollout.id, 'createRequests');
    result = await deps.api.createTask({ collectorId: current.id, toVersion: current.to });
  } catch (err) {
    // The service answered an error, or never took the request: nothing was created.
    if (!(err instanceof ApiError)) throw err;
    await save({ ...current, state: 'admitted' }, 'creating');
    const transient = ['rate_limited', 'server', 'network', 'timeout'].includes(err.kind);
    if (transient) deps.events?.onRetry?.(transientReason(err));
    else log.error({ kind: err.kind, status: err.status, err: err.message }, 'create failed; will try again');
    return { kind: 'delay', ms: backoff(current.attempts) };
  }
  switch (result.kind) {
    case 'created': {
      const pending: CollectorResult = {
        ...sending,
        state: 'pending',
        taskId: result.taskId,
        // After the call: a create may have waited for the API budget first.
        requestTime: clock.now(),
        message: '',
        createdBy: PROCESS_NAME,
      };
      // If a step that found 'creating' too old moved it to 'reconciling' meanwhile, the id settles it.
      if (!(await save(pending, 'creating'))) await save(pending, 'reconciling');
      deps.events?.onTaskCreated?.(rollout.id);
      log.info({ taskId: result.taskId, from: current.from, to: current.to }, 'task created');
      return { kind: 'delay', ms: nextPoll(0) };
    }
    case 'collector.not.alive': {
      if (sending.attempts >= settings.notAliveAttempts) {
        return finish(
          { ...sending, state: 'not_alive', message: result.message, finishedAt: now },
          'creating',
        );
      }
      const nextAttemptAt = now + settings.notAliveBackoffMs;
      if (
        !(await save(
          { ...sending, state: 'waiting_alive', nextAttemptAt, message: result.message },
          'creating',
        ))
      )
        return done;
      await slots.release(rollout.id, current.id);
      deps.events?.onSlotFreed?.(rollout.id);
      deps.events?.onRetry?.('collector_not_alive');
      return { kind: 'delay', ms: settings.notAliveBackoffMs };
    }
    case 'collector.in.upgrading':
    case 'ambiguous':
      // A task may exist whose id we do not know; the scheduler resolves it from the listings.
      // Retried at once, the service tells: 202 (the first never took) or collector.in.upgrading.
      if (result.kind === 'ambiguous' && retryAmbiguous)
        return createTaskStep(ctx, 'creating', current, false);
      await save(
        { ...sending, state: 'reconciling', reconcilingSince: now, message: result.message },
        'creating',
      );
      log.warn({ kind: result.kind }, 'task of unknown id; reconciling');
      return done;
    case 'collector.invalid':
    case 'collector.type.invalid':
    case 'collector.version.invalid':
      return finish(
        { ...sending, state: 'rejected', message: `${result.kind}: ${result.message}`, finishedAt: now },
        'creating',
      );
  }
}
