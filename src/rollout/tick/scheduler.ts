/**
 * The scheduler (run by the one leader) decides when things run. Each tick reads every policy's
 * current rollout with its counts and slots once (two round trips), then per policy in file order:
 * - a disabled policy pauses its rollout (`paused (policy disabled)`), a removed one too
 *   (`paused (policy removed)`); a policy enabled again un-pauses it;
 * - the target resolves to a build; a new build starts a new rollout and supersedes the old one
 *   (not after an abort, until the policy changes or the aborted rollout is resumed);
 * - the rollout moves on (advance-rollout.ts): scans, the gates, the waves, admission,
 *   convergence.
 * Scans are the only API calls (besides reading the build list once per scan interval); the rest
 * is a few Redis round trips per tick, whatever the size of the fleet. What happens is recorded
 * with each change, in the rollout's history and the outbox of notifications (life/).
 */
import type { BuildTarget } from '../../api/index.js';
import { maxInFlightOf, resolveMaxInFlight } from '../../policy/max-in-flight.js';
import type { Policy } from '../../policy/schema.js';
import { COLLECTOR_STATES, sumStates } from '../collector/index.js';
import {
  admits,
  type CurrentRollout,
  isPolicyPause,
  PAUSE_REASONS,
  RolloutDraft,
  type RolloutRecord,
} from '../life/index.js';
import { reconcileUnknownTasks } from '../listings/index.js';
import {
  abortWaiting,
  carryOutRollback,
  expireRollouts,
  isOneOffPolicy,
  OneOffPolicies,
  parseOneOffs,
  parseRollbackRequest,
  rollbackSource,
  supersedeRollout,
} from '../operator/index.js';
import { advanceRollout } from './advance-rollout.js';
import { policyHash, resolveTarget, settingsOf } from './policy-settings.js';
import { repairJobs } from './repair-jobs.js';
import { newTickMemory, type TickContext, type TickDeps } from './tick-context.js';
import { listingDue } from './watch-step.js';

export { MAX_BACKOFF_MS, policyHash, resolveTarget, settingsOf } from './policy-settings.js';

/** Finished rollouts are removed this long after they finished, unless the daemon says otherwise. */
export const DEFAULT_RETENTION_MS = 30 * 86_400_000;

/** What the scheduler is given (the tick's dependencies). */
export type SchedulerDeps = TickDeps;

export class Scheduler {
  private readonly memory = newTickMemory();
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

  /** The tick's context: the scheduler's dependencies, its memory and its pace. */
  private get ctx(): TickContext {
    return {
      ...this.deps,
      memory: this.memory,
      scanEveryMs: this.scanEvery,
      reconcileEveryMs: Math.min(this.scanEvery, 30_000),
    };
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
        expireRollouts(this.deps, this.deps.redis, this.deps.retentionMs ?? DEFAULT_RETENTION_MS, now),
      );
    }
    if (Date.now() - this.lastRepair >= (this.deps.repairIntervalMs ?? 15_000)) {
      this.lastRepair = Date.now();
      await this.guarded('*', () => repairJobs(this.deps, current.keys()));
    }
  }

  /** Carries out a rollback request (operator/rollback.ts): one-off rollouts that start at the next tick. */
  private async rollback(sourceId: string, json: string, policies: readonly Policy[], now: number) {
    const request = parseRollbackRequest(json);
    const source = await this.deps.rollouts.get(sourceId);
    if (request && source) {
      const policy = policies.find((p) => p.name === source.policy);
      await carryOutRollback({ ...this.deps, oneOffs: this.oneOffs }, source, request, {
        ...(policy ? { policy } : {}),
        targets: await this.builds(),
        now,
      });
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
    const ctx = this.ctx;
    if (now - (this.memory.lastScan.get(rollout.id) ?? 0) < ctx.reconcileEveryMs) return;
    this.memory.lastScan.set(rollout.id, now);
    await reconcileUnknownTasks(ctx, rollout, { pageSize, targets: await this.builds() });
  }

  /**
   * A rollout whose policy is disabled or gone admits nothing; its tasks under way are followed
   * to their end by the workers, and its tasks of unknown id resolved from the listings here.
   */
  private async followPaused(cur: CurrentRollout, reason: string, now: number, pageSize: number) {
    const { rollout, counts } = cur;
    if (admits(rollout.phase)) {
      const news = [{ type: 'rollout.paused' as const, source: 'policy' as const, reason }];
      if (await this.deps.rollouts.move(rollout, 'pause', now, { reason, news }))
        this.deps.logger.warn({ rollout: rollout.id, reason }, 'rollout paused');
    }
    if ((counts.reconciling ?? 0) > 0) await this.reconcileNow(rollout, now, pageSize);
    await this.verifyNow(cur, now, pageSize);
  }

  /**
   * Verification, and the watching of tasks under way, go on in a rollout that admits nothing
   * (paused, aborted): they only read listings.
   */
  private async verifyNow(cur: CurrentRollout, now: number, pageSize: number) {
    await listingDue(this.ctx, cur.rollout, cur.counts, await this.builds(), pageSize, now);
  }

  /** A superseded rollout is followed until its tasks of unknown id are resolved (they keep their slots). */
  private async followSuperseded(f: CurrentRollout, now: number) {
    if ((f.counts.reconciling ?? 0) === 0) await this.deps.rollouts.follow(f.rollout.id, false);
    else await this.reconcileNow(f.rollout, now, 1000);
  }

  /**
   * One policy's round: its rollout of the build its target names (started, and the one it
   * replaces superseded, when the build is new), its edited settings taken, un-paused when its
   * policy is back, then moved on (advance-rollout.ts). Answers the rollout as it stands.
   */
  async tickPolicy(
    policy: Policy,
    cur: CurrentRollout | undefined,
    earlier: readonly Policy[] = [],
  ): Promise<RolloutRecord | undefined> {
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
      const source = rollbackSource(policy);
      const { rollout, replaced } = await rollouts.start(
        policy.name,
        policy.target,
        build,
        policy.maxInFlight,
        settings,
        now,
        { patch: { policyHash: hash, ...(source ? { rollbackOf: source } : {}) }, tell: true },
      );
      if (replaced) await supersedeRollout(this.deps, replaced, rollout.id, now);
      if (rollout.phase === 'superseded') await rollouts.move(rollout, 'restart', now);
      [view] = await rollouts.readMany([rollout.id]);
      if (!view) return undefined;
      logger.info({ rollout: rollout.id, policy: policy.name, build, replaced }, 'rollout started');
      if (policy.target !== build && isOneOffPolicy(policy)) await this.oneOffs.pin(policy.name, build);
    }
    const draft = new RolloutDraft(view.rollout);
    const r = draft.view;
    // The limit as the policy says it for the Collectors found so far (a share grows with them).
    const limit = resolveMaxInFlight(maxInFlightOf(policy), sumStates(view.counts, COLLECTOR_STATES));
    if (
      r.maxInFlight !== limit ||
      r.target !== policy.target ||
      r.policyHash !== hash ||
      JSON.stringify(r.settings) !== JSON.stringify(settings)
    ) {
      // Written at once: the jobs this tick admits read the settings.
      draft.set({ maxInFlight: limit, target: policy.target, settings, policyHash: hash });
      await draft.flush(rollouts, now, logger);
    }
    if (r.phase === 'paused' && isPolicyPause(r.pauseReason)) {
      const news = [
        { type: 'rollout.resumed' as const, source: 'policy' as const, released: 'policy' as const },
      ];
      if (await draft.move(rollouts, 'unpause', now, { news }))
        logger.info({ rollout: r.id }, 'rollout running again: its policy is enabled');
    }
    await advanceRollout(this.ctx, {
      policy,
      draft,
      counts: view.counts,
      slotsHeld: view.slotsHeld,
      targets,
      earlier,
      now,
    });
    return draft.view;
  }
}
