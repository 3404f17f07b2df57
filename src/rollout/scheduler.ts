/**
 * The scheduler (run by the one leader): per policy, resolve the target build, keep the rollout
 * (policy × build) moving, and admit Collectors into the queue while the rollout's in-flight
 * count is below `maxInFlight`, wave by wave, inside the maintenance windows, until the failure
 * gate trips or everything has an outcome.
 *
 * A tick is cheap (Redis only) unless a scan is due: scans page through the service's listing
 * (discovery; and reconciliation of Collectors whose task id we lost).
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { BuildTarget, CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { isWindowOpen } from '../policy/is-window-open.js';
import { LATEST, type Policy } from '../policy/schema.js';
import { waveLimits } from '../policy/wave-limits.js';
import type { UpgradeJobData } from '../worker/upgrade-processor.js';
import { enqueueUpgrades, ensureJobs } from '../worker/upgrade-queue.js';
import type { InflightSlots } from './inflight-slots.js';
import type { Keys } from './keys.js';
import {
  ACTIVE_STATES,
  type CollectorResult,
  type CollectorState,
  type ResultStore,
  SLOT_STATES,
} from './result-store.js';
import type { RolloutRecord, RolloutSettings, RolloutStore } from './rollout-store.js';
import { observeVersions, scanUpgradable } from './scan-upgradable.js';

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

const IN_PROGRESS: readonly CollectorState[] = ACTIVE_STATES.filter((s) => s !== 'queued');

export function sumStates(
  counts: Partial<Record<CollectorState, number>>,
  states: readonly CollectorState[],
): number {
  return states.reduce((n, s) => n + (counts[s] ?? 0), 0);
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
      if (reconciling > 0) await this.reconcile(rollout, policy, scan.listed, targets, now);
      if (scan.added.length)
        log.info({ added: scan.added.length, listed: scan.listed.size }, 'scan found Collectors');
      counts = await this.deps.results.counts(rollout.id);
      if (idle) this.idleScanned.add(rollout.id);
    }
    if (sumStates(counts, ACTIVE_STATES) > 0) this.idleScanned.delete(rollout.id);

    const fresh = (await rollouts.get(rollout.id)) as RolloutRecord;
    if (fresh.phase === 'running' || fresh.phase === 'converged') {
      const halted = await this.checkGate(fresh, policy, counts, now);
      if (!halted) await this.admit(fresh, policy, counts, now);
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

  /** Admits queued Collectors while slots, the current wave and the windows allow. */
  private async admit(
    rollout: RolloutRecord,
    policy: Policy,
    counts: Partial<Record<CollectorState, number>>,
    now: number,
  ) {
    const { redis, keys, slots, results, queue } = this.deps;
    const total = sumStates(counts, [
      ...ACTIVE_STATES,
      'succeeded',
      'failed',
      'timed_out',
      'not_alive',
      'rejected',
    ]);
    const queued = counts.queued ?? 0;
    if (queued === 0) return;
    const started = total - queued;
    const limits = waveLimits(policy.waves, total);
    // At a wave's boundary, the next wave waits until every Collector of the earlier ones is done.
    const atBoundary = limits.includes(started) && sumStates(counts, IN_PROGRESS) > 0;
    const cap = atBoundary ? started : (limits.find((l) => l > started) ?? total);
    const free = Math.min(rollout.maxInFlight - (await slots.count(rollout.id)), cap - started);
    if (free <= 0) return;
    const window = Math.max(free * 4, 100) - 1;
    const candidates = (await redis.zrange(keys.waiting(rollout.id), '0', String(window))).map(Number);
    const records = await results.getMany(rollout.id, candidates);
    // Ids left in the waiting set by a crash after their admission are dropped from it here:
    // only Collectors read as queued may take a slot.
    const stale = candidates.filter((id) => records.get(id)?.state !== 'queued');
    if (stale.length) await redis.zrem(keys.waiting(rollout.id), ...stale.map(String));
    const open = candidates.filter((id) => {
      const r = records.get(id);
      return r?.state === 'queued' && isWindowOpen(policy.windows, now, r.timeZone);
    });
    const got = await slots.acquire(rollout.id, open.slice(0, free), rollout.maxInFlight);
    const admitted: number[] = [];
    for (const id of got) {
      const r = records.get(id) as CollectorResult;
      if (!(await results.put(rollout.id, { ...r, state: 'admitted', admittedAt: now }, 'queued'))) {
        // It moved on since we read it; give the slot back only if it holds none by right.
        const fresh = await results.get(rollout.id, id);
        if (!fresh || !SLOT_STATES.includes(fresh.state)) await slots.release(rollout.id, id);
        await redis.zrem(keys.waiting(rollout.id), String(id));
        continue;
      }
      admitted.push(id);
    }
    if (admitted.length === 0) return;
    await enqueueUpgrades(queue, rollout.id, admitted);
    await redis.zrem(keys.waiting(rollout.id), ...admitted.map(String));
    this.deps.logger.debug({ rollout: rollout.id, admitted: admitted.length }, 'admitted');
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
    const need = [...records.values()]
      .filter((r) => r.state !== 'reconciling' && IN_PROGRESS.includes(r.state))
      .map((r) => r.id);
    const repaired = await ensureJobs(queue, rollout.id, need, async (id) => {
      const now = await results.get(rollout.id, id);
      return now !== undefined && now.state !== 'reconciling' && IN_PROGRESS.includes(now.state);
    });
    if (repaired > 0) this.deps.logger.warn({ rollout: rollout.id, repaired }, 'jobs re-enqueued');
  }

  /**
   * Resolves Collectors for which the service holds (or held) a task whose id we lost:
   * offered for the build again → no task is running and the build was not reached: queue again;
   * on the build (seen through another build's listing) → succeeded; neither → still upgrading,
   * until the local deadline passes.
   */
  private async reconcile(
    rollout: RolloutRecord,
    policy: Policy,
    listed: Set<number>,
    targets: readonly BuildTarget[],
    now: number,
  ) {
    const { results, slots, redis, keys } = this.deps;
    const open: CollectorResult[] = [];
    for await (const r of results.all(rollout.id)) if (r.state === 'reconciling') open.push(r);
    const unresolved = new Set(open.filter((r) => !listed.has(r.id)).map((r) => r.id));
    const other = targets.find((t) => t.version !== rollout.build)?.version;
    const versions =
      other && unresolved.size
        ? await observeVersions(this.deps.api, other, unresolved, policy.pageSize)
        : new Map();
    for (const r of open) {
      let next: CollectorResult | undefined;
      if (listed.has(r.id)) {
        next = {
          ...r,
          state: 'queued',
          message: 'an earlier task of unknown id ended without reaching the build',
        };
      } else if (versions.get(r.id) === rollout.build) {
        next = { ...r, state: 'succeeded', message: '', finishedAt: now };
      } else if (now - (r.reconcilingSince ?? now) > rollout.settings.taskTimeoutMs) {
        next = {
          ...r,
          state: 'timed_out',
          message: 'the task of unknown id did not end in time',
          finishedAt: now,
        };
      }
      if (!next || !(await results.put(rollout.id, next, 'reconciling'))) continue;
      await slots.release(rollout.id, r.id);
      if (next.state === 'queued') await redis.zadd(keys.waiting(rollout.id), 'NX', -now, String(r.id));
      else this.deps.onFinal?.(rollout.id, next);
      this.deps.logger.info({ rollout: rollout.id, collector: r.id, state: next.state }, 'reconciled');
    }
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
