/**
 * A policy's compliance in one organization, from its selected Collectors counted by build
 * (tally-inventory.ts) and the build its target resolves to there: `compliant` on that build or
 * newer, `behind` on an older one, `unknown` whose build cannot be compared (no version, or one
 * summed as `other`), and, when the policy sets `minimumBuild`, `minimum` on that build or newer.
 * Collectors count whether alive or not: an offline Collector on an old build is behind. While
 * the target has not resolved (no rollout of the policy has started: disabled before its first
 * build, or the service does not offer it), every Collector is `unknown`. Pure.
 */
import { compareBuildVersions, isBuildVersion } from '../lib/version.js';
import type { PolicyTally } from './tally-inventory.js';

export interface ComplianceCounts {
  /** The policy's Collectors in the organization, installed, alive or not. */
  selected: number;
  compliant: number;
  behind: number;
  unknown: number;
  /** On or above `minimumBuild`; absent when the policy sets none. */
  minimum?: number;
}

/** The share kinds of `fleet_upgrade_compliance_ratio`. */
export const COMPLIANCE_KINDS = ['compliant', 'behind', 'unknown', 'minimum'] as const;
export type ComplianceKind = (typeof COMPLIANCE_KINDS)[number];

export function complianceOf(
  builds: PolicyTally['builds'],
  target: string | undefined,
  minimumBuild?: string,
): ComplianceCounts {
  const counts: ComplianceCounts = { selected: 0, compliant: 0, behind: 0, unknown: 0 };
  const resolved = target !== undefined && isBuildVersion(target) ? target : undefined;
  const minimum = minimumBuild !== undefined && isBuildVersion(minimumBuild) ? minimumBuild : undefined;
  if (minimum) counts.minimum = 0;
  for (const [build, [alive, offline]] of Object.entries(builds)) {
    const n = alive + offline;
    counts.selected += n;
    const known = isBuildVersion(build);
    if (!known || !resolved) counts.unknown += n;
    else if (compareBuildVersions(build, resolved) >= 0) counts.compliant += n;
    else counts.behind += n;
    if (minimum && known && compareBuildVersions(build, minimum) >= 0)
      counts.minimum = (counts.minimum ?? 0) + n;
  }
  return counts;
}

/** Each kind's share of the selected Collectors; undefined when none are selected. */
export function complianceRatios(
  counts: ComplianceCounts,
): Partial<Record<ComplianceKind, number>> | undefined {
  if (counts.selected === 0) return undefined;
  const share = (n: number) => n / counts.selected;
  return {
    compliant: share(counts.compliant),
    behind: share(counts.behind),
    unknown: share(counts.unknown),
    ...(counts.minimum === undefined ? {} : { minimum: share(counts.minimum) }),
  };
}
