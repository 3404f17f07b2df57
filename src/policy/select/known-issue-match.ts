/**
 * Which known issue of a policy (`knownIssues`: policy/known-issues.ts) holds a Collector back
 * from a build: the first entry whose `build` glob matches the build and whose `select` matches
 * the Collector. Compiled once per policy object and cached, like selections. Pure.
 */
import type { KnownIssue } from '../known-issues.js';
import type { Policy } from '../schema.js';
import { compileGlob } from './compile-glob.js';
import { compileSelection, type SelectableCollector } from './select-collectors.js';

interface Compiled {
  issue: KnownIssue;
  build: (build: string) => boolean;
  select: (c: SelectableCollector) => boolean;
}

const cache = new WeakMap<object, Compiled[]>();

function compiled(policy: Pick<Policy, 'knownIssues'>): Compiled[] {
  const hit = cache.get(policy);
  if (hit) return hit;
  const out = (policy.knownIssues ?? []).map((issue): Compiled => {
    const glob = compileGlob(issue.build);
    return {
      issue,
      build: (b) => (glob.literal !== undefined ? glob.literal === b.toLowerCase() : glob.match(b)),
      select: compileSelection({ select: [issue.select], exclude: [] }),
    };
  });
  cache.set(policy, out);
  return out;
}

/** The known issues of `policy` that concern `build`, in the policy's order. */
export function knownIssuesOf(policy: Pick<Policy, 'knownIssues'>, build: string): KnownIssue[] {
  return compiled(policy)
    .filter((c) => c.build(build))
    .map((c) => c.issue);
}

/** The first known issue of `policy` that holds `collector` back from `build`, if any. */
export function knownIssueFor(
  policy: Pick<Policy, 'knownIssues'>,
  collector: SelectableCollector,
  build: string,
): KnownIssue | undefined {
  if (!policy.knownIssues?.length) return undefined;
  return compiled(policy).find((c) => c.build(build) && c.select(collector))?.issue;
}

/** A selection in words, for `status`: `osName=Mac OS X`, `every Collector` when it has no criterion. */
export function describeSelection(select: KnownIssue['select']): string | undefined {
  const parts = Object.entries(select)
    .filter(([, v]) => v !== undefined)
    .map(
      ([k, v]) =>
        `${k}=${Array.isArray(v) ? v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join('|') : String(v)}`,
    );
  return parts.length ? parts.join(',') : undefined;
}
