/**
 * Policies whose target build the service does not offer (in some or all of their
 * organizations). Nothing of such a policy starts there until it is offered, so it is the daemon's
 * problem (problems/: `status`, `/readyz`, the metrics), said once in the log when it begins or
 * changes and once when it ends, never at every tick. The organizations' build lists are read
 * again with a growing back-off (5 s, doubling, at most the scan interval; clock time), so that a
 * build released at the service, or a corrected policy, is seen soon without a read per tick.
 *
 *   offered ──not offered──► problem (since, next look) ──looked, still not──► next look later
 *      ▲                            │  (another target, other organizations: a new problem, said)
 *      └──────── offered ───────────┘  (the policy disabled or removed: forgotten, unsaid)
 */
import type { Logger } from '../../lib/logger.js';
import { DEFAULT_ORG } from '../collector/index.js';
import type { ProblemSink } from '../problems/index.js';

/** The first look again after a target was found not offered (clock ms). */
export const FIRST_LOOK_MS = 5_000;
/** Builds named in a problem's sentence, at most (the newest). */
const OFFERS_SHOWN = 10;

const ID = 'target:';

interface Known {
  /** What the problem is (target, organizations, offers): a change is said again. */
  key: string;
  since: number;
  delayMs: number;
  nextAt: number;
}

export class UnofferedTargets {
  private readonly known = new Map<string, Known>();

  constructor(
    private readonly deps: { logger: Logger; problems?: ProblemSink | undefined },
    /** The longest wait between two looks (clock ms): the scan interval. */
    private readonly maxDelayMs: number,
  ) {}

  /** Whether the build lists of `policy`'s organizations are to be read afresh now. */
  due(policy: string, now: number): boolean {
    const k = this.known.get(policy);
    return k !== undefined && now >= k.nextAt;
  }

  /**
   * The target of `policy` is not offered in `orgs` of its `covered` organizations; `offers` the
   * builds their services list; `looked`: the lists were read afresh for it this tick.
   */
  notOffered(
    policy: { name: string; target: string },
    found: { orgs: readonly string[]; covered: readonly string[]; offers: readonly string[] },
    now: number,
    looked: boolean,
  ): void {
    const offers = [...new Set(found.offers)].slice(-OFFERS_SHOWN);
    const key = JSON.stringify([policy.target, found.orgs, offers]);
    const before = this.known.get(policy.name);
    let next: Known;
    if (!before || before.key !== key) {
      next = { key, since: before?.since ?? now, delayMs: FIRST_LOOK_MS, nextAt: now + FIRST_LOOK_MS };
      this.deps.logger.error(
        {
          policy: policy.name,
          target: policy.target,
          orgs: found.orgs,
          offers,
          nextLookInMs: FIRST_LOOK_MS,
        },
        'target build is not offered by the service; looking again with a growing back-off (status shows it)',
      );
    } else if (looked) {
      const delayMs = Math.min(Math.max(FIRST_LOOK_MS, this.maxDelayMs), before.delayMs * 2);
      next = { ...before, delayMs, nextAt: now + delayMs };
    } else next = before;
    this.known.set(policy.name, next);
    const everywhere = found.orgs.length === found.covered.length;
    const onlyDefault = found.covered.length === 1 && found.covered[0] === DEFAULT_ORG;
    const where = onlyDefault ? '' : ` in org ${found.orgs.join(', ')}`;
    const list = offers.length ? `it offers ${offers.join(', ')}` : 'it offers no build';
    this.deps.problems?.set(`${ID}${policy.name}`, {
      kind: 'target_not_offered',
      subject: policy.name,
      policy: policy.name,
      target: policy.target,
      orgs: [...found.orgs],
      offers,
      reason: `its target ${policy.target} is not offered by the service${where} (${list}); ${everywhere ? 'no rollout of it starts' : 'its part there waits'}`,
      fix: `set \`target:\` in its policy file to a build the service offers (or \`latest\`), or release ${policy.target} at the service`,
      since: next.since,
      nextCheckAt: next.nextAt,
    });
  }

  /** The target of `policy` is offered everywhere it covers. */
  offered(policy: string): void {
    const before = this.known.get(policy);
    if (!before) return;
    this.known.delete(policy);
    this.deps.problems?.clear(`${ID}${policy}`);
    this.deps.logger.info({ policy }, 'target build is offered now');
  }

  /** Forgets the policies not in `enabled` (disabled or removed: nothing of theirs waits for a build). */
  keepOnly(enabled: ReadonlySet<string>): void {
    for (const name of [...this.known.keys()]) {
      if (enabled.has(name)) continue;
      this.known.delete(name);
      this.deps.problems?.clear(`${ID}${name}`);
    }
  }
}
