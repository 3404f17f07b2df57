/**
 * `cohorts` of a policy: outcomes grouped by what the Collectors share (operating system,
 * architecture, the build they come from), so that a build that breaks one kind of Collector
 * holds that kind only while the others go on. A cohort is quarantined when the lower bound of
 * the Wilson interval of its failure rate, at `confidence`, is above `maxFailureRatio`
 * (rollout/gates/judge-cohorts.ts): small samples never quarantine a cohort by chance.
 * Optional: without `cohorts`, outcomes are not judged per cohort.
 */
import { z } from 'zod';

/** What a cohort may be defined by, in the order its key names them. */
export const COHORT_DIMENSIONS = ['osName', 'osArch', 'fromBuild'] as const;
export type CohortDimension = (typeof COHORT_DIMENSIONS)[number];

const DIMENSION_HINT = `expected one of ${COHORT_DIMENSIONS.join(', ')}`;

const dimension = z.enum(COHORT_DIMENSIONS, {
  error: (iss) => `${DIMENSION_HINT}, got ${JSON.stringify(iss.input)}`,
});

export const Cohorts = z.strictObject({
  /** The dimensions that define a cohort: one to three of osName, osArch, fromBuild (one value or a list). Required. */
  by: z.preprocess(
    (value) => (Array.isArray(value) || value === undefined || value === null ? value : [value]),
    z
      .array(dimension, {
        error: (iss) =>
          iss.input === undefined
            ? 'required field is missing'
            : `${DIMENSION_HINT} or a list of them, got ${JSON.stringify(iss.input)}`,
      })
      .min(1, `name at least one of ${COHORT_DIMENSIONS.join(', ')}`)
      .max(3, 'at most 3 dimensions')
      .refine((by) => new Set(by).size === by.length, { message: 'a dimension is named twice' }),
  ),
  /** A cohort is quarantined when its failure rate is significantly above this ratio (0 to 1). Required. */
  maxFailureRatio: z
    .number({
      error: (iss) =>
        iss.input === undefined
          ? 'required field is missing'
          : `expected a number between 0 and 1, got ${JSON.stringify(iss.input)}`,
    })
    .min(0, 'must be between 0 and 1')
    .max(1, 'must be between 0 and 1'),
  /** Confidence of the Wilson interval whose lower bound is compared, 0.5 to 0.999. Default 0.95. */
  confidence: z
    .number({ error: (iss) => `expected a number between 0.5 and 0.999, got ${JSON.stringify(iss.input)}` })
    .min(0.5, 'must be between 0.5 and 0.999')
    .max(0.999, 'must be between 0.5 and 0.999')
    .default(0.95),
  /** Outcomes a cohort needs before it is judged, 1 to 100000. Default 5. */
  minSample: z
    .number({ error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}` })
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(100_000, 'must be at most 100000')
    .default(5),
});
export type Cohorts = z.infer<typeof Cohorts>;
