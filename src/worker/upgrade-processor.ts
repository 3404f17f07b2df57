/**
 * One step of the per-Collector upgrade state machine (states in src/rollout/result-store.ts).
 * A BullMQ job runs a step and, when the Collector needs attention later, is re-delayed instead
 * of sleeping in a worker slot, so that a few workers follow thousands of running upgrades.
 *
 * Crash safety: the state is written before each request that changes the world (`creating`
 * before a create, with the time it was sent) and the task id right after, so a process killed
 * at any instant leaves a record that says what may have happened. A `creating` record found
 * soon after its create was sent is retried (the service judges: `collector.in.upgrading` means
 * the first one took); found later, it goes to `reconciling` and the scheduler resolves it from
 * the listings, so that no Collector gets a second task unless the service shows none is running.
 */
import { hostname } from 'node:os';
import { ApiError, type CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { InflightSlots } from '../rollout/inflight-slots.js';
import type { CollectorResult, CollectorState, ResultStore } from '../rollout/result-store.js';
import type { RolloutStore } from '../rollout/rollout-store.js';
import { nextPollDelay } from './poll-schedule.js';

export interface UpgradeJobData {
  rolloutId: string;
  collectorId: number;
}

/** What the job does next: finish, or run again after `ms` of clock time. */
export type Step = { kind: 'done' } | { kind: 'delay'; ms: number };

export interface UpgradeEvents {
  onTaskCreated?(rolloutId: string): void;
  onRetry?(reason: 'collector_not_alive' | 'rate_limited' | 'server_error' | 'network'): void;
  onFinal?(rolloutId: string, record: CollectorResult, durationMs: number | undefined): void;
  /** A Collector gave its in-flight slot back: another may be admitted now. */
  onSlotFreed?(rolloutId: string): void;
}

export interface ProcessorDeps {
  api: Pick<CollectorUpgradeClient, 'createTask' | 'getTask'>;
  results: ResultStore;
  rollouts: RolloutStore;
  slots: InflightSlots;
  clock: Clock;
  logger: Logger;
  events?: UpgradeEvents;
  random?: () => number;
}

const PROCESS_NAME = `${hostname()}:${process.pid}`;

/** The service fails a task not succeeded this long after its request (interface section 8). */
export const SERVICE_TIMEOUT_MS = 30 * 60_000;

/** A create found unanswered for less than this (clock ms) is retried; older ones are reconciled. */
export const AMBIGUITY_WINDOW_MS = 5_000;
const done: Step = { kind: 'done' };

function transientReason(err: ApiError): 'rate_limited' | 'server_error' | 'network' {
  if (err.kind === 'rate_limited') return 'rate_limited';
  if (err.kind === 'server') return 'server_error';
  return 'network';
}

export async function processUpgrade(data: UpgradeJobData, deps: ProcessorDeps): Promise<Step> {
  const { results, rollouts, slots, clock } = deps;
  const loaded = await rollouts.get(data.rolloutId);
  const stored = await results.get(data.rolloutId, data.collectorId);
  if (!loaded || !stored) return done;
  const rollout = loaded;
  const record = stored;
  const settings = rollout.settings;
  const log = deps.logger.child({ rollout: rollout.id, collector: record.id });
  const now = clock.now();
  const random = deps.random ?? Math.random;

  const save = async (next: CollectorResult, from: CollectorState) => {
    const ok = await results.put(rollout.id, next, from);
    if (!ok) log.debug({ from, to: next.state }, 'record changed under us; step skipped');
    return ok;
  };
  const finish = async (next: CollectorResult, from: CollectorState, durationMs?: number) => {
    if (!(await save(next, from))) return done;
    await slots.release(rollout.id, record.id);
    deps.events?.onSlotFreed?.(rollout.id);
    if (durationMs !== undefined && next.state === 'succeeded')
      await rollouts.recordDuration(rollout.id, durationMs);
    deps.events?.onFinal?.(rollout.id, next, durationMs);
    log.info(
      { state: next.state, taskId: next.taskId, message: next.message || undefined },
      'collector finished',
    );
    return done;
  };
  const backoff = (attempt: number) =>
    Math.min(settings.pollMaxMs, 1000 * 2 ** Math.min(attempt, 8)) * (0.5 + random() / 2);

  async function create(
    from: CollectorState,
    current: CollectorResult,
    retryAmbiguous = true,
  ): Promise<Step> {
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
      else
        log.error({ kind: err.kind, status: err.status, err: err.message }, 'create failed; will try again');
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
        if (result.kind === 'ambiguous' && retryAmbiguous) return create('creating', current, false);
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

  function nextPoll(elapsedMs: number): number {
    return nextPollDelay({
      elapsedMs,
      observedMs: observed,
      settings: { initialMs: settings.pollInitialMs, maxMs: settings.pollMaxMs, jitter: settings.pollJitter },
      deadlineMs: settings.taskTimeoutMs,
      random,
    });
  }
  let observed: number[] = [];
  if (
    record.state === 'pending' ||
    record.state === 'progressing' ||
    record.state === 'creating' ||
    record.state === 'admitted'
  ) {
    observed = await rollouts.durations(rollout.id);
  }

  switch (record.state) {
    case 'succeeded':
    case 'failed':
    case 'timed_out':
    case 'not_alive':
    case 'rejected':
    case 'skipped':
      // A process may have died between writing the outcome and giving the slot back.
      await slots.release(rollout.id, record.id);
      return done;
    case 'reconciling':
      return done;
    case 'queued':
    case 'waiting_alive': {
      if (
        record.state === 'waiting_alive' &&
        record.nextAttemptAt !== undefined &&
        now < record.nextAttemptAt
      ) {
        // As above: the slot may still be held if a process died right after the backoff began.
        await slots.release(rollout.id, record.id);
        return { kind: 'delay', ms: record.nextAttemptAt - now };
      }
      const got = await slots.acquire(rollout.id, [record.id], rollout.maxInFlight);
      if (got.length === 0)
        return { kind: 'delay', ms: Math.max(1000, settings.pollInitialMs / 2) * (0.5 + random()) };
      const admitted: CollectorResult = { ...record, state: 'admitted', admittedAt: now };
      if (!(await save(admitted, record.state))) {
        await slots.release(rollout.id, record.id);
        return done;
      }
      return create('admitted', admitted);
    }
    case 'admitted':
      return create('admitted', record);
    case 'creating': {
      const since = now - (record.createSentAt ?? 0);
      if (since < AMBIGUITY_WINDOW_MS)
        return create('creating', { ...record, attempts: record.attempts - 1 }, false);
      await save(
        { ...record, state: 'reconciling', reconcilingSince: record.createSentAt ?? now },
        'creating',
      );
      log.warn({ sinceMs: since }, 'create of unknown outcome found after a restart; reconciling');
      return done;
    }
    case 'pending':
    case 'progressing':
      return poll(record);
  }

  async function poll(current: CollectorResult): Promise<Step> {
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
}
