import type { Policy } from '../../policy/schema.js';
import { policyOrgs } from '../../policy/select/select-collectors.js';
import {
  admits,
  type CurrentRollout,
  PAUSE_REASONS,
  RolloutDraft,
  type RolloutRecord,
} from '../life/index.js';
import { reconcileUnknownTasks } from '../listings/index.js';
import {
  lookedAtOneOff,
  OneOffPolicies,
  oneOffDue,
  parseOneOffRecord,
  parseOneOffs,
} from '../one-off/index.js';
import { carryOutRollback, expireRollouts, parseRollbackRequest } from '../operator/index.js';
import { advanceRollout } from './advance-rollout.js';
import { OrgService } from './org-service.js';
import { policyHash } from './policy-settings.js';
import { followAborted } from './policy-steps/follow-aborted.js';
import type { PolicyContext } from './policy-steps/policy-context.js';
import { policyPass } from './policy-steps/policy-pass.js';
import { resolveBuilds } from './policy-steps/resolve-builds.js';
import { startRollout } from './policy-steps/start-rollout.js';
import { takeSettings } from './policy-steps/take-settings.js';
import { repairJobs } from './repair-jobs.js';
import { TargetChooser } from './target-chooser.js';
import { ProblemTeller } from './tell-problems.js';
import { newTickMemory, type TickContext, type TickDeps } from './tick-context.js';
import { UnofferedTargets } from './unoffered-targets.js';
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
  private readonly orgs: OrgService;
  /** The live rollouts of this tick (told of an organization's problem). */
  private live: RolloutRecord[] = [];
  /** `minAge` and `after`: the build a policy goes to when its newest is held back (choose-build.ts). */
  private readonly chooser: TargetChooser;

  private readonly oneOffs: OneOffPolicies;
  /** Policies whose target the service does not offer: looked at again with a back-off. */
  private readonly unoffered: UnofferedTargets;
  /** The daemon's problems that lasted 5 minutes, told as events, and their end. */
  private readonly teller: ProblemTeller;

  constructor(private readonly deps: SchedulerDeps) {
    this.oneOffs = new OneOffPolicies(deps.redis, deps.keys);
    this.orgs = new OrgService(deps, this.scanEvery);
    this.chooser = new TargetChooser(deps, this.orgs, this.memory);
    this.unoffered = new UnofferedTargets(deps, this.scanEvery);
    this.teller = new ProblemTeller(deps);
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
      orgFailed: (org, err) => this.orgs.failed(org, err, this.live),
      probed: (org, rolloutId, key) => this.orgs.probed(org, rolloutId, key),
    };
  }

  /**
   * One round over every policy. Errors of one policy do not stop the others. A Collector
   * selected by several enabled policies belongs to the first of them (in file order).
   */
  /** Clock ms until the earliest thing the last round saw due later (undefined: nothing known). */
  dueInMs(): number | undefined {
    const at = this.memory.nextDueAt;
    return Number.isFinite(at) ? Math.max(0, at - this.deps.clock.now()) : undefined;
  }

  async tick(filePolicies: readonly Policy[]): Promise<void> {
    const { rollouts, clock } = this.deps;
    this.memory.nextDueAt = Number.POSITIVE_INFINITY;
    const { current, followed, oneOffs: rawOneOffs, rollbackRequests } = await rollouts.readTick();
    this.live = [...current.values()].map((c) => c.rollout);
    await this.guarded('*', () => this.orgs.refresh(this.live));
    // One-off rollouts come first (an operator's explicit request wins), until they are done; one
    // that could not start is looked at again only when its next look is due (one-off/one-off-starts.ts).
    const oneOffs = parseOneOffs(rawOneOffs, this.deps.logger).filter((p) => {
      const phase = current.get(p.name)?.rollout.phase;
      if (phase === undefined) return oneOffDue(parseOneOffRecord(rawOneOffs[p.name]), clock.now());
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
    // One-offs: why one could not start, or which Collectors it names its first scan did not find.
    for (const p of oneOffs)
      await this.guarded(p.name, () =>
        lookedAtOneOff(
          {
            ...this.deps,
            oneOffs: this.oneOffs,
            builds: (org) => this.orgs.builds(org, this.live),
            client: (org) => (this.orgs.readable(org) ? this.orgs.apis.get(org).client : undefined),
          },
          p,
          rawOneOffs[p.name],
          policyOrgs(p, this.orgs.apis.names),
          clock.now(),
        ),
      );
    this.unoffered.keepOnly(new Set(enabled.map((p) => p.name)));
    const problems = this.deps.problems;
    if (problems?.entries) {
      const open = problems.entries();
      await this.guarded('*', () => this.teller.step(open, this.live, clock.now()));
    }
    await this.guarded('*', () => this.chooser.keepOnly(new Set(enabled.map((p) => p.name))));
    for (const f of followed) await this.guarded(f.rollout.policy, () => this.followSuperseded(f, now));
    // Retention, looked at every ten minutes of clock time.
    if (now - this.lastExpiry >= 10 * 60_000) {
      this.lastExpiry = now;
      await this.guarded('*', () =>
        expireRollouts(this.deps, this.deps.retentionMs ?? DEFAULT_RETENTION_MS, now),
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
      const parts = await this.orgs.partsOf(source, this.live);
      const carried = await carryOutRollback({ ...this.deps, oneOffs: this.oneOffs }, source, request, {
        ...(policy ? { policy } : {}),
        targets: (org) => parts.find((p) => p.org === org)?.targets,
        now,
      });
      // An organization it needs has a problem: the request waits for a later tick.
      if (carried === 'wait') return;
    } else
      this.deps.logger.error(
        { rollout: sourceId },
        'rollback request unreadable or its rollout gone; dropped',
      );
    await this.deps.rollouts.rollbacks.done(sourceId, json);
  }

  private async guarded(policy: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.deps.logger.error({ policy, err: (err as Error).message }, 'scheduler pass failed');
    }
  }

  /** The context of a policy's round (policy-steps/policy-context.ts). */
  private get policyCtx(): PolicyContext {
    return {
      ...this.ctx,
      orgService: this.orgs,
      chooser: this.chooser,
      unoffered: this.unoffered,
      oneOffs: this.oneOffs,
      live: this.live,
      reconcileNow: (rollout, now, pageSize) => this.reconcileNow(rollout, now, pageSize),
      verifyNow: (cur, now, pageSize) => this.verifyNow(cur, now, pageSize),
    };
  }

  /** Resolves tasks of unknown id of a rollout that no longer moves on, now and then. */
  private async reconcileNow(rollout: RolloutRecord, now: number, pageSize: number) {
    const ctx = this.ctx;
    if (now - (this.memory.lastScan.get(rollout.id) ?? 0) < ctx.reconcileEveryMs) return;
    this.memory.lastScan.set(rollout.id, now);
    for (const part of await this.orgs.partsOf(rollout, this.live))
      await this.orgPart(part.org, () =>
        reconcileUnknownTasks({ ...ctx, api: part.api }, rollout, {
          pageSize,
          targets: part.targets,
          org: part.org,
        }),
      );
  }

  /** Runs one organization's part; an error of the organization makes it wait, others are thrown. */
  private async orgPart(org: string, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (err) {
      if (!(await this.orgs.failed(org, err, this.live))) throw err;
    }
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
    const parts = await this.orgs.partsOf(cur.rollout, this.live);
    await listingDue(this.ctx, cur.rollout, cur.counts, parts, pageSize, now);
  }

  /** A superseded rollout is followed until its tasks of unknown id are resolved (they keep their slots). */
  private async followSuperseded(f: CurrentRollout, now: number) {
    if ((f.counts.reconciling ?? 0) === 0) await this.deps.rollouts.follow(f.rollout.id, false);
    else await this.reconcileNow(f.rollout, now, 1000);
  }

  /**
   * One policy's round, in order: the build its target names in each organization (policy-steps/),
   * its aborted rollout followed while it stays aborted, the rollout of a new build started (and
   * the one it replaces superseded), its edited settings taken and a policy pause ended, the ring
   * it follows, then the rollout moved on (advance-rollout.ts). Answers the rollout as it stands.
   */
  async tickPolicy(
    policy: Policy,
    cur: CurrentRollout | undefined,
    earlier: readonly Policy[] = [],
  ): Promise<RolloutRecord | undefined> {
    const ctx = this.policyCtx;
    const orgs = policyOrgs(policy, this.orgs.apis.names);
    if (orgs.length === 0) {
      const known = this.orgs.apis.names;
      ctx.logger.error(
        { policy: policy.name, orgs: policy.orgs, known },
        'the policy covers no organization of the settings',
      );
      return undefined;
    }
    const resolved = await resolveBuilds(ctx, policy, orgs, cur);
    if (!resolved) return undefined;
    const now = ctx.clock.now();
    const aborted = { build: resolved.build, hash: policyHash(policy), pageSize: policy.pageSize, now };
    if (cur && (await followAborted(ctx, cur, aborted))) return cur.rollout;
    const view =
      cur && cur.rollout.build === resolved.build
        ? cur
        : await startRollout(ctx, policy, resolved, { orgs, now });
    if (!view) return undefined;
    const draft = new RolloutDraft(view.rollout);
    await takeSettings(ctx, draft, policy, { counts: view.counts, builds: resolved.builds, orgs, now });
    await this.chooser.follow(draft, policy, resolved.choice, now);
    await advanceRollout(ctx, policyPass(ctx, view, draft, { policy, resolved, orgs, earlier, now }));
    return draft.view;
  }
}
