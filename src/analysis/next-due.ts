/**
 * When the queries of an analysis run are measured, pure. A query's first measurement is due when
 * the run starts, each later one `interval` after the previous one was taken. Nothing is due once
 * the run has a verdict, nor for a query whose own verdict is settled (the others go on).
 */
import type { AnalysisQuery } from '../policy/analysis.js';
import { findRecord } from './record-measurement.js';
import type { AnalysisRun } from './schema.js';
import { queryVerdict, verdict } from './verdict.js';

export interface DueQueries {
  /** The queries to measure now, in the policy's order. */
  due: AnalysisQuery[];
  /** Clock ms at which the next measurement is due (at or before `now` when `due` is not empty); undefined once the run has a verdict. */
  nextAt: number | undefined;
}

export function nextDue(run: AnalysisRun, queries: readonly AnalysisQuery[], now: number): DueQueries {
  if (verdict(run, queries).status !== 'running') return { due: [], nextAt: undefined };
  const due: AnalysisQuery[] = [];
  let nextAt: number | undefined;
  queries.forEach((query, index) => {
    if (queryVerdict(run, query, index).status !== 'running') return;
    const last = findRecord(run, query)?.measurements.at(-1);
    const at = last ? last.at + query.interval : run.startedAt;
    if (at <= now) due.push(query);
    nextAt = nextAt === undefined ? at : Math.min(nextAt, at);
  });
  return { due, nextAt };
}
