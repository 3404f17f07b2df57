/**
 * What `fleet-upgrade fleet` shows, from each organization's inventory in Redis (src/inventory):
 * the installed Collectors by build and organization (alive and offline), each policy's
 * compliance per organization as the inventory's leader last judged it, and the oldest builds
 * still running. Builds are ordered newest first, compared part by part; `unknown` (no build
 * reported) and `other` (past the bound of builds kept) come last. Pure: the table, CSV and JSON
 * renderings all read this one view.
 */
import type { OrgInventory, PolicyCompliance } from '../../inventory/index.js';
import { compareBuildVersions, isBuildVersion } from '../../lib/version.js';

/** The oldest builds `fleet` names. */
export const OLDEST_SHOWN = 3;
/** The newest builds whose first sighting here `fleet` names (what `minAge` counts from). */
export const NEWEST_SEEN_SHOWN = 3;

export interface BuildCount {
  build: string;
  collectors: number;
  alive: number;
  offline: number;
  /** By OS name. */
  os: Record<string, number>;
}

export interface OrgView {
  org: string;
  /** When its last complete pass ended; absent before the first. */
  inventoriedAt?: number;
  startedAt?: number;
  pages?: number;
  nextAt?: number;
  /** Passes failed in a row, and the last failure. */
  failures: number;
  lastError?: { at: number; message: string };
  collectors: number;
  alive: number;
  offline: number;
  /** Newest build first. */
  builds: BuildCount[];
}

export interface PolicyRow extends PolicyCompliance {
  policy: string;
  org: string;
  /** Its Collectors in the organization by build: [alive, offline] (the last pass's counts). */
  builds: Record<string, [alive: number, offline: number]>;
}

export interface FleetView {
  orgs: OrgView[];
  /** Every build some organization runs, newest first (`unknown`, `other` last). */
  builds: string[];
  policies: PolicyRow[];
  /**
   * The newest builds of the organizations' build lists (at most NEWEST_SEEN_SHOWN), newest first,
   * with when this deployment first saw each (the earliest over organizations): a policy's
   * `minAge` counts from it, since the build list carries no release date. Absent with `--live`.
   */
  firstSeen?: { build: string; at: number }[];
  /** The oldest builds running anywhere (at most OLDEST_SHOWN, never the newest), oldest first, with their Collectors per organization. */
  oldest: { build: string; collectors: number; byOrg: Record<string, number> }[];
}

/** Newest first; builds that are not versions (`unknown`, `other`) last, by name. */
export function compareBuildsNewestFirst(a: string, b: string): number {
  const va = isBuildVersion(a);
  const vb = isBuildVersion(b);
  if (va && vb) return compareBuildVersions(b, a);
  if (va !== vb) return va ? -1 : 1;
  return a.localeCompare(b);
}

function orgView(inv: OrgInventory): OrgView {
  const byBuild = new Map<string, BuildCount>();
  for (const g of inv.pass?.groups ?? []) {
    const row = byBuild.get(g.build) ?? { build: g.build, collectors: 0, alive: 0, offline: 0, os: {} };
    row.collectors += g.count;
    if (g.alive) row.alive += g.count;
    else row.offline += g.count;
    row.os[g.os] = (row.os[g.os] ?? 0) + g.count;
    byBuild.set(g.build, row);
  }
  const pass = inv.pass;
  return {
    org: inv.org,
    ...(pass ? { inventoriedAt: pass.at, startedAt: pass.startedAt, pages: pass.pages } : {}),
    ...(inv.schedule ? { nextAt: inv.schedule.nextAt } : {}),
    failures: inv.schedule?.failures ?? 0,
    ...(inv.schedule?.lastError ? { lastError: inv.schedule.lastError } : {}),
    collectors: pass?.collectors ?? 0,
    alive: pass?.alive ?? 0,
    offline: (pass?.collectors ?? 0) - (pass?.alive ?? 0),
    builds: [...byBuild.values()].sort((a, b) => compareBuildsNewestFirst(a.build, b.build)),
  };
}

export function fleetView(
  inventories: readonly OrgInventory[],
  /** When this deployment first saw each build, per organization (rollout/tick/builds-seen.ts). */
  seen?: ReadonlyMap<string, ReadonlyMap<string, number>>,
): FleetView {
  const orgs = inventories.map(orgView);
  const builds = [...new Set(orgs.flatMap((o) => o.builds.map((b) => b.build)))].sort(
    compareBuildsNewestFirst,
  );
  const policies: PolicyRow[] = [];
  for (const inv of inventories)
    for (const [policy, c] of Object.entries(inv.compliance?.policies ?? {}))
      policies.push({ policy, org: inv.org, ...c, builds: inv.pass?.policies[policy]?.builds ?? {} });
  // A policy's row in an organization where it selects none (another organization's canary, one
  // its `orgs:` leaves out) says nothing of it: left out, unless it selects none anywhere.
  const selecting = new Set(policies.filter((p) => p.counts.selected > 0).map((p) => p.policy));
  const shown = policies.filter((p) => p.counts.selected > 0 || !selecting.has(p.policy));
  policies.splice(0, policies.length, ...shown);
  policies.sort((a, b) => a.policy.localeCompare(b.policy));
  // The oldest builds still running, the newest one aside (it is no one's oldest).
  const oldest = builds
    .filter(isBuildVersion)
    .slice(1)
    .reverse()
    .slice(0, OLDEST_SHOWN)
    .map((build) => {
      const byOrg: Record<string, number> = {};
      let collectors = 0;
      for (const o of orgs) {
        const n = o.builds.find((b) => b.build === build)?.collectors ?? 0;
        if (n > 0) byOrg[o.org] = n;
        collectors += n;
      }
      return { build, collectors, byOrg };
    });
  return { orgs, builds, policies, oldest, ...(seen ? { firstSeen: newestSeen(seen) } : {}) };
}

/** The newest builds first seen here, with the earliest sighting over the organizations. */
function newestSeen(seen: ReadonlyMap<string, ReadonlyMap<string, number>>): { build: string; at: number }[] {
  const at = new Map<string, number>();
  for (const builds of seen.values())
    for (const [build, ms] of builds)
      if (isBuildVersion(build)) at.set(build, Math.min(at.get(build) ?? ms, ms));
  return [...at]
    .sort(([a], [b]) => compareBuildVersions(b, a))
    .slice(0, NEWEST_SEEN_SHOWN)
    .map(([build, ms]) => ({ build, at: ms }));
}

/** Whether any organization has a complete pass. */
export function hasInventory(view: FleetView): boolean {
  return view.orgs.some((o) => o.inventoriedAt !== undefined);
}
