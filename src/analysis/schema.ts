/**
 * External data of the analysis gates, parsed with zod: the answer of Prometheus's instant query
 * endpoint (GET /api/v1/query), and an analysis run's state as read back from Redis (the
 * integrator stores it as JSON on the rollout). The state is plain JSON and bounded: per query,
 * counts of each outcome and only the last MEASUREMENTS_KEPT measurements.
 */
import { z } from 'zod';

/** `[unix seconds, "value"]`: Prometheus writes values as text (`"NaN"`, `"+Inf"`, `"-Inf"` too). */
export const PromSampleValue = z.tuple([z.number(), z.string()]);
export type PromSampleValue = z.infer<typeof PromSampleValue>;

/** One series of an instant vector; a native histogram sample has `histogram` instead of `value`. */
export const PromVectorSample = z.looseObject({
  metric: z.record(z.string(), z.string()),
  value: PromSampleValue.optional(),
  histogram: z.unknown().optional(),
});
export type PromVectorSample = z.infer<typeof PromVectorSample>;

export const PromQueryData = z.discriminatedUnion('resultType', [
  z.looseObject({ resultType: z.literal('vector'), result: z.array(PromVectorSample) }),
  z.looseObject({ resultType: z.literal('scalar'), result: PromSampleValue }),
  z.looseObject({ resultType: z.literal('matrix'), result: z.array(z.unknown()) }),
  z.looseObject({ resultType: z.literal('string'), result: PromSampleValue }),
]);
export type PromQueryData = z.infer<typeof PromQueryData>;

/** The body of /api/v1/query: a result, or an error (Prometheus answers 400, 422, 503 with it). */
export const PromQueryAnswer = z.discriminatedUnion('status', [
  z.looseObject({
    status: z.literal('success'),
    data: PromQueryData,
    warnings: z.array(z.string()).optional(),
  }),
  z.looseObject({
    status: z.literal('error'),
    errorType: z.string().optional(),
    error: z.string().optional(),
  }),
]);
export type PromQueryAnswer = z.infer<typeof PromQueryAnswer>;

export const MEASUREMENT_OUTCOMES = ['pass', 'fail', 'inconclusive'] as const;
export const MeasurementOutcome = z.enum(MEASUREMENT_OUTCOMES);
export type MeasurementOutcome = z.infer<typeof MeasurementOutcome>;

/** Longest `detail` kept (one sentence). */
export const DETAIL_MAX_LENGTH = 300;
/** Measurements kept per query (the counts cover all of them). */
export const MEASUREMENTS_KEPT = 10;
/** Query records kept per run (a policy edited during a run may leave records of old queries). */
export const RECORDS_KEPT = 20;

/** One measurement of one query. */
export const Measurement = z.strictObject({
  /** Clock ms when it was taken. */
  at: z.number(),
  outcome: MeasurementOutcome,
  /** The value judged (the series nearest to failing, or the one that failed); finite only. */
  value: z.number().optional(),
  /** One sentence: what was seen, e.g. `0.12 on {rollout="a@1"} is not below 0.05`. */
  detail: z.string().max(DETAIL_MAX_LENGTH),
});
export type Measurement = z.infer<typeof Measurement>;

/** What a run knows of one query, matched to the policy's query by `key` (query-key.ts). */
export const QueryRecord = z.strictObject({
  key: z.string(),
  pass: z.number().int().min(0),
  fail: z.number().int().min(0),
  inconclusive: z.number().int().min(0),
  /** The last MEASUREMENTS_KEPT measurements, oldest first. */
  measurements: z.array(Measurement).max(MEASUREMENTS_KEPT),
});
export type QueryRecord = z.infer<typeof QueryRecord>;

/** An analysis run: started after a wave's bake, holds the next wave until its verdict. */
export const AnalysisRun = z.strictObject({
  /** Clock ms when the analysis began; each query's first measurement is due then. */
  startedAt: z.number(),
  /** Least recently measured first. */
  queries: z.array(QueryRecord).max(RECORDS_KEPT),
});
export type AnalysisRun = z.infer<typeof AnalysisRun>;
