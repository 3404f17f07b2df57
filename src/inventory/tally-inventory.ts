/**
 * One organization's inventory pass folded into counts, page by page, so that a pass over 10,000
 * (or 100,000) Collectors keeps no record in memory or in Redis: installed Collectors by build,
 * operating system and `alive`, and for each policy that covers the organization its selected
 * Collectors by build (alive and offline apart). That is what compliance needs: whatever build a
 * policy's target resolves to later, the share on it or newer is a sum over these builds.
 * Values from the service are bounded: a version that is not a build counts as `unknown`, an
 * empty OS name as `unknown`, and past MAX_STORED_BUILDS builds or MAX_STORED_OS OS names the
 * rest are summed as `other`. Pure: no I/O, no clock.
 */
import { createHash } from 'node:crypto';
import type { InventoryCollector } from '../api/index.js';
import { isBuildVersion } from '../lib/version.js';
import type { Policy } from '../policy/schema.js';
import { compileSelection, policyOrgs } from '../policy/select/select-collectors.js';

/** The build of a Collector whose version is absent or not shaped <major>.<minor>-<build>. */
export const UNKNOWN_BUILD = 'unknown';
/** Builds or OS names past the bounds below, summed. */
export const OTHER = 'other';
/** The OS of a Collector that reports none. */
export const UNKNOWN_OS = 'unknown';
/** Distinct builds kept per organization (and per policy); the service offers a few dozen. */
export const MAX_STORED_BUILDS = 200;
/** Distinct OS names kept per organization. */
export const MAX_STORED_OS = 50;
/** Longest OS name kept (longer ones are cut). */
const MAX_OS_LENGTH = 64;

/** Collectors of one build, one OS, alive or not. */
export interface FleetGroup {
  build: string;
  os: string;
  alive: boolean;
  count: number;
}

/** A policy's selected Collectors of one organization: build → [alive, offline]. */
export interface PolicyTally {
  /** Fingerprint of the policy's `select`, `exclude` and `orgs` when the pass counted. */
  selection: string;
  builds: Record<string, [alive: number, offline: number]>;
}

/** What one complete pass found in one organization. */
export interface InventoryTally {
  /** Installed Collectors. */
  collectors: number;
  /** Of which alive. */
  alive: number;
  groups: FleetGroup[];
  /** Every policy that covers the organization, enabled or not, by name. */
  policies: Record<string, PolicyTally>;
}

/** A short fingerprint of what decides a policy's selection in an organization. */
export function selectionFingerprint(policy: Pick<Policy, 'select' | 'exclude' | 'orgs'>): string {
  return createHash('sha256')
    .update(JSON.stringify([policy.select, policy.exclude, policy.orgs]))
    .digest('hex')
    .slice(0, 12);
}

/** The build a Collector record counts under. */
export function buildOfRecord(c: Pick<InventoryCollector, 'collectorVersion'>): string {
  const v = c.collectorVersion;
  return typeof v === 'string' && isBuildVersion(v) ? v : UNKNOWN_BUILD;
}

/** Bounds the distinct values of one dimension: the first `max` seen keep their name. */
function bounded(max: number): (value: string) => string {
  const kept = new Set<string>();
  return (value) => {
    if (kept.has(value)) return value;
    if (kept.size >= max) return OTHER;
    kept.add(value);
    return value;
  };
}

export interface Tally {
  /** Counts the installed Collectors of one page (others are ignored). */
  add(collectors: readonly InventoryCollector[]): void;
  result(): InventoryTally;
}

export function createTally(org: string, policies: readonly Policy[]): Tally {
  const covering = policies
    .filter((p) => policyOrgs(p, [org]).length > 0)
    .map((p) => ({ name: p.name, matches: compileSelection(p), selection: selectionFingerprint(p) }));
  const build = bounded(MAX_STORED_BUILDS);
  const os = bounded(MAX_STORED_OS);
  const groups = new Map<string, FleetGroup>();
  const tallies: Record<string, PolicyTally> = {};
  for (const p of covering) tallies[p.name] = { selection: p.selection, builds: {} };
  let collectors = 0;
  let alive = 0;
  return {
    add(page) {
      for (const c of page) {
        if (c.collectorType !== 'Installable') continue;
        collectors++;
        if (c.alive) alive++;
        const b = build(buildOfRecord(c));
        const o = os(c.osName?.trim().slice(0, MAX_OS_LENGTH) || UNKNOWN_OS);
        const key = `${b}\u0000${o}\u0000${c.alive ? 1 : 0}`;
        const group = groups.get(key);
        if (group) group.count++;
        else groups.set(key, { build: b, os: o, alive: c.alive, count: 1 });
        const selectable = {
          id: c.id,
          org,
          name: c.name,
          hostName: c.hostName,
          osName: c.osName,
          osArch: c.osArch,
          timeZone: c.timeZone,
          collectorVersion: c.collectorVersion ?? undefined,
          ephemeral: c.ephemeral,
        };
        for (const p of covering) {
          if (!p.matches(selectable)) continue;
          const builds = (tallies[p.name] as PolicyTally).builds;
          const counts = builds[b] ?? [0, 0];
          counts[c.alive ? 0 : 1]++;
          builds[b] = counts;
        }
      }
    },
    result: () => ({ collectors, alive, groups: [...groups.values()], policies: tallies }),
  };
}
