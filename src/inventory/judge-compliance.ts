/**
 * Each policy's compliance in one organization, as the inventory's leader judges it at every
 * round: the counts of its last pass (tally-inventory.ts) against the build its target resolves
 * to now. That build is the one the scheduler resolved: the policy's current rollout's build in
 * the organization (`latest`, `latest-N`, `minAge` and the rings all resolve there, once); a
 * policy with no rollout yet has one only when its target is a fixed build. `belowSince` carries
 * the time since which the compliant share has been below the policy's `complianceAlert.below`
 * at every judgement, so that an alert can hold for days across restarts of Prometheus and of
 * the daemon (it is in Redis). Pure.
 */
import type { Policy } from '../policy/schema.js';
import { parseTarget } from '../policy/target.js';
import { buildOf, orgsOf, type RolloutRecord } from '../rollout/index.js';
import { complianceOf } from './compliance.js';
import type { InventoryCompliance, OrgInventory, PolicyCompliance } from './inventory-store.js';

/** The build `policy`'s target resolves to in `org`, and where that comes from. */
export function complianceTarget(
  policy: Pick<Policy, 'target'>,
  current: Pick<RolloutRecord, 'build' | 'builds' | 'orgs'> | undefined,
  org: string,
): Pick<PolicyCompliance, 'target' | 'targetFrom'> {
  if (current && orgsOf(current).includes(org))
    return { target: buildOf(current, org), targetFrom: 'rollout' };
  const spec = parseTarget(policy.target);
  if (spec?.kind === 'build') return { target: spec.build, targetFrom: 'policy' };
  return { target: null, targetFrom: null };
}

export interface JudgeInput {
  inventory: OrgInventory;
  policies: readonly Policy[];
  /** Each policy's current rollout (policy name → its record). */
  current: ReadonlyMap<string, Pick<RolloutRecord, 'build' | 'builds' | 'orgs'>>;
  now: number;
}

/** The organization's compliance now, or undefined before its first complete pass. */
export function judgeCompliance(input: JudgeInput): InventoryCompliance | undefined {
  const { inventory, now } = input;
  const pass = inventory.pass;
  if (!pass) return undefined;
  const before = inventory.compliance?.policies ?? {};
  const policies: Record<string, PolicyCompliance> = {};
  for (const policy of input.policies) {
    const tally = pass.policies[policy.name];
    if (!tally) continue;
    const { minimumBuild, complianceAlert } = policy;
    const target = complianceTarget(policy, input.current.get(policy.name), inventory.org);
    const counts = complianceOf(tally.builds, target.target ?? undefined, minimumBuild);
    const judged: PolicyCompliance = {
      targetText: policy.target,
      ...target,
      ...(minimumBuild ? { minimumBuild } : {}),
      counts,
    };
    if (complianceAlert) {
      judged.alert = { below: complianceAlert.below, forMs: complianceAlert.for };
      const below =
        target.target !== null &&
        counts.selected > 0 &&
        counts.compliant / counts.selected < complianceAlert.below;
      if (below) judged.belowSince = before[policy.name]?.belowSince ?? now;
    }
    policies[policy.name] = judged;
  }
  return { at: now, passAt: pass.at, policies };
}

/** Whether two judgements say the same (their time aside): an unchanged one need not be written. */
export function sameCompliance(a: InventoryCompliance | undefined, b: InventoryCompliance): boolean {
  return (
    a !== undefined && a.passAt === b.passAt && JSON.stringify(a.policies) === JSON.stringify(b.policies)
  );
}
