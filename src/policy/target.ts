/**
 * A policy's `target`: `latest` (the build the organization's build list marks latest),
 * `latest-N` (the N-th build before the latest in that list, 1 ≤ N ≤ MAX_LATEST_BACK), or a fixed
 * build such as `19.470-4`. Parsed once here so that the scheduler, `plan` and `status` read the
 * same meaning; the build it names today is resolved against the build list in
 * rollout/tick/choose-build.ts (with `minAge`, the first-seen times kept in Redis, and `after`).
 */
import { compareBuildVersions, isBuildVersion } from '../lib/version.js';

export const LATEST = 'latest';
/** The furthest back `latest-N` may reach. */
export const MAX_LATEST_BACK = 20;

const LATEST_BACK = /^latest-(\d{1,3})$/;

export type TargetSpec =
  /** `latest` (back 0) or `latest-N`: the N-th build before the latest. */
  { kind: 'latest'; back: number } | { kind: 'build'; build: string };

/** The meaning of a target as written, or undefined when it is none of the accepted forms. */
export function parseTarget(text: string): TargetSpec | undefined {
  if (text === LATEST) return { kind: 'latest', back: 0 };
  const m = LATEST_BACK.exec(text);
  if (m) {
    const back = Number(m[1]);
    return back >= 1 && back <= MAX_LATEST_BACK ? { kind: 'latest', back } : undefined;
  }
  return isBuildVersion(text) ? { kind: 'build', build: text } : undefined;
}

/** True for `latest` and `latest-N`: targets that follow the build list. */
export function followsLatest(text: string): boolean {
  return parseTarget(text)?.kind === 'latest';
}

export function targetHint(input: unknown): string {
  return `expected "latest", "latest-N" (N from 1 to ${MAX_LATEST_BACK}) or a build shaped <major>.<minor>-<build> such as 19.470-4, got ${JSON.stringify(input)}`;
}

/** A build of an organization's build list (section 2.2 of the service). */
export interface ListedBuild {
  version: string;
  latest: boolean;
}

/**
 * The builds `target` allows in a build list, newest first: for `latest-N`, the build N places
 * before the latest in the list (in build order; builds listed above the latest are ignored) and
 * every older one; for a fixed build, that build when the list offers it. The first is the build
 * the target names; the others are where `minAge` and `after` may fall back to. Empty when the
 * list does not offer what the target names.
 */
export function targetCandidates(target: string, builds: readonly ListedBuild[]): string[] {
  const spec = parseTarget(target);
  if (!spec) return [];
  const valid = builds.filter((b) => isBuildVersion(b.version));
  if (spec.kind === 'build') return valid.some((b) => b.version === spec.build) ? [spec.build] : [];
  const sorted = [...new Set(valid.map((b) => b.version))].sort(compareBuildVersions);
  const latest = valid.find((b) => b.latest)?.version ?? sorted[sorted.length - 1];
  if (latest === undefined) return [];
  const upTo = sorted.indexOf(latest) - spec.back;
  return upTo < 0 ? [] : sorted.slice(0, upTo + 1).reverse();
}
