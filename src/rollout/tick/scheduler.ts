/**
 * The scheduler (run by the one leader) decides when things run. Each tick reads every policy's
 * current rollout with its counts and slots once (two round trips), then per policy in file order:
 * - a disabled policy pauses its rollout (`paused (policy disabled)`), a removed one too
 *   (`paused (policy removed)`); a policy enabled again un-pauses it;
 * - the target resolves to a build; a new build starts a new rollout and supersedes the old one
 *   (not after an abort, until the policy changes or the aborted rollout is resumed);
 * - the rollout moves on (advance-rollout.ts): scans, the failure gate, the waves, admission,
 *   convergence.
 * Scans are the only API calls (besides reading the build list at most once a minute); the rest
 * is a few Redis round trips per tick, whatever the size of the fleet. What happens is recorded
 * in the rollout's history and the outbox of notifications (event-log.ts).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BuildTarget, CollectorUpgradeClient } from '../../api/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { LATEST, type Policy } from '../../policy/schema.js';
import { verifySettings } from '../../policy/verify.js';
import type { UpgradeQueue } from '../../queue/upgrade-job.js';
import type { CollectorRecord } from '../collector/collector-state.js';
import type { CollectorStore } from '../collector/collector-store.js';
import type { Keys } from '../keys.js';
import type { EventLog, EventSource, RolloutEventType } from '../life/event-log.js';
import { admits, isPolicyPause, PAUSE_REASONS } from '../life/rollout-phase.js';
import type { CurrentRollout, RolloutRecord, RolloutSettings, RolloutStore } from '../life/rollout-store.js';
import { reconcileUnknownTasks } from '../listings/reconcile-unknown-tasks.js';
import { abortWaiting } from '../operator/control.js';
import { expireRollouts } from '../operator/expire-rollouts.js';
import {
  isOneOffPolicy,
  OneOffPolicies,
  parseOneOffs,
  rollbackSource,
} from '../operator/one-off-policies.js';
import { carryOutRollback, parseRollbackRequest } from '../operator/rollback.js';
import { supersedeRollout } from '../operator/supersede-rollout.js';
import { advanceRollout, listingDue, type RolloutMemory } from './advance-rollout.js';
import { repairJobs } from './repair-jobs.js';

/** Finished rollouts are removed this long after they finished, unless the daemon says otherwise. */
export const DEFAULT_RETENTION_MS = 30 * 86_400_000;

export interface SchedulerDeps {
  api: Pick<CollectorUpgradeClient, 'collectorPages' | 'listTargets'>;
  /** The connection of the stores (the job repair pipelines its lookups on it). */
  redis: Redis;
  keys: Keys;
  store: CollectorStore;
  rollouts: RolloutStore;
  events: EventLog;
  queue: UpgradeQueue;
  clock: Clock;
  logger: Logger;
  /** Clock ms between two scans of the listing of a running rollout (default 5 minutes). */
  scanIntervalMs?: number;
  /** Real ms between two repairs of the jobs (default 15 000). */
  repairIntervalMs?: number;
  /** Clock ms after which a finished rollout is removed (expire-rollouts.ts); default 30 days. */
  retentionMs?: number;
  onOutcome?(rolloutId: string, record: CollectorRecord): void;
  /** A task ended as the listings showed, after `durationMs` (estimated). */
  onTaskEnded?(state: string, durationMs: number): void;
}

/** Longest back-off of a Collector's retries (clock time). */
export const MAX_BACKOFF_MS = 30 * 60_000;

export function settingsOf(policy: Policy): RolloutSettings {
  const verify = verifySettings(policy.verify);
  return {
    pollInitialMs: policy.poll.initial,
    pollMaxMs: policy.poll.max,
    pollJitter: policy.poll.jitter,
    taskTimeoutMs: policy.taskTimeout,
    notAliveAttempts: policy.retry.notAlive.attempts,
    notAliveBackoffMs: policy.retry.notAlive.backoff,
    ...(policy.retry.notAlive.until === undefined ? {} : { notAliveUntilMs: policy.retry.notAlive.until }),
    errorAttempts: policy.retry.errors.attempts,
    errorBackoffMs: policy.retry.errors.backoff,
    transientAttempts: policy.retry.transient.attempts,
    transientBackoffMs: policy.retry.transient.backoff,
    maxBackoffMs: MAX_BACKOFF_MS,
    ...(verify ? { verify } : {}),
    causes: policy.failureCauses,
  };
}

/** A short fingerprint of a policy as loaded: a changed policy file releases an aborted rollout's policy. */
export function policyHash(policy: Policy): string {
  return createHash('sha256').update(JSON.stringify(policy)).digest('hex').slice(0, 16);
}

/** The build a policy's target names today, or undefined when the service does not offer it. */
export function resolveTarget(target: string, builds: readonly BuildTarget[]): string | undefined {
  if (target === LATEST) return builds.find((b) => b.latest)?.version ?? builds[builds.length - 1]?.version;
  return builds.some((b) => b.version === target) ? target : undefined;
}

export class Scheduler {
  private readonly memory: RolloutMemory = {
    lastScan: new Map(),
    idleScanned: new Set(),
    learnedAt: new Map(),
    failuresReported: new Map(),
    lastVerify: new Map(),
    lastWatch: new Map(),
    pagesPerPass: new Map(),
    medianMs: new Map(),
  };
  private lastRepair = 0;
  private lastExpiry = Number.NEGATIVE_INFINITY;
  private targets?: { at: number; builds: BuildTarget[] };

  private readonly oneOffs: OneOffPolicies;

  constructor(private readonly deps: SchedulerDeps) {
    this.oneOffs = new OneOffPolicies(deps.redis, deps.keys);
  }

  private get scanEvery(): number {
    return this.deps.scanIntervalMs ?? 300_000;
  }

  private get reconcileEvery(): number {
    return Math.min(this.scanEvery, 30_000);
  }

  /**
   * The service's builds, read once per scan interval (clock time): a new latest build starts
   * its rollout within one scan interval, and the build list costs no more than the scans.
   */
  private async builds(): Promise<BuildTarget[]> {
    const now = this.deps.clock.now();
    if (!this.targets || now - this.targets.at >= this.scanEvery)
      this.targets = { at: now, builds: await this.deps.api.listTargets() };
    return this.targets.builds;
  }

  /** Records what happened to a rollout (history and notification outbox). */
  private async emit(
    rollout: Pick<RolloutRecord, 'id' | 'policy' | 'build'>,
    type: RolloutEventType,
    source: EventSource,
    message: string,
    detail?: Record<string, unknown>,
  ): Promise<void> {
    await this.deps.events.record({
      type,
      rollout: rollout.id,
      policy: rollout.policy,
      build: rollout.build,
      at: this.deps.clock.now(),
      source,
      message,
      ...(detail ? { detail } : {}),
    });
  }

  /**
   * One round over every policy. Errors of one policy do not stop the others. A Collector
   * selected by several enabled policies belongs to the first of them (in file order).
   */
  async tick(filePolicies: readonly Policy[]): Promise<void> {
    const { rollouts, clock } = this.deps;
    const { current, followed, oneOffs: rawOneOffs, rollbackRequests } = await rollouts.readTick();
    // One-off rollouts come first (an operator's explicit request wins), until they are done.
    const oneOffs = parseOneOffs(rawOneOffs, this.deps.logger).filter((p) => {
      const phase = current.get(p.name)?.rollout.phase;
      return phase !== 'converged' && phase !== 'aborted';
    });
    const done = new Set(Object.keys(rawOneOffs));
    const policies = [...oneOffs, ...filePolicies.filter((p) => !done.has(p.name))];
    const names = new Set([...policies.map((p) => p.name), ...done]);
    const enabled = policies.filter((p) => p.enabled);
    const now = clock.now();
    for (const [name, cur] of current) {
      const policy = policies.find((p) => p.name === name);
      if (policy?.enabled || done.has(name)) continue;
      const reason = names.has(name) ? PAUSE_REASONS.policyDisabled : PAUSE_REASONS.policyRemoved;
      await this.guarded(name, () => this.followPaused(cur, reason, now, policy?.pageSize ?? 1000));
    }
    for (const [source, json] of Object.entries(rollbackRequests))
      await this.guarded(source, () => this.rollback(source, json, policies, now));
    for (const [i, policy] of enabled.entries()) {
      await this.guarded(policy.name, () =>
        this.tickPolicy(policy, current.get(policy.name), enabled.slice(0, i)),
      );
    }
    for (const f of followed) await this.guarded(f.rollout.policy, () => this.followSuperseded(f, now));
    // Retention, looked at every ten minutes of clock time.
    if (now - this.lastExpiry >= 10 * 60_000) {
      this.lastExpiry = now;
      await this.guarded('*', () =>
        expireRollouts(
          { ...this.deps, clock: this.deps.clock },
          this.deps.redis,
          this.deps.retentionMs ?? DEFAULT_RETENTION_MS,
          now,
        ),
      );
    }
    if (Date.now() - this.lastRepair >= (this.deps.repairIntervalMs ?? 15_000)) {
      this.lastRepair = Date.now();
      await this.guarded('*', () => repairJobs(this.deps, current.keys()));
    }
  }

  /** Carries out a rollback request (rollback.ts): one-off rollouts that start at the next tick. */
  private async rollback(sourceId: string, json: string, policies: readonly Policy[], now: number) {
    const request = parseRollbackRequest(json);
    const source = await this.deps.rollouts.get(sourceId);
    if (request && source) {
      const policy = policies.find((p) => p.name === source.policy);
      await carryOutRollback(
        { ...this.deps, oneOffs: this.oneOffs, emit: this.emit.bind(this) },
        source,
        request,
        { ...(policy ? { policy } : {}), targets: await this.builds(), now },
      );
    } else
      this.deps.logger.error(
        { rollout: sourceId },
        'rollback request unreadable or its rollout gone; dropped',
      );
    await this.deps.rollouts.rollbackRequestDone(sourceId, json);
  }

  private async guarded(policy: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.deps.logger.error({ policy, err: (err as Error).message }, 'scheduler pass failed');
    }
  }

  /** Resolves tasks of unknown id of a rollout that no longer moves on, now and then. */
  private async reconcileNow(rollout: RolloutRecord, now: number, pageSize: number) {
    if (now - (this.memory.lastScan.get(rollout.id) ?? 0) < this.reconcileEvery) return;
    this.memory.lastScan.set(rollout.id, now);
    await reconcileUnknownTasks(this.deps, rollout, { pageSize, targets: await this.builds() });
  }

  /**
   * A rollout whose policy is disabled or gone admits nothing; its tasks under way are followed
   * to their end by the workers, and its tasks of unknown id resolved from the listings here.
   */
  private async followPaused(cur: CurrentRollout, reason: string, now: number, pageSize: number) {
    const { rollout, counts } = cur;
    if (admits(rollout.phase) && (await this.deps.rollouts.move(rollout, 'pause', now, reason))) {
      this.deps.logger.warn({ rollout: rollout.id, reason }, 'rollout paused');
      await this.emit(
        rollout,
        'rollout.paused',
        'policy',
        `${rollout.id} paused: ${reason}; nothing new starts until the policy is back`,
      );
    }
    if ((counts.reconciling ?? 0) > 0) await this.reconcileNow(rollout, now, pageSize);
    await this.verifyNow(cur, now, pageSize);
  }

  /**
   * Verification, and the watching of tasks under way, go on in a rollout that admits nothing
   * (paused, aborted): they only read listings.
   */
  private async verifyNow(cur: CurrentRollout, now: number, pageSize: number) {
    await listingDue(
      { ...this.deps, memory: this.memory },
      cur.rollout,
      cur.counts,
      await this.builds(),
      pageSize,
      now,
    );
  }

  /** A superseded rollout is followed until its tasks of unknown id are resolved (they keep their slots). */
  private async followSuperseded(f: CurrentRollout, now: number) {
    if ((f.counts.reconciling ?? 0) === 0) await this.deps.rollouts.follow(f.rollout.id, false);
    else await this.reconcileNow(f.rollout, now, 1000);
  }

  async tickPolicy(policy: Policy, cur: CurrentRollout | undefined, earlier: readonly Policy[] = []) {
    const { rollouts, clock, logger } = this.deps;
    const targets = await this.builds();
    const build = resolveTarget(policy.target, targets);
    if (!build) {
      logger.error(
        { policy: policy.name, target: policy.target },
        'target build is not offered by the service',
      );
      return undefined;
    }
    const now = clock.now();
    const settings = settingsOf(policy);
    const hash = policyHash(policy);
    let view = cur;
    if (view?.rollout.phase === 'aborted') {
      const released = view.rollout.releasedAt !== undefined || view.rollout.policyHash !== hash;
      if (!released || view.rollout.build === build) {
        const waiting = (view.counts.queued ?? 0) + (view.counts.waiting_retry ?? 0);
        if (waiting > 0)
          await abortWaiting(this.deps, view.rollout, view.rollout.abortReason ?? 'aborted', now);
        if ((view.counts.reconciling ?? 0) > 0) await this.reconcileNow(view.rollout, now, policy.pageSize);
        await this.verifyNow(view, now, policy.pageSize);
        return view.rollout;
      }
    }
    if (!view || view.rollout.build !== build) {
      const { rollout, replaced } = await rollouts.start(
        policy.name,
        policy.target,
        build,
        policy.maxInFlight,
        settings,
        now,
      );
      await rollouts.setFields(rollout.id, { policyHash: hash });
      if (replaced) {
        await supersedeRollout(this.deps, replaced, now);
        const old = await rollouts.get(replaced);
        if (old)
          await this.emit(old, 'rollout.superseded', 'scheduler', `${replaced} superseded by ${rollout.id}`, {
            by: rollout.id,
          });
      }
      if (rollout.phase === 'superseded') await rollouts.move(rollout, 'restart', now);
      [view] = await rollouts.readMany([rollout.id]);
      if (!view) return undefined;
      logger.info({ rollout: rollout.id, policy: policy.name, build, replaced }, 'rollout started');
      if (policy.target !== build && isOneOffPolicy(policy)) await this.oneOffs.pin(policy.name, build);
      const source = rollbackSource(policy);
      if (source) await rollouts.setFields(rollout.id, { rollbackOf: source });
      await this.emit(
        rollout,
        'rollout.started',
        'scheduler',
        `${rollout.id} started: ${policy.name} to ${build}`,
        {
          ...(replaced ? { replaced } : {}),
        },
      );
    } else if (
      view.rollout.maxInFlight !== policy.maxInFlight ||
      view.rollout.target !== policy.target ||
      view.rollout.policyHash !== hash ||
      JSON.stringify(view.rollout.settings) !== JSON.stringify(settings)
    ) {
      await rollouts.update(view.rollout.id, {
        maxInFlight: policy.maxInFlight,
        target: policy.target,
        settings,
      });
      await rollouts.setFields(view.rollout.id, { policyHash: hash });
      view.rollout = {
        ...view.rollout,
        maxInFlight: policy.maxInFlight,
        target: policy.target,
        settings,
        policyHash: hash,
      };
    }
    const { rollout } = view;
    if (rollout.phase === 'paused' && isPolicyPause(rollout.pauseReason)) {
      const moved = await rollouts.move(rollout, 'unpause', now);
      if (moved) {
        rollout.phase = moved;
        logger.info({ rollout: rollout.id }, 'rollout running again: its policy is enabled');
        await this.emit(rollout, 'rollout.resumed', 'policy', `${rollout.id} runs again: its policy is back`);
      }
    }
    await advanceRollout(
      {
        ...this.deps,
        emit: this.emit.bind(this),
        memory: this.memory,
        scanEveryMs: this.scanEvery,
        reconcileEveryMs: this.reconcileEvery,
      },
      { policy, view, targets, earlier, now },
    );
    return rollout;
  }
}
