/**
 * The last step of a policy's round hands its rollout's pass to advance-rollout.ts: the rollout as
 * read, the organizations whose part goes on, and those that wait (their service has a problem, or
 * an operator paused them: `pause --org`), or whose problem one create probes now.
 */
import type { Policy } from '../../../policy/schema.js';
import type { CurrentRollout, RolloutDraft } from '../../life/index.js';
import type { RolloutPass } from '../tick-context.js';
import type { PolicyContext } from './policy-context.js';
import type { ResolvedBuilds } from './resolve-builds.js';

export function policyPass(
  ctx: Pick<PolicyContext, 'orgService'>,
  view: CurrentRollout,
  draft: RolloutDraft,
  round: {
    policy: Policy;
    resolved: ResolvedBuilds;
    orgs: readonly string[];
    earlier: readonly Policy[];
    now: number;
  },
): RolloutPass {
  const { orgService } = ctx;
  const { policy, orgs, earlier, now } = round;
  const parts = round.resolved.parts;
  return {
    policy,
    draft,
    counts: view.counts,
    slotsHeld: view.slotsHeld,
    ...(view.nextRetryAt === undefined ? {} : { nextRetryAt: view.nextRetryAt }),
    orgs: parts,
    waiting: new Set([
      ...orgs.filter((o) => !parts.some((p) => p.org === o) || orgService.waiting.has(o)),
      ...(draft.view.pausedOrgs ?? []).map((p) => p.org),
    ]),
    probes: new Set(orgs.filter((o) => orgService.probes.has(o))),
    earlier,
    now,
  };
}
