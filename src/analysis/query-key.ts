/**
 * Which record of a run belongs to which query of the policy: a digest of what the query
 * measures (where, what, against which condition). A policy edited during an analysis keeps the
 * counts of a query whose limits, count or interval changed, and starts afresh for one that now
 * measures something else.
 */
import { createHash } from 'node:crypto';
import type { AnalysisQuery } from '../policy/analysis.js';

export function queryKey(query: Pick<AnalysisQuery, 'prometheus' | 'query' | 'condition'>): string {
  const { below, atMost, above, atLeast } = query.condition;
  const text = JSON.stringify([query.prometheus, query.query, [below, atMost, above, atLeast]]);
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}
