/**
 * The scheduler's view of each organization's service: its build list (read once per scan
 * interval), its health (orgs/org-health.ts) and the probes that find a sick one well again.
 * A call of an organization that fails in an organization-wide way (credentials refused, the
 * service down, 429 storms, answers that do not match the interface) is that organization's
 * problem: its part of every rollout waits, and each rollout that covers it is told
 * (`org.waiting`, then `org.recovered`), while the other organizations go on.
 */
import type { BuildTarget } from '../../api/index.js';
import { keyFromMember } from '../collector/index.js';
import { orgsOf, type RolloutRecord } from '../life/index.js';
import { describeOrgProblem, OrgHealth, type OrgProblem, orgProblemOf } from '../orgs/index.js';
import { PROBLEM_TTL_MS } from '../problems/index.js';
import { type OrgApiSet, type OrgPart, orgApis, type TickDeps } from './tick-context.js';

export class OrgService {
  readonly apis: OrgApiSet;
  private readonly health: OrgHealth;
  private readonly lists = new Map<string, { at: number; builds: BuildTarget[] }>();
  private problems = new Map<string, OrgProblem>();

  constructor(
    private readonly deps: Pick<
      TickDeps,
      'api' | 'apis' | 'redis' | 'keys' | 'rollouts' | 'store' | 'clock' | 'logger' | 'problems'
    >,
    private readonly scanEveryMs: number,
  ) {
    this.apis = orgApis(deps);
    // A daemon that reports its problems keeps them alive: they expire with it.
    this.health = new OrgHealth(deps.redis, deps.keys, deps.problems ? PROBLEM_TTL_MS : undefined);
  }

  /**
   * The organizations whose Collectors are not admitted now: those with a problem, but for one
   * whose create probe is due (one of its Collectors is let through: `probes`).
   */
  get waiting(): ReadonlySet<string> {
    const due = this.probes;
    return new Set([...this.problems.keys()].filter((org) => !due.has(org)));
  }

  /** Organizations whose problem is probed by one create, now due. */
  get probes(): ReadonlySet<string> {
    const now = this.deps.clock.now();
    return new Set(
      [...this.problems].filter(([, p]) => p.probe === 'create' && now >= p.nextProbeAt).map(([org]) => org),
    );
  }

  /** One Collector of `org` was let through as its create probe. */
  async probed(org: string, rolloutId: string, key: string): Promise<void> {
    await this.health.probing(org, rolloutId, key, this.deps.clock.now());
    const stored = (await this.health.problems()).get(org);
    if (stored) this.problems.set(org, stored);
  }

  problemOf(org: string): OrgProblem | undefined {
    return this.problems.get(org);
  }

  /**
   * At the start of a tick: reads every organization's health, and probes those whose problem is
   * due for a look (their build list: a success ends the problem). `rollouts` are told.
   */
  async refresh(rollouts: readonly RolloutRecord[]): Promise<void> {
    this.problems = await this.health.problems();
    const now = this.deps.clock.now();
    for (const [org, problem] of this.problems) {
      if (!this.apis.names.includes(org)) {
        // An organization no longer in the settings: nothing waits for it.
        await this.health.clear(org);
        this.problems.delete(org);
        continue;
      }
      if (problem.probe === 'create') {
        // Its probe is a create: the Collector let through tells whether it is allowed again.
        if (await this.createProbeWorked(problem)) await this.recovered(org, rollouts);
        continue;
      }
      if (now < problem.nextProbeAt) continue;
      try {
        const builds = await this.apis.get(org).client.listTargets();
        this.lists.set(org, { at: now, builds });
        await this.recovered(org, rollouts);
      } catch (err) {
        const found = orgProblemOf(err) ?? { kind: 'unavailable' as const, reason: (err as Error).message };
        const { problem: stored } = await this.health.report(org, found, now, true);
        this.problems.set(org, stored);
      }
    }
  }

  /**
   * An organization's builds, read once per scan interval (clock time): a new latest build starts
   * its rollout within one scan interval, and the build list costs no more than the scans. While
   * the organization has a problem, the list last read (or none). `maxAgeMs`: read afresh when
   * the list is older (default the scan interval).
   */
  async builds(
    org: string,
    rollouts: readonly RolloutRecord[],
    maxAgeMs = this.scanEveryMs,
  ): Promise<BuildTarget[] | undefined> {
    const now = this.deps.clock.now();
    const cached = this.lists.get(org);
    if (!this.readable(org) || (cached && now - cached.at < maxAgeMs)) return cached?.builds;
    try {
      const builds = await this.apis.get(org).client.listTargets();
      this.lists.set(org, { at: now, builds });
      return builds;
    } catch (err) {
      if (!(await this.failed(org, err, rollouts))) throw err;
      return cached?.builds;
    }
  }

  /**
   * The part of each organization of `orgs` whose listings are read now: its client and its
   * builds (an organization whose only problem is its creates is still read).
   */
  async parts(orgs: readonly string[], rollouts: readonly RolloutRecord[]): Promise<OrgPart[]> {
    const parts: OrgPart[] = [];
    for (const org of orgs) {
      if (!this.apis.names.includes(org) || !this.readable(org)) continue;
      const targets = await this.builds(org, rollouts);
      if (targets && this.readable(org)) parts.push({ org, api: this.apis.get(org).client, targets });
    }
    return parts;
  }

  /** Whether the organization's listings can be read (no problem, or one of its creates only). */
  readable(org: string): boolean {
    const p = this.problems.get(org);
    return p === undefined || p.probe === 'create';
  }

  /** Whether the Collector let through as a create probe got its task (the create was allowed). */
  private async createProbeWorked(problem: OrgProblem): Promise<boolean> {
    if (!problem.probeOf) return false;
    const r = await this.deps.store.get(problem.probeOf.rolloutId, keyFromMember(problem.probeOf.key));
    return r?.taskId !== undefined && (r.createSentAt ?? 0) > problem.since;
  }

  /** The parts of a rollout's organizations (for the passes of a rollout that admits nothing). */
  partsOf(rollout: RolloutRecord, rollouts: readonly RolloutRecord[]): Promise<OrgPart[]> {
    return this.parts(orgsOf(rollout), rollouts);
  }

  /**
   * A call of `org` failed. When the error is the organization's (not one Collector's), it is
   * recorded as its problem, the rollouts that cover it are told once, and the answer is true.
   */
  async failed(org: string, err: unknown, rollouts: readonly RolloutRecord[]): Promise<boolean> {
    const found = orgProblemOf(err);
    if (!found) return false;
    const now = this.deps.clock.now();
    const { problem, started } = await this.health.report(org, found, now);
    this.problems.set(org, problem);
    if (started) {
      this.deps.logger.warn({ org, reason: problem.reason }, 'organization waits');
      await this.tell(rollouts, org, problem, 'org.waiting');
    }
    return true;
  }

  /** A rollout that starts while some of its organizations wait is told, as the others were. */
  async started(rollout: RolloutRecord): Promise<void> {
    for (const org of orgsOf(rollout)) {
      const problem = this.problems.get(org);
      if (problem) await this.tell([rollout], org, problem, 'org.waiting');
    }
  }

  private async recovered(org: string, rollouts: readonly RolloutRecord[]): Promise<void> {
    const problem = await this.health.clear(org);
    this.problems.delete(org);
    if (!problem) return;
    this.deps.logger.info({ org, after: describeOrgProblem(org, problem) }, 'organization answers again');
    await this.tell(rollouts, org, problem, 'org.recovered');
  }

  /** Records the organization's news in the history of each live rollout that covers it. */
  private async tell(
    rollouts: readonly RolloutRecord[],
    org: string,
    problem: OrgProblem,
    type: 'org.waiting' | 'org.recovered',
  ): Promise<void> {
    const now = this.deps.clock.now();
    for (const r of rollouts) {
      if (!['running', 'paused', 'halted'].includes(r.phase) || !orgsOf(r).includes(org)) continue;
      await this.deps.rollouts.write(
        r,
        { news: [{ type, source: 'scheduler', org, reason: problem.reason, since: problem.since }] },
        now,
      );
    }
  }
}
