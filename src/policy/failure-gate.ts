/**
 * The failure gate of a policy: when outcomes go wrong, the rollout stops admitting. Two ways to
 * say when, usable together:
 * - `maxFailureRatio` (+ `minOutcomes`): the share of failed, timed_out, error and unhealthy outcomes;
 * - criteria per outcome type (`failed`, `timed_out`, `error`, `unhealthy`, `rejected`, `not_alive`), each
 *   with a `ratio` and/or an absolute `max` and a `minSample` (outcomes needed before the ratio is
 *   judged). A type not named is not judged on its own (so not_alive counts only where named).
 * Every criterion is judged per wave and over the whole rollout (since the last resume).
 * `onTrip: pause` (default) halts the rollout until `fleet-upgrade resume`; `abort` aborts it;
 * `rollback-wave` halts it and rolls back the tripped wave (src/rollout/operator/rollback.ts).
 */
import { z } from 'zod';

export const GATED_OUTCOMES = ['failed', 'timed_out', 'error', 'unhealthy', 'rejected', 'not_alive'] as const;
export type GatedOutcome = (typeof GATED_OUTCOMES)[number];

function ratio() {
  return z
    .number({ error: (iss) => `expected a number between 0 and 1, got ${JSON.stringify(iss.input)}` })
    .min(0, 'must be between 0 and 1')
    .max(1, 'must be between 0 and 1');
}

function count(min: number) {
  return z
    .number({ error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}` })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(10_000_000, 'must be at most 10000000');
}

export const OutcomeCriterion = z
  .strictObject({
    /** Trips when this type's share of the outcomes exceeds it (once `minSample` outcomes are in). */
    ratio: ratio().optional(),
    /** Trips when more Collectors than this ended with this outcome. */
    max: count(0).optional(),
    /** Outcomes needed before `ratio` is judged. Default 10. */
    minSample: count(1).default(10),
  })
  .refine((c) => c.ratio !== undefined || c.max !== undefined, {
    message: 'give a ratio and/or a max',
  });
export type OutcomeCriterion = z.infer<typeof OutcomeCriterion>;

export const FailureGate = z
  .strictObject({
    /** Trips when (failed + timed_out + error + unhealthy) / outcomes exceeds this share. Default: not judged. */
    maxFailureRatio: ratio().optional(),
    /** Outcomes needed before maxFailureRatio is judged. Default 10. */
    minOutcomes: count(1).default(10),
    /**
     * What a trip does: `pause` (halt until resume; default), `abort`, or `rollback-wave` (halt,
     * and take the tripped wave's upgraded and unhealthy Collectors back to their previous builds).
     */
    onTrip: z
      .enum(['pause', 'abort', 'rollback-wave'], { error: 'expected pause, abort or rollback-wave' })
      .default('pause'),
    failed: OutcomeCriterion.optional(),
    timed_out: OutcomeCriterion.optional(),
    error: OutcomeCriterion.optional(),
    unhealthy: OutcomeCriterion.optional(),
    rejected: OutcomeCriterion.optional(),
    not_alive: OutcomeCriterion.optional(),
  })
  .refine((g) => g.maxFailureRatio !== undefined || GATED_OUTCOMES.some((t) => g[t] !== undefined), {
    message:
      'give maxFailureRatio and/or a criterion per outcome (failed, timed_out, error, unhealthy, rejected, not_alive)',
  });
export type FailureGate = z.infer<typeof FailureGate>;
