/**
 * The fleet as the gauges read it at a scrape (src/rollout's readFleetStatus gives it), and the
 * organizations' health as the gauges show it: every organization that a rollout covers or that
 * has a problem, up or not, with its problem's kind. Every kind has a series per organization (1
 * for the kind of the problem it has now, 0 for the others), as every phase has one per rollout:
 * the series exist before anything goes wrong, which an alert's `for` and the dashboard's
 * numbered kinds need.
 */
import type { OrgProblemKind } from '../rollout/index.js';
import type { HoldsSource } from './rollout-holds.js';

/** Every kind of an organization's problem (src/rollout/orgs/org-health.ts). */
const KINDS = {
  credentials: true,
  unavailable: true,
  rate_limited: true,
  malformed: true,
  unreachable: true,
} as const satisfies Record<OrgProblemKind, true>;
export const ORG_PROBLEM_KINDS = Object.keys(KINDS) as OrgProblemKind[];

/** One organization's part of a rollout. */
export interface OrgPart {
  org: string;
  /** The build its Collectors go to. */
  build: string;
  counts: Record<string, number>;
  /** Its Collectors holding an in-flight slot. */
  inflight: number;
}

export interface FleetRollout {
  id: string;
  policy: string;
  target: string;
  phase: string;
  maxInFlight: number;
  inflight: number;
  counts: Record<string, number>;
  /** Each organization's part, one per organization the rollout covers (`default` without `orgs`). */
  byOrg: OrgPart[];
  /** Organizations whose part an operator paused (`pause --org`). */
  pausedOrgs?: readonly { org: string }[] | undefined;
  /** Cohorts the cohort gate quarantined, with the Collectors each held (RolloutRecord's). */
  quarantined?: HoldsSource['quarantined'];
  /** Rollbacks carried out, `unavailable` when the previous build is no longer offered (RolloutRecord's). */
  rollbacks?: HoldsSource['rollbacks'];
}

export interface FleetSnapshot {
  rollouts: FleetRollout[];
  /** Every organization with a problem now (its part of each rollout waits). Absent: none. */
  orgProblems?: readonly { org: string; kind: OrgProblemKind }[];
  /** The daemon's own problems now (an invalid policy file, a target not offered, a time scale). */
  daemonProblems?: readonly { kind: string; subject: string }[];
  queue: Record<string, number>;
}

export interface OrgHealthView {
  org: string;
  /** The kind of its problem now; absent while it is healthy. */
  problem?: OrgProblemKind;
}

/** The organizations of the rollouts and of the problems, sorted, each with its problem if any. */
export function orgHealthOf(snapshot: Pick<FleetSnapshot, 'rollouts' | 'orgProblems'>): OrgHealthView[] {
  const problems = new Map((snapshot.orgProblems ?? []).map((p) => [p.org, p.kind]));
  const orgs = new Set(problems.keys());
  for (const r of snapshot.rollouts) for (const part of r.byOrg) orgs.add(part.org);
  return [...orgs].sort().map((org) => {
    const problem = problems.get(org);
    return problem ? { org, problem } : { org };
  });
}
