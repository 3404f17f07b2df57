/**
 * One step of an analysis run, for the scheduler's tick: the queries due now are measured (at
 * once, each bounded by its timeout) and recorded, and the new state comes back with its verdict
 * and the time of the next measurement. The caller stores `run` (JSON) and comes back at
 * `nextAt`; nothing here waits for that.
 */
import type { AnalysisQuery } from '../policy/analysis.js';
import { type MeasureOptions, measure } from './measure.js';
import { nextDue } from './next-due.js';
import { recordMeasurement } from './record-measurement.js';
import type { AnalysisRun, Measurement } from './schema.js';
import { type AnalysisVerdict, verdict } from './verdict.js';

export interface AnalysisStep {
  run: AnalysisRun;
  verdict: AnalysisVerdict;
  /** The measurements taken in this step, in the order of the due queries. */
  measured: { query: AnalysisQuery; measurement: Measurement }[];
  /** Clock ms of the next measurement; undefined once there is a verdict. */
  nextAt: number | undefined;
}

export type MeasureQuery = (query: AnalysisQuery, options: MeasureOptions) => Promise<Measurement>;

export async function advanceAnalysis(
  run: AnalysisRun,
  queries: readonly AnalysisQuery[],
  options: MeasureOptions & { measure?: MeasureQuery },
): Promise<AnalysisStep> {
  const { measure: measureQuery = measure, ...measureOptions } = options;
  const { due } = nextDue(run, queries, options.now);
  const measured = await Promise.all(
    due.map(async (query) => ({ query, measurement: await measureQuery(query, measureOptions) })),
  );
  let next = run;
  for (const m of measured) next = recordMeasurement(next, m.query, m.measurement);
  return {
    run: next,
    verdict: verdict(next, queries),
    measured,
    nextAt: nextDue(next, queries, options.now).nextAt,
  };
}
