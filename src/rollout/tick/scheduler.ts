/**
 * The scheduler (run by the one leader) decides when things run. Each tick reads every policy's
 * current rollout with its counts and slots once (two round trips), and each organization's
 * health (a sick one is probed: org-service.ts), then per policy in file order:
 * - a disabled policy pauses its rollout (`paused (policy disabled)`), a removed one too
 *   (`paused (policy removed)`); a policy enabled again un-pauses it;
 * - the target resolves to a build in each organization the policy covers (`latest` in each one's
 *   build list); the rollout's build is the target's, or the newest of its organizations'; a new
 *   build starts a new rollout and supersedes the old one (not after an abort, until the policy
 *   changes or the aborted rollout is resumed);
 * - the rollout moves on (advance-rollout.ts): scans, the gates, the waves, admission,
 *   convergence.
 * Scans are the only API calls (besides reading the build list once per scan interval); the rest
 * is a few Redis round trips per tick, whatever the size of the fleet. What happens is recorded
 * with each change, in the rollout's history and the outbox of notifications (life/).
 */
import { maxInFlightOf, resolveMaxInFlight } from '../../policy/max-in-flight.js';
import type { Policy } from '../../policy/schema.js';
import { policyOrgs } from '../../policy/select/select-collectors.js';
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
  oneOffDue,
  parseOneOffRecord,
  parseOneOffs,
  parseRollbackRequest,
  rollbackSource,
  supersedeRollout,
} from '../operator/index.js';
import { advanceRollout } from './advance-rollout.js';
import { narrowResolution } from './choose-build.js';
import { lookedAtOneOff } from './one-off-starts.js';
import { OrgService } from './org-service.js';
import { policyHash, resolveTarget, settingsOf } from './policy-settings.js';
import { repairJobs } from './repair-jobs.js';
import { TargetChooser } from './target-chooser.js';
import { ProblemTeller } from './tell-problems.js';
import { newTickMemory, type OrgPart, type TickContext, type TickDeps } from './tick-context.js';
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
    // that could not start is looked at again only when its next look is due (one-off-starts.ts).
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
   * The build the policy's target names in each of its organizations that answers (`latest`:
   * each one's latest), those whose service has a problem (they wait), and those that do not
   * offer the target (with the builds they offer). Their build lists are read afresh when the
   * target's next look is due (unoffered-targets.ts).
   */
  private async resolve(policy: Policy, orgs: readonly string[]) {
    const builds: Record<string, string> = {};
    const parts: OrgPart[] = [];
    const notOffered: string[] = [];
    const offers: string[] = [];
    const looked = this.unoffered.due(policy.name, this.deps.clock.now());
    for (const org of orgs) {
      const targets = await this.orgs.builds(org, this.live, looked ? 0 : undefined);
      if (!targets) continue;
      const build = resolveTarget(policy.target, targets);
      if (!build) {
        notOffered.push(org);
        offers.push(...targets.map((t) => t.version));
        continue;
      }
      builds[org] = build;
      if (this.orgs.readable(org)) parts.push({ org, api: this.orgs.apis.get(org).client, targets });
    }
    return { builds, parts, notOffered, offers, looked };
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
    const orgs = policyOrgs(policy, this.orgs.apis.names);
    if (orgs.length === 0) {
      logger.error(
        { policy: policy.name, orgs: policy.orgs, known: this.orgs.apis.names },
        'the policy covers no organization of the settings',
      );
      return undefined;
    }
    const { builds, parts, notOffered, offers, looked } = await this.resolve(policy, orgs);
    // Said once, shown in `status` until offered, looked at again with a back-off.
    if (notOffered.length)
      this.unoffered.notOffered(policy, { orgs: notOffered, covered: orgs, offers }, clock.now(), looked);
    else this.unoffered.offered(policy.name);
    const resolved = Object.values(builds);
    if (resolved.length === 0) return undefined;
    // `latest-N`, `minAge` and the ring it follows (`after`) decide among the builds the target
    // allows; the current rollout goes on while a newer one waits (choose-build.ts).
    const choice = await this.chooser.choose(policy, orgs, cur, this.live);
    if (choice.build === undefined) return undefined;
    narrowResolution(builds, parts, choice, cur?.rollout);
    const build = choice.build;
    const now = clock.now();
    const settings = settingsOf(policy);
    const hash = policyHash(policy);
    const where = { builds, orgs };
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
      await this.chooser.started(policy, build, choice);
      const source = rollbackSource(policy);
      const { rollout, replaced } = await rollouts.start(
        policy.name,
        policy.target,
        build,
        policy.maxInFlight,
        settings,
        now,
        { patch: { policyHash: hash, ...where, ...(source ? { rollbackOf: source } : {}) }, tell: true },
      );
      if (replaced) await supersedeRollout(this.deps, replaced, rollout.id, now);
      if (rollout.phase === 'superseded') await rollouts.move(rollout, 'restart', now);
      [view] = await rollouts.readMany([rollout.id]);
      if (!view) return undefined;
      logger.info({ rollout: rollout.id, policy: policy.name, build, replaced }, 'rollout started');
      this.live.push(view.rollout);
      await this.orgs.started(view.rollout);
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
      JSON.stringify(r.settings) !== JSON.stringify(settings) ||
      JSON.stringify(r.builds) !== JSON.stringify({ ...r.builds, ...builds }) ||
      JSON.stringify(r.orgs) !== JSON.stringify(orgs)
    ) {
      // An organization's build moved on (its build list offers a newer latest): scan now, so that
      // its Collectors not sent yet go to the new build (`retarget`) before this tick admits any.
      if (Object.entries(builds).some(([org, b]) => r.builds?.[org] !== undefined && r.builds[org] !== b))
        this.memory.lastScan.delete(r.id);
      // Written at once: the jobs this tick admits read the settings. An organization that waits
      // keeps the build it had.
      draft.set({
        maxInFlight: limit,
        target: policy.target,
        settings,
        policyHash: hash,
        builds: { ...r.builds, ...builds },
        orgs,
      });
      await draft.flush(rollouts, now, logger);
    }
    if (r.phase === 'paused' && isPolicyPause(r.pauseReason)) {
      const news = [
        { type: 'rollout.resumed' as const, source: 'policy' as const, released: 'policy' as const },
      ];
      if (await draft.move(rollouts, 'unpause', now, { news }))
        logger.info({ rollout: r.id }, 'rollout running again: its policy is enabled');
    }
    await this.chooser.follow(draft, policy, choice, now);
    await advanceRollout(this.ctx, {
      policy,
      draft,
      counts: view.counts,
      slotsHeld: view.slotsHeld,
      ...(view.nextRetryAt === undefined ? {} : { nextRetryAt: view.nextRetryAt }),
      orgs: parts,
      // Organizations whose service has a problem, or that an operator paused (`pause --org`), wait.
      waiting: new Set([
        ...orgs.filter((o) => !parts.some((p) => p.org === o) || this.orgs.waiting.has(o)),
        ...(draft.view.pausedOrgs ?? []).map((p) => p.org),
      ]),
      probes: new Set(orgs.filter((o) => this.orgs.probes.has(o))),
      earlier,
      now,
    });
    return draft.view;
  }
}
