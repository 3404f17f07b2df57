/**
 * An analysis run's state moves only through these pure functions: `startAnalysis` (no
 * measurement yet: every query is due at once) and `recordMeasurement` (counts one more outcome
 * and keeps the last MEASUREMENTS_KEPT measurements). A measurement for a query whose verdict is
 * already settled is dropped, so the counts never run past the point that decided. Returns new
 * objects; the input is not changed.
 */
import type { AnalysisQuery } from '../policy/analysis.js';
import { queryKey } from './query-key.js';
import {
  type AnalysisRun,
  DETAIL_MAX_LENGTH,
  MEASUREMENTS_KEPT,
  type Measurement,
  type QueryRecord,
  RECORDS_KEPT,
} from './schema.js';
import { queryStatus } from './verdict.js';

export function startAnalysis(now: number): AnalysisRun {
  return { startedAt: now, queries: [] };
}

/** The record of `query` in `run`, or undefined before its first measurement. */
export function findRecord(run: AnalysisRun, query: AnalysisQuery): QueryRecord | undefined {
  const key = queryKey(query);
  return run.queries.find((r) => r.key === key);
}

/** `text` cut to `max` characters, ending in `…` when cut. */
export function clip(text: string, max = DETAIL_MAX_LENGTH): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export function recordMeasurement(
  run: AnalysisRun,
  query: AnalysisQuery,
  measurement: Measurement,
): AnalysisRun {
  const key = queryKey(query);
  const before = run.queries.find((r) => r.key === key) ?? {
    key,
    pass: 0,
    fail: 0,
    inconclusive: 0,
    measurements: [],
  };
  if (queryStatus(before, query) !== 'running') return run;
  const kept: Measurement = {
    at: measurement.at,
    outcome: measurement.outcome,
    ...(measurement.value !== undefined && Number.isFinite(measurement.value)
      ? { value: measurement.value }
      : {}),
    detail: clip(measurement.detail),
  };
  const after: QueryRecord = {
    ...before,
    [measurement.outcome]: before[measurement.outcome] + 1,
    measurements: [...before.measurements, kept].slice(-MEASUREMENTS_KEPT),
  };
  // The record just measured goes last: the least recently measured are dropped first.
  const others = run.queries.filter((r) => r.key !== key);
  return { ...run, queries: [...others, after].slice(-RECORDS_KEPT) };
}
