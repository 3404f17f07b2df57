/**
 * What one step of a Collector's upgrade works with, shared by processUpgrade (upgrade-processor.ts)
 * and the steps it hands over to: the create (create-task-step.ts) and the status read
 * (read-task-status.ts). A step reads Redis once (the record and its rollout's settings) and
 * writes each move of the Collector through `apply`: one atomic write through the state machine
 * of src/rollout/collector/collector-state.ts, which also tells the metrics what happened.
 */
import type { ApiError, CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { ReplicaWait } from '../lib/redis/replica-wait.js';
import type { ApplyOptions, CollectorStore, RolloutSettings, StepView } from '../rollout/index.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  isSettled,
  type OrgHealth,
  orgOf,
  type RolloutStore,
  transition,
} from '../rollout/index.js';

/** What the job does next: finish, or run again after `ms` of clock time. */
export type Step = { kind: 'done' } | { kind: 'delay'; ms: number };

export type RetryReason = 'collector_not_alive' | 'rate_limited' | 'server_error' | 'network' | 'error';

export interface UpgradeEvents {
  /** A task was created for a Collector of organization `org` (`default` without `orgs`). */
  onTaskCreated?(rolloutId: string, org: string): void;
  onRetry?(reason: RetryReason): void;
  /** A task ended (`succeeded` also when its Collector goes on to verification), after `durationMs`. */
  onTaskEnded?(state: string, durationMs: number): void;
}

export interface ProcessorDeps {
  /** The service of the default organization (a deployment without `orgs`). */
  api: Pick<CollectorUpgradeClient, 'createTask' | 'getTask'>;
  /** The service of each organization (the settings' `orgs`); without it, `api` serves all. */
  apis?: (org: string) => Pick<CollectorUpgradeClient, 'createTask' | 'getTask'>;
  /** Where an organization's problem is recorded (its part of every rollout then waits). */
  health?: Pick<OrgHealth, 'report'>;
  store: CollectorStore;
  /** Reads a step's record with its rollout's fields in one round trip (and `watchMs` alone). */
  rollouts: Pick<RolloutStore, 'loadStep' | 'watchMs'>;
  clock: Clock;
  logger: Logger;
  events?: UpgradeEvents;
  random?: () => number;
  /**
   * Confirms a create's pre-write on replicas (WAIT) before the create is sent; `store` must write
   * on the connection it watches. Absent: creates are sent after the write alone.
   */
  replicaWait?: Pick<ReplicaWait, 'mark' | 'confirm' | 'barrier'>;
  /** false: a task id is written without waiting for the replicas (only to measure what the wait buys). */
  confirmTaskIds?: boolean;
}

export type StepRollout = NonNullable<StepView['rollout']>;

export interface StepContext {
  deps: ProcessorDeps;
  rollout: StepRollout;
  settings: RolloutSettings;
  /** The record as this step last wrote or read it. */
  record: CollectorRecord;
  /** Child logger of the rollout and Collector. */
  log: Logger;
  /** Clock time when the step began. */
  now: number;
  /**
   * Moves the record by `event` (at the clock's time now) in one atomic write; false when the
   * record moved on meanwhile (another step won) or the move is not in the table.
   */
  apply(event: CollectorEvent, options?: ApplyOptions & { retryReason?: RetryReason }): Promise<boolean>;
  /** Writes only counters (a request was made, the record stays as it is). */
  count(counters: NonNullable<ApplyOptions['counters']>): Promise<void>;
}

export const done: Step = { kind: 'done' };

export const TRANSIENT_KINDS: readonly string[] = ['rate_limited', 'server', 'network', 'timeout'];

export function retryReasonOf(err: ApiError): RetryReason {
  if (err.kind === 'rate_limited') return 'rate_limited';
  if (err.kind === 'server') return 'server_error';
  if (err.kind === 'network' || err.kind === 'timeout') return 'network';
  return 'error';
}

export function createStepContext(
  deps: ProcessorDeps,
  view: StepView & { record: CollectorRecord; rollout: StepRollout },
): StepContext {
  const { store, clock } = deps;
  const rollout = view.rollout;
  const settings = rollout.settings;
  const log = deps.logger.child({ rollout: rollout.id, collector: view.record.id });
  const random = deps.random ?? Math.random;
  const ctx: StepContext = {
    deps,
    rollout,
    settings,
    record: view.record,
    log,
    now: clock.now(),
    async apply(event, options = {}) {
      const t = transition(ctx.record, event, { now: clock.now(), settings, random });
      if (!t.ok) {
        log.error(
          { state: ctx.record.state, event: event.type, reason: t.reason },
          'defect: a step asked for a move not in the transition table',
        );
        if (options.counters) await ctx.count(options.counters);
        return false;
      }
      // Only successes teach the poll schedule how long upgrades take.
      const succeeded = t.move.next.state === 'succeeded' || event.type === 'verify';
      const learn = succeeded ? options.durationMs : undefined;
      const [outcome] = await store.apply(rollout.id, [t.move], {
        counters: options.counters,
        durationMs: learn,
        limit: rollout.maxInFlight,
      });
      if (outcome !== 'written') {
        log.debug({ from: t.move.from, to: t.move.next.state }, 'record changed under us; step skipped');
        return false;
      }
      const next = t.move.next;
      ctx.record = next;
      if (event.type === 'created') deps.events?.onTaskCreated?.(rollout.id, orgOf(next));
      if (next.state === 'waiting_retry' && options.retryReason) deps.events?.onRetry?.(options.retryReason);
      if (options.durationMs !== undefined && (isSettled(next.state) || next.state === 'verifying'))
        deps.events?.onTaskEnded?.(next.state === 'verifying' ? 'succeeded' : next.state, options.durationMs);
      if (isSettled(next.state)) {
        log.info(
          { state: next.state, taskId: next.taskId, message: next.message || undefined },
          'collector finished',
        );
      }
      return true;
    },
    async count(counters) {
      await store.apply(rollout.id, [], { counters });
    },
  };
  return ctx;
}

/** The service of the Collector's organization. */
export function apiOf(
  deps: Pick<ProcessorDeps, 'api' | 'apis'>,
  record: { org?: string | undefined },
): Pick<CollectorUpgradeClient, 'createTask' | 'getTask'> {
  return record.org && deps.apis ? deps.apis(record.org) : deps.api;
}
