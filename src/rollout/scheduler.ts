/**
 * The scheduler (run by the one leader) decides when things run. Each tick reads every policy's
 * current rollout with its counts and slots once (two round trips), then per policy in file order:
 * - a disabled policy pauses its rollout (`paused (policy disabled)`), a removed one too
 *   (`paused (policy removed)`); a policy enabled again un-pauses it;
 * - the target resolves to a build; a new build starts a new rollout and supersedes the old one;
 * - a scan, when due, pages through the listing (discovery, catch-up, reconciliation evidence);
 * - the failure gate may halt the rollout; the admitter (admit.ts) fills free slots;
 * - a rollout whose Collectors are all settled after a full scan converges.
 * Scans are the only API calls (besides reading the build list at most once a minute); the rest
 * is a few Redis round trips per tick, whatever the size of the fleet.
 */
import type { Redis } from 'ioredis';
import type { BuildTarget, CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { LATEST, type Policy } from '../policy/schema.js';
import type { UpgradeQueue } from '../queue/upgrade-job.js';
import { admit } from './admit.js';
import { ACTIVE_STATES, type CollectorRecord, sumStates } from './collector-state.js';
import type { CollectorStore } from './collector-store.js';
import { judgeGate } from './failure-gate.js';
import { learnFirstRead } from './poll-schedule.js';
import { reconcileUnknownTasks } from './reconcile-unknown-tasks.js';
import { repairJobs } from './repair-jobs.js';
import { admits, PAUSE_REASONS } from './rollout-phase.js';
import type { CurrentRollout, RolloutRecord, RolloutSettings, RolloutStore } from './rollout-store.js';
import { scanUpgradable } from './scan-upgradable.js';
import { supersedeRollout } from './supersede-rollout.js';

export interface SchedulerDeps {
  api: Pick<CollectorUpgradeClient, 'collectorPages' | 'listTargets'>;
  /** The connection of the stores (the job repair pipelines its lookups on it). */
  redis: Redis;
  store: CollectorStore;
  rollouts: RolloutStore;
  queue: UpgradeQueue;
  clock: Clock;
  logger: Logger;
  /** Clock ms between two scans of the listing of a running rollout (default 5 minutes). */
  scanIntervalMs?: number;
  /** Real ms between two repairs of the jobs (default 15 000). */
  repairIntervalMs?: number;
  onOutcome?(rolloutId: string, record: CollectorRecord): void;
}

/** Longest back-off of a Collector's retries (clock time). */
export const MAX_BACKOFF_MS = 30 * 60_000;

export function settingsOf(policy: Policy): RolloutSettings {
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
  };
}

/** The build a policy's target names today, or undefined when the service does not offer it. */
export function resolveTarget(target: string, builds: readonly BuildTarget[]): string | undefined {
  if (target === LATEST) return builds.find((b) => b.latest)?.version ?? builds[builds.length - 1]?.version;
  return builds.some((b) => b.version === target) ? target : undefined;
}

const POLICY_PAUSES: readonly string[] = Object.values(PAUSE_REASONS);

export class Scheduler {
  private readonly lastScan = new Map<string, number>();
  /** Rollouts whose Collectors all settled after their last scan: one more scan decides convergence. */
  private readonly idleScanned = new Set<string>();
  /** Successes counted when the first status read was last learned, per rollout. */
  private readonly learnedAt = new Map<string, number>();
  private lastRepair = 0;
  private targets?: { at: number; builds: BuildTarget[] };

  constructor(private readonly deps: SchedulerDeps) {}

  private get scanEvery(): number {
    return this.deps.scanIntervalMs ?? 300_000;
  }

  /** The service's builds, read at most once a minute (clock time): a tick must stay cheap. */
  private async builds(): Promise<BuildTarget[]> {
    const now = this.deps.clock.now();
    if (!this.targets || now - this.targets.at >= Math.min(60_000, this.scanEvery))
      this.targets = { at: now, builds: await this.deps.api.listTargets() };
    return this.targets.builds;
  }

  /**
   * One round over every policy. Errors of one policy do not stop the others. A Collector
   * selected by several enabled policies belongs to the first of them (in file order).
   */
  async tick(policies: readonly Policy[]): Promise<void> {
    const { rollouts, clock } = this.deps;
    const { current, followed } = await rollouts.readTick();
    const names = new Set(policies.map((p) => p.name));
    const enabled = policies.filter((p) => p.enabled);
    const now = clock.now();
    for (const [name, cur] of current) {
      const policy = policies.find((p) => p.name === name);
      if (policy?.enabled) continue;
      const reason = names.has(name) ? PAUSE_REASONS.policyDisabled : PAUSE_REASONS.policyRemoved;
      await this.guarded(name, () => this.followPaused(cur, reason, now, policy?.pageSize ?? 1000));
    }
    for (const [i, policy] of enabled.entries()) {
      await this.guarded(policy.name, () =>
        this.tickPolicy(policy, current.get(policy.name), enabled.slice(0, i)),
      );
    }
    for (const f of followed) await this.guarded(f.rollout.policy, () => this.followSuperseded(f, now));
    if (Date.now() - this.lastRepair >= (this.deps.repairIntervalMs ?? 15_000)) {
      this.lastRepair = Date.now();
      await this.guarded('*', () => repairJobs(this.deps, current.keys()));
    }
  }

  private async guarded(policy: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.deps.logger.error({ policy, err: (err as Error).message }, 'scheduler pass failed');
    }
  }

  /**
   * A rollout whose policy is disabled or gone admits nothing; its tasks under way are followed
   * to their end by the workers, and its tasks of unknown id resolved from the listings here.
   */
  private async followPaused(cur: CurrentRollout, reason: string, now: number, pageSize: number) {
    const { rollout, counts } = cur;
    if (admits(rollout.phase)) {
      await this.deps.rollouts.move(rollout, 'pause', now, reason);
      this.deps.logger.warn({ rollout: rollout.id, reason }, 'rollout paused');
    }
    if ((counts.reconciling ?? 0) > 0 && now - (this.lastScan.get(rollout.id) ?? 0) >= this.reconcileEvery) {
      this.lastScan.set(rollout.id, now);
      await reconcileUnknownTasks(this.deps, rollout, { pageSize, targets: await this.builds() });
    }
  }

  /** A superseded rollout is followed until its tasks of unknown id are resolved (they keep their slots). */
  private async followSuperseded(f: CurrentRollout, now: number) {
    const { rollout, counts } = f;
    if ((counts.reconciling ?? 0) === 0) {
      await this.deps.rollouts.follow(rollout.id, false);
      return;
    }
    if (now - (this.lastScan.get(rollout.id) ?? 0) < this.reconcileEvery) return;
    this.lastScan.set(rollout.id, now);
    await reconcileUnknownTasks(this.deps, rollout, { pageSize: 1000, targets: await this.builds() });
  }

  private get reconcileEvery(): number {
    return Math.min(this.scanEvery, 30_000);
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
    let view = cur;
    if (!view || view.rollout.build !== build) {
      const { rollout, replaced } = await rollouts.start(
        policy.name,
        policy.target,
        build,
        policy.maxInFlight,
        settings,
        now,
      );
      if (replaced) await supersedeRollout(this.deps, replaced, now);
      if (rollout.phase === 'superseded') await rollouts.move(rollout, 'restart', now);
      [view] = await rollouts.readMany([rollout.id]);
      if (!view) return undefined;
      logger.info({ rollout: rollout.id, policy: policy.name, build, replaced }, 'rollout started');
    } else if (
      view.rollout.maxInFlight !== policy.maxInFlight ||
      view.rollout.target !== policy.target ||
      JSON.stringify(view.rollout.settings) !== JSON.stringify(settings)
    ) {
      await rollouts.update(view.rollout.id, {
        maxInFlight: policy.maxInFlight,
        target: policy.target,
        settings,
      });
      view.rollout = { ...view.rollout, maxInFlight: policy.maxInFlight, target: policy.target, settings };
    }
    const { rollout } = view;
    if (rollout.phase === 'paused' && POLICY_PAUSES.includes(rollout.pauseReason ?? '')) {
      rollout.phase = (await rollouts.move(rollout, 'unpause', now)) ?? rollout.phase;
      logger.info({ rollout: rollout.id }, 'rollout running again: its policy is enabled');
    }
    await this.tickRollout(policy, view, targets, earlier, now);
    return rollout;
  }

  private async tickRollout(
    policy: Policy,
    view: CurrentRollout,
    targets: readonly BuildTarget[],
    earlier: readonly Policy[],
    now: number,
  ) {
    const { rollouts, store, logger } = this.deps;
    const { rollout } = view;
    const log = logger.child({ rollout: rollout.id });
    let counts = view.counts;
    const reconciling = counts.reconciling ?? 0;
    const sinceScan = now - (this.lastScan.get(rollout.id) ?? 0);
    const idle = sumStates(counts, ACTIVE_STATES) === 0;
    const scanDue =
      rollout.scans === 0 ||
      sinceScan >= this.scanEvery ||
      (reconciling > 0 && sinceScan >= this.reconcileEvery) ||
      (idle && !this.idleScanned.has(rollout.id));
    let addedByScan = 0;
    if (scanDue) {
      const scan = await scanUpgradable(this.deps, rollout, policy, earlier);
      addedByScan = scan.added.length + scan.caughtUp.length;
      this.lastScan.set(rollout.id, now);
      await rollouts.noteScan(rollout.id, now);
      if (reconciling > 0)
        await reconcileUnknownTasks(this.deps, rollout, {
          listed: scan.listed,
          pageSize: policy.pageSize,
          targets,
        });
      if (scan.added.length || scan.caughtUp.length)
        log.info(
          { added: scan.added.length, caughtUp: scan.caughtUp.length, listed: scan.listed.size },
          'scan found Collectors',
        );
      counts = await store.counts(rollout.id);
      if (idle) this.idleScanned.add(rollout.id);
    }
    const active = sumStates(counts, ACTIVE_STATES);
    if (active > 0) this.idleScanned.delete(rollout.id);

    if (admits(rollout.phase)) {
      const verdict = judgeGate(policy.failureGate, counts, rollout.gateBaseline);
      if (verdict.trip) {
        rollout.phase = (await rollouts.move(rollout, 'halt', now, verdict.trip)) ?? rollout.phase;
        log.warn({ reason: verdict.trip }, 'rollout halted by its failure gate');
      }
    }
    await admit(this.deps, { rollout, policy, counts, slotsHeld: view.slotsHeld, now });
    if (rollout.phase === 'running' && active === 0 && scanDue && addedByScan === 0 && idle) {
      await rollouts.move(rollout, 'converge', now);
      log.info({ counts }, 'rollout converged');
    } else if (rollout.phase === 'converged' && active > 0) {
      await rollouts.move(rollout, 'reopen', now);
      log.info({ counts }, 'rollout running again');
    }
    await this.learn(rollout, counts);
  }

  /**
   * The first status read of a task, learned from this rollout's durations: after each success
   * while few are known, then after every tenth (the 10th percentile hardly moves by then).
   */
  private async learn(rollout: RolloutRecord, counts: CurrentRollout['counts']) {
    const succeeded = counts.succeeded ?? 0;
    const last = this.learnedAt.get(rollout.id);
    if (last === succeeded || (last !== undefined && succeeded >= 50 && succeeded - last < 10)) return;
    this.learnedAt.set(rollout.id, succeeded);
    const firstRead = learnFirstRead(await this.deps.rollouts.durations(rollout.id), rollout.settings);
    if (firstRead !== rollout.firstPollMs) await this.deps.rollouts.setFirstPoll(rollout.id, firstRead);
  }
}
