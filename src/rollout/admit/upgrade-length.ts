/**
 * How long a Collector's upgrade is expected to take, from what predicts it: how far its build is
 * from the target (the service carries out large jumps in increments, each an upgrade of its own)
 * and its operating system, learned from the rollout's own durations per kind (`<os>|<distance>`).
 * The admitter starts the longest expected first (the longest-processing-time rule: a greedy
 * schedule then ends within 4/3 of the best one), and the window fit asks for the 95th percentile
 * of the Collector's own kind.
 *
 * Until a kind has durations of its own, its length is estimated from the others: a duration per
 * build of distance (the median over every duration ÷ its distance), times the kind's distance,
 * times the factor of the Collector's cohort (the policy's `cohorts.by`), else of its operating
 * system, when their durations say it is slower or faster than the rest.
 *
 * The durations come from Redis (lua/apply-moves-15.lua keeps the latest 100 per kind, and per cohort
 * `@<cohort>` the latest 100 per build of distance).
 */
import type { BuildTarget } from '../../api/index.js';
import { quantile } from '../../lib/quantile.js';
import { compareBuildVersions } from '../../lib/version.js';

/** Durations of a kind before its own median is used. */
export const KIND_SAMPLES = 3;
/** One build of distance before anything is learned (clock ms): only the order matters then. */
const PRIOR_PER_BUILD_MS = 180_000;

/** How many builds apart `from` and `to` are in the service's list (at least 1; 1 when unknown). */
export function buildDistance(from: string, to: string, targets: readonly BuildTarget[]): number {
  const versions = [...new Set([...targets.map((t) => t.version), from, to])].sort(compareBuildVersions);
  const a = versions.indexOf(from);
  const b = versions.indexOf(to);
  return a < 0 || b < 0 ? 1 : Math.max(1, Math.abs(b - a));
}

/** A Collector's duration kind: its operating system and its distance to the target, `Linux|2`. */
export function durationKind(osName: string | undefined, distance: number): string {
  return `${osName?.trim() || 'unknown'}|${distance}`;
}

function parseKind(kind: string): { os: string; distance: number } {
  const bar = kind.lastIndexOf('|');
  return { os: kind.slice(0, bar), distance: Math.max(1, Number(kind.slice(bar + 1)) || 1) };
}

export interface LengthModel {
  /** The expected length of an upgrade of this kind (clock ms), of a Collector of `cohort`. */
  predict(kind: string | undefined, cohort?: string): number;
  /** The 95th percentile of this kind's durations, when it has enough; else of all of them. */
  p95(kind: string | undefined): number | undefined;
  /** Durations learned in all. */
  readonly samples: number;
}

const COHORT = '@';

/** The median of ascending `values` over `unit`, when there are enough of them. */
function factorOf(values: number[], unit: number): number | undefined {
  if (values.length < KIND_SAMPLES) return undefined;
  return (
    quantile(
      values.sort((a, b) => a - b),
      0.5,
    ) / unit
  );
}

/**
 * The model of a rollout's durations: kind → durations in ms, and `@<cohort>` → the cohort's
 * durations per build of distance.
 */
export function lengthModel(byKind: ReadonlyMap<string, readonly number[]>): LengthModel {
  const cohorts = new Map<string, number[]>();
  const sorted = new Map<string, number[]>();
  for (const [k, d] of byKind)
    if (k.startsWith(COHORT)) cohorts.set(k.slice(1), [...d]);
    else
      sorted.set(
        k,
        [...d].sort((a, b) => a - b),
      );
  const perBuild: number[] = [];
  for (const [kind, d] of sorted) for (const ms of d) perBuild.push(ms / parseKind(kind).distance);
  perBuild.sort((a, b) => a - b);
  const unit = perBuild.length ? quantile(perBuild, 0.5) : PRIOR_PER_BUILD_MS;
  // An operating system's factor: its durations per build against every one's.
  const byOs = new Map<string, number[]>();
  for (const [kind, d] of sorted) {
    const { os, distance } = parseKind(kind);
    byOs.set(os, [...(byOs.get(os) ?? []), ...d.map((ms) => ms / distance)]);
  }
  const factor = new Map<string, number>();
  for (const [os, d] of byOs) {
    const f = factorOf(d, unit);
    if (f !== undefined) factor.set(os, f);
  }
  const cohortFactor = new Map<string, number>();
  for (const [cohort, d] of cohorts) {
    const f = factorOf(d, unit);
    if (f !== undefined) cohortFactor.set(cohort, f);
  }
  const all = [...sorted.values()].flat().sort((a, b) => a - b);
  return {
    samples: all.length,
    predict(kind, cohort) {
      if (kind === undefined) return unit;
      const own = sorted.get(kind);
      if (own && own.length >= KIND_SAMPLES) return quantile(own, 0.5);
      const { os, distance } = parseKind(kind);
      const f = (cohort === undefined ? undefined : cohortFactor.get(cohort)) ?? factor.get(os) ?? 1;
      return unit * distance * f;
    },
    p95(kind) {
      const own = kind === undefined ? undefined : sorted.get(kind);
      if (own && own.length >= 20) return quantile(own, 0.95);
      return all.length >= 20 ? quantile(all, 0.95) : undefined;
    },
  };
}

/** A Collector's place in the admission order: the longer expected, the sooner (seconds, negated). */
export function admissionBase(model: LengthModel, r: { kind?: string; cohort?: string }): number {
  return -Math.round(model.predict(r.kind, r.cohort) / 1000);
}
