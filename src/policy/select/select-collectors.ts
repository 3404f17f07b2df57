/**
 * Decides whether a Collector record (section 2.1 of the service) falls under a policy: it must
 * match one of the policy's `select` entries and none of its `exclude` entries (exclude wins).
 * Globs, sets and version bounds are compiled once per policy and cached, so that the scheduler
 * and `plan` can sweep 100k Collectors per pass. Pure: no I/O, no clock.
 */
import { compareBuildVersions, isBuildVersion } from '../../lib/version.js';
import type { Policy } from '../schema.js';
import { compileGlob, type Glob } from './compile-glob.js';
import type { Selection, VersionRange } from './selection.js';

/** The fields of a Collector record that a selection looks at; other fields are ignored. */
export interface SelectableCollector {
  id: number;
  /** The organization it belongs to (the settings' `orgs`; `default` without them). */
  org?: string | undefined;
  name?: string | undefined;
  hostName?: string | undefined;
  osName?: string | undefined;
  osArch?: string | undefined;
  timeZone?: string | undefined;
  collectorVersion?: string | undefined;
  ephemeral?: boolean | undefined;
}

export type CollectorMatcher = (collector: SelectableCollector) => boolean;
type Test = (collector: SelectableCollector) => boolean;

/**
 * A matcher of text values, ignoring case: exact values in a set, globs through compile-glob.ts
 * (linear in the name's length, whatever the pattern).
 */
function textMatcher(patterns: readonly string[], globs: boolean): (value: string | undefined) => boolean {
  const exact = new Set<string>();
  const wild: Glob[] = [];
  for (const p of patterns) {
    const glob = globs ? compileGlob(p) : undefined;
    if (glob && glob.literal === undefined) wild.push(glob);
    else exact.add(glob?.literal ?? p.toLowerCase());
  }
  return (value) => {
    if (value === undefined) return false;
    return exact.has(value.toLowerCase()) || wild.some((glob) => glob.match(value));
  };
}

function inRange(version: string, range: VersionRange): boolean {
  if (range.from !== undefined && compareBuildVersions(version, range.from) < 0) return false;
  if (range.above !== undefined && compareBuildVersions(version, range.above) <= 0) return false;
  if (range.to !== undefined && compareBuildVersions(version, range.to) > 0) return false;
  if (range.below !== undefined && compareBuildVersions(version, range.below) >= 0) return false;
  return true;
}

/** The tests of one selection, cheapest first; an empty selection matches every Collector. */
function compileOne(selection: Selection): Test {
  const tests: Test[] = [];
  if (selection.ids) {
    const ids = new Set(selection.ids);
    tests.push((c) => ids.has(c.id));
  }
  if (selection.ephemeral !== undefined) {
    const wanted = selection.ephemeral;
    tests.push((c) => c.ephemeral === wanted);
  }
  const texts = [
    ['osName', selection.osName, false],
    ['osArch', selection.osArch, false],
    ['timeZone', selection.timeZone, false],
    ['name', selection.name, true],
    ['hostName', selection.hostName, true],
    ['org', selection.org, true],
  ] as const;
  for (const [field, patterns, globs] of texts) {
    if (!patterns) continue;
    const match = textMatcher(patterns, globs);
    tests.push((c) => match(c[field]));
  }
  if (selection.versions) {
    const ranges = selection.versions;
    tests.push((c) => {
      const v = c.collectorVersion;
      return v !== undefined && isBuildVersion(v) && ranges.some((r) => inRange(v, r));
    });
  }
  if (tests.length === 0) return () => true;
  return (c) => tests.every((test) => test(c));
}

const cache = new WeakMap<object, CollectorMatcher>();

/**
 * A matcher for the policy's `select` and `exclude`, compiled once and cached per policy object
 * (a reloaded policy is a new object, so it is compiled afresh).
 */
export function compileSelection(policy: Pick<Policy, 'select' | 'exclude'>): CollectorMatcher {
  const cached = cache.get(policy);
  if (cached) return cached;
  const selects = policy.select.map(compileOne);
  const excludes = policy.exclude.map(compileOne);
  const matcher: CollectorMatcher = (c) => selects.some((s) => s(c)) && !excludes.some((x) => x(c));
  cache.set(policy, matcher);
  return matcher;
}

/** Whether `collector` falls under `policy`: selected by some `select` entry and by no `exclude` entry. */
export function matchesSelection(
  policy: Pick<Policy, 'select' | 'exclude'>,
  collector: SelectableCollector,
): boolean {
  return compileSelection(policy)(collector);
}

/** The Collectors of `collectors` that fall under `policy`, in their order. */
export function selectCollectors<C extends SelectableCollector>(
  policy: Pick<Policy, 'select' | 'exclude'>,
  collectors: Iterable<C>,
): C[] {
  const matches = compileSelection(policy);
  const out: C[] = [];
  for (const c of collectors) if (matches(c)) out.push(c);
  return out;
}

const claims = new WeakMap<object, CollectorMatcher>();

/**
 * Whether a policy claims a Collector: its organization is one the policy's `orgs` covers and
 * the policy's `select`/`exclude` take it. What an earlier policy claims is not a later one's
 * (scan-upgradable.ts); a selection alone would claim the same ids in every organization.
 * A Collector without `org` is the `default` organization's. Cached per policy object.
 */
export function compileClaim(policy: Pick<Policy, 'orgs' | 'select' | 'exclude'>): CollectorMatcher {
  const cached = claims.get(policy);
  if (cached) return cached;
  const covers = textMatcher(policy.orgs, true);
  const selects = compileSelection(policy);
  const matcher: CollectorMatcher = (c) => covers(c.org ?? 'default') && selects(c);
  claims.set(policy, matcher);
  return matcher;
}

/**
 * The organizations of `names` (the settings' `orgs`) that the policy covers, in the order given:
 * those its `orgs` globs match.
 */
export function policyOrgs(policy: Pick<Policy, 'orgs'>, names: readonly string[]): string[] {
  const match = textMatcher(policy.orgs, true);
  return names.filter((n) => match(n));
}
