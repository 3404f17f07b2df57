/**
 * The gauges of the fleet's inventory and of each policy's compliance (src/inventory), read from
 * Redis at scrape time by `run` processes (every one the same values: take max()). Label values
 * are bounded whatever the fleet: `build` keeps the MAX_BUILD_SERIES builds with the most
 * Collectors of each organization and sums the rest as `other` (the service offers a few dozen
 * builds, a fleet runs a handful), `os` keeps MAX_OS_SERIES OS names (the rest `other`), `alive`
 * is `true` or `false`, `kind` one of four, and `policy` and `org` are the settings' and the
 * policy files' names. Each gauge is reset at each scrape, so a removed policy's series go.
 */
import type { Registry } from 'prom-client';
import { complianceRatios, type FleetGroup, type OrgInventory, OTHER } from '../inventory/index.js';
import { snapshotGauges } from './snapshot-gauge.js';

/** Builds with a series of their own per organization; the rest are `other`. */
export const MAX_BUILD_SERIES = 20;
/** OS names with a series of their own per organization; the rest are `other`. */
export const MAX_OS_SERIES = 8;

export interface InventorySnapshot {
  /** The deployment's clock now (ms). */
  now: number;
  orgs: OrgInventory[];
}

/** The `count` largest values of `key` over `groups` keep their name; the others map to `other`. */
function topValues(groups: readonly FleetGroup[], key: 'build' | 'os', count: number): (v: string) => string {
  const sums = new Map<string, number>();
  for (const g of groups) sums.set(g[key], (sums.get(g[key]) ?? 0) + g.count);
  const kept = new Set(
    [...sums]
      .filter(([v]) => v !== OTHER)
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, count)
      .map(([v]) => v),
  );
  return (v) => (kept.has(v) ? v : OTHER);
}

/** The installed Collectors of one organization by bounded build, OS and alive. */
export function boundedGroups(groups: readonly FleetGroup[]): FleetGroup[] {
  const build = topValues(groups, 'build', MAX_BUILD_SERIES);
  const os = topValues(groups, 'os', MAX_OS_SERIES);
  const out = new Map<string, FleetGroup>();
  for (const g of groups) {
    const b = build(g.build);
    const o = os(g.os);
    const key = `${b}\u0000${o}\u0000${g.alive}`;
    const seen = out.get(key);
    if (seen) seen.count += g.count;
    else out.set(key, { build: b, os: o, alive: g.alive, count: g.count });
  }
  return [...out.values()];
}

export function registerInventoryGauges(registry: Registry, read: () => Promise<InventorySnapshot>): void {
  const gauge = snapshotGauges(registry, read);

  gauge(
    {
      name: 'fleet_upgrade_fleet_collectors',
      help: `Installed Collectors of each organization by build, OS name and alive, from its last inventory pass (the ${MAX_BUILD_SERIES} builds and ${MAX_OS_SERIES} OS names with the most Collectors, the rest \`other\`; \`unknown\`: no build or no OS reported).`,
      labelNames: ['org', 'build', 'os', 'alive'],
    },
    (s, g) => {
      for (const inv of s.orgs)
        for (const group of boundedGroups(inv.pass?.groups ?? []))
          g.labels({ org: inv.org, build: group.build, os: group.os, alive: String(group.alive) }).set(
            group.count,
          );
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_inventory_age_seconds',
      help: "Seconds since each organization's last complete inventory pass ended (the service's time).",
      labelNames: ['org'],
    },
    (s, g) => {
      for (const inv of s.orgs)
        if (inv.pass) g.labels(inv.org).set(Math.max(0, (s.now - inv.pass.at) / 1000));
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_inventory_failures',
      help: 'Inventory passes of each organization that failed in a row since its last complete one (0 when the last one completed).',
      labelNames: ['org'],
    },
    (s, g) => {
      for (const inv of s.orgs) if (inv.schedule) g.labels(inv.org).set(inv.schedule.failures);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_compliance_collectors',
      help: "Each policy's installed Collectors in each organization, alive or not, at the last inventory pass: the whole of fleet_upgrade_compliance_ratio's shares.",
      labelNames: ['policy', 'org'],
    },
    (s, g) => {
      for (const inv of s.orgs)
        for (const [policy, c] of Object.entries(inv.compliance?.policies ?? {}))
          g.labels({ policy, org: inv.org }).set(c.counts.selected);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_compliance_ratio',
      help: "Each policy's share of its Collectors in each organization, by kind: compliant (on the build its target resolves to, or newer), behind, unknown (no comparable build, or the target not resolved yet), minimum (on or above its minimumBuild, when set).",
      labelNames: ['policy', 'org', 'kind'],
    },
    (s, g) => {
      for (const inv of s.orgs)
        for (const [policy, c] of Object.entries(inv.compliance?.policies ?? {})) {
          const ratios = complianceRatios(c.counts);
          if (!ratios) continue;
          for (const [kind, ratio] of Object.entries(ratios)) {
            // Before its target resolves, a policy has no compliant or behind share to show.
            if (c.target === null && (kind === 'compliant' || kind === 'behind')) continue;
            g.labels({ policy, org: inv.org, kind }).set(ratio);
          }
        }
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_compliance_target_info',
      help: "One per policy and organization: the build its target resolves to there (`unresolved` before the policy's first rollout, unless its target is a fixed build).",
      labelNames: ['policy', 'org', 'build'],
    },
    (s, g) => {
      for (const inv of s.orgs)
        for (const [policy, c] of Object.entries(inv.compliance?.policies ?? {}))
          g.labels({ policy, org: inv.org, build: c.target ?? 'unresolved' }).set(1);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_compliance_alert_below',
      help: "The policy's complianceAlert.below: FleetUpgradeComplianceLow fires when its compliant share stays below it for complianceAlert.for.",
      labelNames: ['policy'],
    },
    (s, g) => {
      for (const [policy, alert] of alerts(s)) g.labels(policy).set(alert.below);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_compliance_alert_for_seconds',
      help: "The policy's complianceAlert.for, in seconds.",
      labelNames: ['policy'],
    },
    (s, g) => {
      for (const [policy, alert] of alerts(s)) g.labels(policy).set(alert.forMs / 1000);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_compliance_below_seconds',
      help: "For a policy with a complianceAlert: seconds (the service's time) its compliant share in the organization has stayed below complianceAlert.below, as the inventory judged it at every round (kept in Redis); 0 when it is not below.",
      labelNames: ['policy', 'org'],
    },
    (s, g) => {
      for (const inv of s.orgs)
        for (const [policy, c] of Object.entries(inv.compliance?.policies ?? {})) {
          if (!c.alert) continue;
          const since = c.belowSince;
          g.labels({ policy, org: inv.org }).set(
            since === undefined ? 0 : Math.max(0, (s.now - since) / 1000),
          );
        }
    },
  );
}

/** Each policy's complianceAlert, as the organizations' judgements carry it. */
function alerts(s: InventorySnapshot): Map<string, { below: number; forMs: number }> {
  const out = new Map<string, { below: number; forMs: number }>();
  for (const inv of s.orgs)
    for (const [policy, c] of Object.entries(inv.compliance?.policies ?? {}))
      if (c.alert && !out.has(policy)) out.set(policy, c.alert);
  return out;
}
