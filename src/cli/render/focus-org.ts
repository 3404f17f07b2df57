/**
 * `status --org NAME`: the fleet's status seen from one organization. The rollouts that cover it
 * and hold some of its Collectors (or wait on its service), each with that organization's part
 * only: its counts, progress and in-flight stand for the rollout's (the table, `--json`'s
 * `total`), and of its organizations' parts only that one; and that organization's problem, if it
 * has one. A rollout whose Collectors are all in other organizations is left out. An organization
 * that neither the settings nor any rollout names is a usage error that names the known ones.
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
    rollouts: status.rollouts.flatMap((r) => {
      const part = r.byOrg.find((p) => p.org === org);
      // Covered, but none of its Collectors are there (another organization's canary): not its.
      if (!part || (part.total === 0 && part.waiting === undefined && r.total > 0)) return [];
      const { counts, inflight, total, done } = part;
      return [{ ...r, counts, inflight, total, done, byOrg: [part] }];
    }),
    orgProblems: status.orgProblems.filter((p) => p.org === org),
  };
}
