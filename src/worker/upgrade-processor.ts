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
 *
 * This module loads the records and dispatches on the state; the create is in create-task-step.ts,
 * the status read in read-task-status.ts, and what they share in step-context.ts.
 */
import type { CollectorResult, CollectorState } from '../rollout/result-store.js';
import { createTaskStep } from './create-task-step.js';
import { nextPollDelay } from './poll-schedule.js';
import { readTaskStatus } from './read-task-status.js';
import { done, type ProcessorDeps, type Step, type StepContext } from './step-context.js';

export { SERVICE_TIMEOUT_MS } from './read-task-status.js';
export type { ProcessorDeps, Step, UpgradeEvents } from './step-context.js';

export interface UpgradeJobData {
  rolloutId: string;
  collectorId: number;
}

/** A create found unanswered for less than this (clock ms) is retried; older ones are reconciled. */
export const AMBIGUITY_WINDOW_MS = 5_000;

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
  const ctx: StepContext = { deps, rollout, settings, log, now, save, finish, backoff, nextPoll };

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
      return createTaskStep(ctx, 'admitted', admitted);
    }
    case 'admitted':
      return createTaskStep(ctx, 'admitted', record);
    case 'creating': {
      const since = now - (record.createSentAt ?? 0);
      if (since < AMBIGUITY_WINDOW_MS)
        return createTaskStep(ctx, 'creating', { ...record, attempts: record.attempts - 1 }, false);
      await save(
        { ...record, state: 'reconciling', reconcilingSince: record.createSentAt ?? now },
        'creating',
      );
      log.warn({ sinceMs: since }, 'create of unknown outcome found after a restart; reconciling');
      return done;
    }
    case 'pending':
    case 'progressing':
      return readTaskStatus(ctx, record);
  }
}
