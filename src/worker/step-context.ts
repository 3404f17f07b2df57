/**
 * What one step of a Collector's upgrade works with, shared by processUpgrade (upgrade-processor.ts)
 * and the steps it hands over to: the create (create-task-step.ts) and the status read
 * (read-task-status.ts). The context is built once per step from the loaded rollout and record.
 */
import type { ApiError, CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { InflightSlots } from '../rollout/inflight-slots.js';
import type { CollectorResult, CollectorState, ResultStore } from '../rollout/result-store.js';
import type { RolloutRecord, RolloutSettings, RolloutStore } from '../rollout/rollout-store.js';

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

export interface StepContext {
  deps: ProcessorDeps;
  rollout: RolloutRecord;
  settings: RolloutSettings;
  /** Child logger of the rollout and Collector. */
  log: Logger;
  /** Clock time when the step began. */
  now: number;
  /** Compare-and-set of the record from state `from`; false (and logged) when it moved on. */
  save(next: CollectorResult, from: CollectorState): Promise<boolean>;
  /** Writes an outcome, gives the slot back and reports it. */
  finish(next: CollectorResult, from: CollectorState, durationMs?: number): Promise<Step>;
  /** Clock ms before trying a create again after `attempt` attempts. */
  backoff(attempt: number): number;
  /** Clock ms before the next status read, `elapsedMs` after the request. */
  nextPoll(elapsedMs: number): number;
}

export const done: Step = { kind: 'done' };

export function transientReason(err: ApiError): 'rate_limited' | 'server_error' | 'network' {
  if (err.kind === 'rate_limited') return 'rate_limited';
  if (err.kind === 'server') return 'server_error';
  return 'network';
}
