/**
 * The scheduler (run by the one leader): per policy, resolve the target build, keep the rollout
 * (policy × build) moving, and admit Collectors into the queue while the rollout's in-flight
 * count is below `maxInFlight`, wave by wave, inside the maintenance windows, until the failure
 * gate trips or everything has an outcome.
 *
 * A tick is cheap (Redis only) unless a scan is due: scans page through the service's listing
 * (discovery; and reconciliation of Collectors whose task id we lost).
 *
 * Admission lives in admit-queued.ts, the resolution of tasks of unknown id in
 * reconcile-unknown-tasks.ts; this module decides when they run.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BuildTarget, CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { LATEST, type Policy } from '../policy/schema.js';
import type { UpgradeJobData } from '../worker/upgrade-processor.js';
import { ensureJobs } from '../worker/upgrade-queue.js';
import { admitQueued } from './admit-queued.js';
import type { InflightSlots } from './inflight-slots.js';
import type { Keys } from './keys.js';
import { reconcileUnknownTasks } from './reconcile-unknown-tasks.js';
import {
  ACTIVE_STATES,
  type CollectorResult,
  type CollectorState,
  type ResultStore,
} from './result-store.js';
import type { RolloutRecord, RolloutSettings, RolloutStore } from './rollout-store.js';
import { scanUpgradable } from './scan-upgradable.js';
import { IN_PROGRESS, sumStates } from './sum-states.js';

export { sumStates } from './sum-states.js';

export interface SchedulerDeps {
  api: Pick<CollectorUpgradeClient, 'collectorPages' | 'listTargets'>;
  redis: Redis;
  keys: Keys;
  results: ResultStore;
  rollouts: RolloutStore;
  slots: InflightSlots;
  queue: Queue<UpgradeJobData>;
  clock: Clock;
  logger: Logger;
  /** Clock ms between two scans of the listing of a running rollout (default 5 minutes). */
  scanIntervalMs?: number;
  onFinal?(rolloutId: string, record: CollectorResult): void;
}

export function settingsOf(policy: Policy): RolloutSettings {
  return {
    pollInitialMs: policy.poll.initial,
    pollMaxMs: policy.poll.max,
    pollJitter: policy.poll.jitter,
    taskTimeoutMs: policy.taskTimeout,
    notAliveAttempts: policy.retry.notAlive.attempts,
    notAliveBackoffMs: policy.retry.notAlive.backoff,
  };
}

/** The build a policy's target names today, or undefined when the service does not offer it. */
export function resolveTarget(target: string, builds: readonly BuildTarget[]): string | undefined {
  if (target === LATEST) return builds.find((b) => b.latest)?.version ?? builds[builds.length - 1]?.version;
  return builds.some((b) => b.version === target) ? target : undefined;
}

export class Scheduler {
  private readonly lastScan = new Map<string, number>();
  /** Rollouts whose upgrades all ended after their last scan: one more scan decides convergence. */
  private readonly idleScanned = new Set<string>();

  constructor(private readonly deps: SchedulerDeps) {}

  private targets?: { at: number; builds: BuildTarget[] };

  /** The service's builds, read at most once a minute (clock time): a tick must stay cheap. */
  private async builds(): Promise<BuildTarget[]> {
    const now = this.deps.clock.now();
    if (!this.targets || now - this.targets.at >= Math.min(60_000, this.deps.scanIntervalMs ?? 300_000)) {
      this.targets = { at: now, builds: await this.deps.api.listTargets() };
    }
    return this.targets.builds;
  }

  /**
   * One pass over every enabled policy. Errors of one policy do not stop the others. A Collector
   * selected by several policies belongs to the first of them (in file order).
   */
  async tick(policies: readonly Policy[]): Promise<void> {
    const enabled = policies.filter((p) => p.enabled);
    for (const [i, policy] of enabled.entries()) {
      try {
        const targets = await this.builds();
        await this.tickPolicy(policy, targets, enabled.slice(0, i));
      } catch (err) {
        this.deps.logger.error({ policy: policy.name, err: (err as Error).message }, 'scheduler pass failed');
      }
    }
  }

  async tickPolicy(
    policy: Policy,
    targets: readonly BuildTarget[],
    earlier: readonly Policy[] = [],
  ): Promise<RolloutRecord | undefined> {
    const { rollouts, clock, logger } = this.deps;
    const build = resolveTarget(policy.target, targets);
    if (!build) {
      logger.error(
        { policy: policy.name, target: policy.target },
        'target build is not offered by the service',
      );
      return undefined;
    }
    const now = clock.now();
    const { rollout, replaced } = await rollouts.ensure(
      policy.name,
      policy.target,
      build,
      policy.maxInFlight,
      settingsOf(policy),
      now,
    );
    const log = logger.child({ rollout: rollout.id });
    if (replaced) await this.supersede(replaced, now);
    if (rollout.phase === 'superseded') await rollouts.setPhase(rollout.id, 'running', now);
    if (replaced || rollout.scans === 0)
      log.info({ policy: policy.name, build, replaced }, 'rollout started');

    let counts = await this.deps.results.counts(rollout.id);
    const scanEvery = this.deps.scanIntervalMs ?? 300_000;
    const reconciling = counts.reconciling ?? 0;
    const sinceScan = now - (this.lastScan.get(rollout.id) ?? 0);
    const idle = sumStates(counts, ACTIVE_STATES) === 0;
    const scanDue =
      rollout.scans === 0 ||
      sinceScan >= scanEvery ||
      (reconciling > 0 && sinceScan >= Math.min(scanEvery, 30_000)) ||
      (idle && !this.idleScanned.has(rollout.id));
    let addedByScan = 0;
    if (scanDue) {
      const scan = await scanUpgradable(this.deps, rollout.id, policy, build, now, earlier);
      addedByScan = scan.added.length;
      this.lastScan.set(rollout.id, now);
      await rollouts.noteScan(rollout.id, now);
      if (reconciling > 0) await reconcileUnknownTasks(this.deps, rollout, policy, scan.listed, targets, now);
      if (scan.added.length)
        log.info({ added: scan.added.length, listed: scan.listed.size }, 'scan found Collectors');
      counts = await this.deps.results.counts(rollout.id);
      if (idle) this.idleScanned.add(rollout.id);
    }
    if (sumStates(counts, ACTIVE_STATES) > 0) this.idleScanned.delete(rollout.id);

    const fresh = (await rollouts.get(rollout.id)) as RolloutRecord;
    if (fresh.phase === 'running' || fresh.phase === 'converged') {
      const halted = await this.checkGate(fresh, policy, counts, now);
      if (!halted) await admitQueued(this.deps, fresh, policy, counts, now);
    }
    await this.repairJobs(fresh, counts);
    counts = await this.deps.results.counts(rollout.id);
    const active = sumStates(counts, ACTIVE_STATES);
    if (fresh.phase === 'running' && active === 0 && scanDue && addedByScan === 0 && idle) {
      await rollouts.setPhase(rollout.id, 'converged', now);
      log.info({ counts }, 'rollout converged');
    } else if (fresh.phase === 'converged' && active > 0) {
      await rollouts.setPhase(rollout.id, 'running', now);
      log.info({ counts }, 'rollout running again');
    }
    return rollouts.get(rollout.id);
  }

  /** Halts the rollout when the policy's failure gate trips. Returns whether it is halted. */
  private async checkGate(
    rollout: RolloutRecord,
    policy: Policy,
    counts: Partial<Record<CollectorState, number>>,
    now: number,
  ) {
    const gate = policy.failureGate;
    if (!gate) return false;
    const since = (state: CollectorState) => (counts[state] ?? 0) - (rollout.gateBaseline?.[state] ?? 0);
    const bad = since('failed') + since('timed_out');
    const outcomes = bad + since('succeeded') + since('not_alive') + since('rejected');
    if (outcomes < gate.minOutcomes || bad / outcomes <= gate.maxFailureRatio) return false;
    const reason = `${bad} of ${outcomes} outcomes failed or timed out, above the gate's ${gate.maxFailureRatio}`;
    await this.deps.rollouts.setPhase(rollout.id, 'halted', now, reason);
    this.deps.logger.warn({ rollout: rollout.id, reason }, 'rollout halted by its failure gate');
    return true;
  }

  /** Every Collector in progress has a live job (after a crash between admission and enqueue, say). */
  private async repairJobs(rollout: RolloutRecord, counts: Partial<Record<CollectorState, number>>) {
    const { results, queue, slots } = this.deps;
    if (sumStates(counts, IN_PROGRESS) === 0) return;
    const ids = new Set(await slots.members(rollout.id));
    if ((counts.waiting_alive ?? 0) > 0 || (counts.admitted ?? 0) > 0) {
      for await (const r of results.all(rollout.id))
        if (r.state === 'waiting_alive' || r.state === 'admitted') ids.add(r.id);
    }
    const records = await results.getMany(rollout.id, [...ids]);
    // Every state in progress but reconciling is driven by a job (reconciling is the scheduler's).
    const needsJob = (r: CollectorResult | undefined) =>
      r !== undefined && r.state !== 'reconciling' && IN_PROGRESS.includes(r.state);
    const need = [...records.values()].filter(needsJob).map((r) => r.id);
    const repaired = await ensureJobs(queue, rollout.id, need, async (id) =>
      needsJob(await results.get(rollout.id, id)),
    );
    if (repaired > 0) this.deps.logger.warn({ rollout: rollout.id, repaired }, 'jobs re-enqueued');
  }

  /** A newer rollout of the policy took over: Collectors not started yet are skipped. */
  private async supersede(oldId: string, now: number) {
    const { results, rollouts, redis, keys, slots } = this.deps;
    await rollouts.setPhase(oldId, 'superseded', now);
    for await (const r of results.all(oldId)) {
      // Upgrades under way finish in their jobs. Nothing would resolve a task of unknown id of a
      // rollout that no longer runs: the new rollout finds the Collector once that task ends.
      if (r.state === 'queued' || r.state === 'waiting_alive' || r.state === 'reconciling') {
        const message =
          r.state === 'reconciling'
            ? 'superseded by a newer rollout while its task of unknown id was unresolved'
            : 'superseded by a newer rollout';
        const written = await results.put(
          oldId,
          { ...r, state: 'skipped', message, finishedAt: now },
          r.state,
        );
        if (written && r.state === 'reconciling') await slots.release(oldId, r.id);
      }
    }
    await redis.del(keys.waiting(oldId));
    this.deps.logger.info({ rollout: oldId }, 'rollout superseded');
  }
}
