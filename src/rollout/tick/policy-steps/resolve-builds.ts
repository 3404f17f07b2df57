/**
 * The first step of a policy's round: the build the policy's target names in each of its
 * organizations that answers (`latest`: each one's latest), those whose service has a problem
 * (they wait), and those that do not offer the target (said once, shown in `status` until offered,
 * their build lists read afresh when the target's next look is due: unoffered-targets.ts). Then
 * `latest-N`, `minAge` and the ring it follows (`after`) decide among the builds the target allows;
 * the current rollout goes on while a newer one waits (choose-build.ts). Undefined: no build now.
 */
import type { Policy } from '../../../policy/schema.js';
import type { CurrentRollout } from '../../life/index.js';
import { type BuildChoice, narrowResolution } from '../choose-build.js';
import { resolveTarget } from '../policy-settings.js';
import type { OrgPart } from '../tick-context.js';
import type { PolicyContext } from './policy-context.js';

export interface ResolvedBuilds {
  /** The build of the rollout. */
  build: string;
  choice: BuildChoice;
  /** The build of each organization that has one now. */
  builds: Record<string, string>;
  /** The organizations whose part goes on now, each with its client and its build list. */
  parts: OrgPart[];
}

type ResolveDeps = Pick<PolicyContext, 'orgService' | 'live' | 'unoffered' | 'chooser' | 'clock'>;

export async function resolveBuilds(
  ctx: ResolveDeps,
  policy: Policy,
  orgs: readonly string[],
  cur: CurrentRollout | undefined,
): Promise<ResolvedBuilds | undefined> {
  const { builds, parts, notOffered, offers, looked } = await offered(ctx, policy, orgs);
  if (notOffered.length)
    ctx.unoffered.notOffered(policy, { orgs: notOffered, covered: orgs, offers }, ctx.clock.now(), looked);
  else ctx.unoffered.offered(policy.name);
  if (Object.values(builds).length === 0) return undefined;
  const choice = await ctx.chooser.choose(policy, orgs, cur, ctx.live);
  if (choice.build === undefined) return undefined;
  narrowResolution(builds, parts, choice, cur?.rollout);
  return { build: choice.build, choice, builds, parts };
}

/** Each organization's build of the target, or the builds it offers instead. */
async function offered(ctx: ResolveDeps, policy: Policy, orgs: readonly string[]) {
  const { orgService } = ctx;
  const builds: Record<string, string> = {};
  const parts: OrgPart[] = [];
  const notOffered: string[] = [];
  const offers: string[] = [];
  const looked = ctx.unoffered.due(policy.name, ctx.clock.now());
  for (const org of orgs) {
    const targets = await orgService.builds(org, ctx.live, looked ? 0 : undefined);
    if (!targets) continue;
    const build = resolveTarget(policy.target, targets);
    if (!build) {
      notOffered.push(org);
      offers.push(...targets.map((t) => t.version));
      continue;
    }
    builds[org] = build;
    if (orgService.readable(org)) parts.push({ org, api: orgService.apis.get(org).client, targets });
  }
  return { builds, parts, notOffered, offers, looked };
}
