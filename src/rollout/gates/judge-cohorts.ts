/**
 * The cohort gate (policy/cohorts.ts): which cohorts of a rollout fail significantly more often
 * than the policy allows, and are to be quarantined (their remaining Collectors held while the
 * other cohorts go on). Pure: the caller counts, this judges.
 *
 * A cohort is quarantined when it has at least `minSample` outcomes and the lower bound of the
 * Wilson score interval of its failure rate, at `confidence`, is above `maxFailureRatio`: even
 * the most favourable reading of its results fails more than the gate allows. A few unlucky
 * failures in a small cohort are within the interval, so they do not quarantine it; a bad
 * cohort is caught after a handful of outcomes when its rate is far above the gate.
 *
 * The bound holds for one look. Judged again after every outcome, a good cohort has a few more
 * chances to look bad; test/unit/rollout/judge-cohorts.test.ts measures the resulting rate of
 * false quarantines (a 2 % cohort of 30 Collectors, judged after each outcome, against a 10 %
 * gate at 95 %) and checks it stays below 1 − confidence.
 */
import { normalQuantile } from '../../lib/normal-quantile.js';
import type { Cohorts } from '../../policy/cohorts.js';

/** Counts of one cohort: see judgeCohorts for what the caller counts. */
export interface CohortStats {
  failures: number;
  outcomes: number;
}

export interface QuarantinedCohort {
  /** The cohort's key (cohort-key.ts). */
  key: string;
  failures: number;
  outcomes: number;
  /** Lower bound of the Wilson interval of the failure rate at the policy's confidence. */
  lowerBound: number;
  /** One sentence for status, reports, events: the counts, the bound and the limit. */
  reason: string;
}

export interface CohortJudgement {
  /** Cohorts to quarantine, by key. */
  quarantined: QuarantinedCohort[];
}

/**
 * Lower bound of the Wilson score interval for a proportion: `failures` out of `n`, at the
 * two-sided `confidence` (0.95: the interval holds the true rate with probability 95 %).
 *
 *   p̂ = failures / n,   z = Φ⁻¹(1 − (1 − confidence) / 2)        (1.95996… at 0.95)
 *   lower = ( p̂ + z²/(2n) − z · √( p̂(1 − p̂)/n + z²/(4n²) ) ) / ( 1 + z²/n )
 *
 * E. B. Wilson, "Probable inference, the law of succession, and statistical inference", Journal
 * of the American Statistical Association 22 (1927), 209–212; see also A. Agresti and B. A. Coull,
 * "Approximate is better than 'exact' for interval estimation of binomial proportions", The
 * American Statistician 52 (1998), 119–126. Unlike p̂ ± z·√(p̂(1 − p̂)/n), it stays within [0, 1]
 * and is not degenerate at 0 or n failures. n = 0 gives 0 (nothing is known).
 * Throws a RangeError for counts that are negative, not whole or with failures above n, and for
 * a confidence outside (0, 1).
 */
export function wilsonLowerBound(failures: number, n: number, confidence: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a whole number ≥ 0, got ${n}`);
  if (!Number.isInteger(failures) || failures < 0 || failures > n) {
    throw new RangeError(`failures must be a whole number from 0 to n (${n}), got ${failures}`);
  }
  if (!(confidence > 0 && confidence < 1))
    throw new RangeError(`confidence must be in (0, 1), got ${confidence}`);
  if (n === 0 || failures === 0) return 0;
  const z = normalQuantile(1 - (1 - confidence) / 2);
  const z2 = z * z;
  const p = failures / n;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return Math.max(0, (centre - spread) / (1 + z2 / n));
}

/** `0.2313` → `23.1%`, `0.95` → `95%`. */
export function formatPercent(ratio: number): string {
  return `${Number((ratio * 100).toFixed(1))}%`;
}

/**
 * Judges every cohort of `stats` (cohort key → counts) against the policy's `cohorts`.
 *
 * What the caller counts, per cohort, over the rollout (since the last resume, like the failure
 * gate): `failures` are the Collectors whose outcome is bad for the gate (`failed`, `timed_out`,
 * `error`, `unhealthy`: collector-state.ts `gateClass(s) === 'bad'`); `outcomes` are those plus
 * the good ones (`succeeded`, and `verifying`: its task ended well; counted at once, as a failure
 * is, so that the early sample is not its failures alone). Not counted at all: Collectors without an outcome yet (including
 * those waiting for a `retry` of their failure cause), `manual` ones (on the worklist), and
 * `not_alive`, `rejected`, `skipped`, `aborted`, `quarantined`: they say nothing about whether
 * the build works on the cohort, and counting them as outcomes would dilute its failure rate.
 * Counts are taken as whole numbers ≥ 0, failures at most outcomes (clamped, not thrown: a tick
 * may read counts mid-update). Quarantined cohorts come sorted by key.
 */
export function judgeCohorts(
  stats: ReadonlyMap<string, CohortStats>,
  cohorts: Pick<Cohorts, 'maxFailureRatio' | 'confidence' | 'minSample'>,
): CohortJudgement {
  const quarantined: QuarantinedCohort[] = [];
  for (const [key, counts] of stats) {
    const outcomes = Number.isFinite(counts.outcomes) ? Math.max(0, Math.floor(counts.outcomes)) : 0;
    const failures = Number.isFinite(counts.failures)
      ? Math.min(outcomes, Math.max(0, Math.floor(counts.failures)))
      : 0;
    if (outcomes < cohorts.minSample) continue;
    const lowerBound = wilsonLowerBound(failures, outcomes, cohorts.confidence);
    if (lowerBound <= cohorts.maxFailureRatio) continue;
    quarantined.push({
      key,
      failures,
      outcomes,
      lowerBound,
      reason:
        `${failures} of ${outcomes} ${outcomes === 1 ? 'upgrade' : 'upgrades'} failed (${formatPercent(failures / outcomes)}); ` +
        `at ${formatPercent(cohorts.confidence)} confidence the failure rate is at least ` +
        `${formatPercent(lowerBound)}, above the cohort limit of ${formatPercent(cohorts.maxFailureRatio)}`,
    });
  }
  quarantined.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { quarantined };
}
