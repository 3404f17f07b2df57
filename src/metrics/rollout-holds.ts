/**
 * What a rollout holds back, as its gauges show it (pure, from the rollout's record in the fleet
 * snapshot): the cohorts its cohort gate quarantined, with the Collectors each held, and the
 * Collectors whose rollback could not happen because the service no longer offers their previous
 * build, per organization (Collector ids are an organization's own). Label values stay bounded: cohorts are keys of the policy's `cohorts.by` dimensions
 * (cohort-key.ts, always `name=value` pairs), and past MAX_COHORT_SERIES per rollout the rest
 * are summed under `other` (which no cohort key can be, having no `=`).
 */

import { DEFAULT_ORG } from '../rollout/index.js';

/** Quarantined cohorts shown one by one per rollout; the rest are summed under OTHER_COHORT. */
export const MAX_COHORT_SERIES = 20;
export const OTHER_COHORT = 'other';

/** Phases in which a quarantine still holds something an operator can release (`retry`). */
const HOLDING_PHASES: ReadonlySet<string> = new Set(['running', 'converged', 'paused', 'halted']);

export interface HoldsSource {
  phase: string;
  quarantined?: readonly { cohort: string; held: number }[] | undefined;
  rollbacks?:
    | readonly {
        state: string;
        /** The organization of its Collectors (absent: the default one). */
        org?: string | undefined;
        build: string;
        collectors: number;
        ids?: readonly number[];
      }[]
    | undefined;
}

export interface RolloutHolds {
  /** One entry per quarantined cohort (at most MAX_COHORT_SERIES + 1), in the rollout's order. */
  quarantined: { cohort: string; held: number }[];
  /** Collectors whose previous build is no longer offered: their rollback could not start. */
  rollbackUnavailable: number;
  /** The same per organization, for the organizations that have any. */
  rollbackUnavailableByOrg: Record<string, number>;
}

/**
 * The holds of a rollout. A cohort's `held` is the Collectors of it in `quarantined` now (the
 * snapshot reads them from the counts per cohort, read-fleet-status.ts). Quarantines of an aborted or superseded rollout are left out: nothing of it can be
 * retried any more, so they hold nothing a person could release. The rollbacks found unavailable
 * are counted per organization and build once (a second request for the same Collectors records
 * them again): the larger of the biggest count and the distinct ids listed.
 */
export function rolloutHolds(r: HoldsSource): RolloutHolds {
  const quarantined: { cohort: string; held: number }[] = [];
  if (HOLDING_PHASES.has(r.phase)) {
    for (const q of r.quarantined ?? []) {
      const held = Number.isFinite(q.held) ? Math.max(0, q.held) : 0;
      if (quarantined.length < MAX_COHORT_SERIES) quarantined.push({ cohort: q.cohort, held });
      else if (quarantined.length === MAX_COHORT_SERIES) quarantined.push({ cohort: OTHER_COHORT, held });
      else (quarantined[MAX_COHORT_SERIES] as { held: number }).held += held;
    }
  }
  const byOrgBuild = new Map<string, { org: string; most: number; ids: Set<number> }>();
  for (const e of r.rollbacks ?? []) {
    if (e.state !== 'unavailable') continue;
    const org = e.org ?? DEFAULT_ORG;
    const key = JSON.stringify([org, e.build]);
    const b = byOrgBuild.get(key) ?? { org, most: 0, ids: new Set<number>() };
    b.most = Math.max(b.most, Number.isFinite(e.collectors) ? e.collectors : 0);
    for (const id of e.ids ?? []) b.ids.add(id);
    byOrgBuild.set(key, b);
  }
  let rollbackUnavailable = 0;
  const rollbackUnavailableByOrg: Record<string, number> = {};
  for (const b of byOrgBuild.values()) {
    const n = Math.max(b.most, b.ids.size);
    rollbackUnavailable += n;
    rollbackUnavailableByOrg[b.org] = (rollbackUnavailableByOrg[b.org] ?? 0) + n;
  }
  return { quarantined, rollbackUnavailable, rollbackUnavailableByOrg };
}
