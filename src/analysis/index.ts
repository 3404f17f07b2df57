/**
 * Analysis gates: Prometheus queries that must hold before a rollout's next wave starts.
 * Pure state (`startAnalysis`, `recordMeasurement`, `nextDue`, `verdict`) behind one I/O shell
 * (`measure`, one query; `advanceAnalysis`, one scheduler step). The policy's schema is
 * src/policy/analysis.ts.
 */
export { type AnalysisStep, advanceAnalysis, type MeasureQuery } from './advance-analysis.js';
export { type Judgement, judgeResult } from './judge-result.js';
export { ANSWER_SIZE_CAP, type MeasureOptions, measure } from './measure.js';
export { describeCondition, meetsCondition } from './meets-condition.js';
export { type DueQueries, nextDue } from './next-due.js';
export { queryKey } from './query-key.js';
export { findRecord, recordMeasurement, startAnalysis } from './record-measurement.js';
export { type QueryVars, renderQuery } from './render-query.js';
export { resolveHeaders } from './resolve-headers.js';
export {
  AnalysisRun,
  MEASUREMENTS_KEPT,
  Measurement,
  MeasurementOutcome,
  PromQueryAnswer,
  QueryRecord,
} from './schema.js';
export {
  ANALYSIS_STATUSES,
  type AnalysisStatus,
  type AnalysisVerdict,
  type QueryVerdict,
  queryStatus,
  queryVerdict,
  verdict,
} from './verdict.js';
