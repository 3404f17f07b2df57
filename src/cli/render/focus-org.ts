/**
 * `status --org NAME`: the fleet's status seen from one organization. The rollouts that cover it
 * (each with its combined counts, and of its organizations' parts only that one) and that
 * organization's problem, if it has one. An organization that neither the settings nor any
 * rollout names is a usage error that names the known ones.
 */
import { FleetError } from '../../lib/errors.js';
import type { FleetStatus } from '../../rollout/index.js';

export function focusOrg<S extends Pick<FleetStatus, 'rollouts' | 'orgProblems'>>(
  status: S,
  org: string,
  settingsOrgs: readonly string[],
): S {
  const known = [...new Set([...settingsOrgs, ...status.rollouts.flatMap((r) => r.byOrg.map((p) => p.org))])];
  if (!known.includes(org))
    throw new FleetError('FLEET_ERR_USAGE', `--org: no organization '${org}' (known: ${known.join(', ')})`);
  return {
    ...status,
    rollouts: status.rollouts
      .filter((r) => r.byOrg.some((p) => p.org === org))
      .map((r) => ({ ...r, byOrg: r.byOrg.filter((p) => p.org === org) })),
    orgProblems: status.orgProblems.filter((p) => p.org === org),
  };
}
