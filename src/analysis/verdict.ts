/**
 * The verdict of an analysis run, pure. Per query, from its counts:
 *   failed        once failed measurements exceed `failureLimit`;
 *   inconclusive  once inconclusive measurements exceed `inconclusiveLimit`;
 *   passed        once `count` measurements are done without either (and at least one passed);
 *   running       otherwise.
 * The run: `failed` when any query failed, else `inconclusive` when any is, else `passed` when
 * every query passed (a gate without queries passes), else `running`. The integrator halts the
 * rollout on `failed`, pauses it on `inconclusive` (never passes it) and starts the next wave on
 * `passed`.
 */
import { type AnalysisQuery, analysisQueryName } from '../policy/analysis.js';
import { queryKey } from './query-key.js';
import type { AnalysisRun, Measurement, MeasurementOutcome, QueryRecord } from './schema.js';

export const ANALYSIS_STATUSES = ['running', 'passed', 'failed', 'inconclusive'] as const;
export type AnalysisStatus = (typeof ANALYSIS_STATUSES)[number];

export interface QueryVerdict {
  /** The query's name (`query N` when it has none). */
  name: string;
  status: AnalysisStatus;
  /** Measurements done, and of them each outcome. */
  done: number;
  pass: number;
  fail: number;
  inconclusive: number;
  /** The measurement that explains the status best (the last of the deciding outcome), if any. */
  last?: Measurement;
  /** One sentence, e.g. `error-share: 1 of 2 measurements failed (failureLimit 0): 0.12 is not below 0.05`. */
  reason: string;
}

export interface AnalysisVerdict {
  status: AnalysisStatus;
  /** One sentence for status, history and events. */
  reason: string;
  queries: QueryVerdict[];
}

type Counts = Pick<QueryRecord, 'pass' | 'fail' | 'inconclusive'>;
type Limits = Pick<AnalysisQuery, 'count' | 'failureLimit' | 'inconclusiveLimit'>;

/** A query's status from its counts and limits. */
export function queryStatus(counts: Counts, limits: Limits): AnalysisStatus {
  if (counts.fail > limits.failureLimit) return 'failed';
  if (counts.inconclusive > limits.inconclusiveLimit) return 'inconclusive';
  if (counts.pass + counts.fail + counts.inconclusive >= limits.count)
    return counts.pass > 0 ? 'passed' : 'inconclusive';
  return 'running';
}

function lastOf(record: QueryRecord | undefined, outcome?: MeasurementOutcome): Measurement | undefined {
  const list = record?.measurements ?? [];
  for (let i = list.length - 1; i >= 0; i--) {
    const m = list[i];
    if (m && (outcome === undefined || m.outcome === outcome)) return m;
  }
  return undefined;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function queryVerdict(run: AnalysisRun, query: AnalysisQuery, index: number): QueryVerdict {
  const key = queryKey(query);
  const record = run.queries.find((r) => r.key === key);
  const counts = {
    pass: record?.pass ?? 0,
    fail: record?.fail ?? 0,
    inconclusive: record?.inconclusive ?? 0,
  };
  const done = counts.pass + counts.fail + counts.inconclusive;
  const status = queryStatus(counts, query);
  const name = analysisQueryName(query, index);
  const deciding: MeasurementOutcome | undefined =
    status === 'failed'
      ? 'fail'
      : status === 'inconclusive' && counts.inconclusive > 0
        ? 'inconclusive'
        : undefined;
  const last = lastOf(record, deciding);
  const seen = last ? `; last: ${last.detail}` : '';
  let reason: string;
  switch (status) {
    case 'failed':
      reason = `${name}: ${counts.fail} of ${plural(done, 'measurement')} failed (failureLimit ${query.failureLimit})${seen}`;
      break;
    case 'inconclusive':
      reason =
        counts.inconclusive > query.inconclusiveLimit
          ? `${name}: ${counts.inconclusive} of ${plural(done, 'measurement')} inconclusive (inconclusiveLimit ${query.inconclusiveLimit})${seen}`
          : `${name}: none of ${plural(done, 'measurement')} passed${seen}`;
      break;
    case 'passed':
      reason = `${name}: ${counts.pass} of ${plural(done, 'measurement')} passed${seen}`;
      break;
    case 'running':
      reason = `${name}: ${done} of ${query.count} measurements (${counts.pass} passed, ${counts.fail} failed, ${counts.inconclusive} inconclusive)${seen}`;
      break;
  }
  return { name, status, done, ...counts, ...(last ? { last } : {}), reason };
}

export function verdict(run: AnalysisRun, queries: readonly AnalysisQuery[]): AnalysisVerdict {
  const each = queries.map((q, i) => queryVerdict(run, q, i));
  const having = (status: AnalysisStatus) => each.filter((v) => v.status === status);
  for (const status of ['failed', 'inconclusive'] as const) {
    const hit = having(status);
    if (hit.length > 0) return { status, reason: hit.map((v) => v.reason).join('; '), queries: each };
  }
  if (each.every((v) => v.status === 'passed'))
    return {
      status: 'passed',
      reason:
        each.length === 0
          ? 'no analysis queries'
          : `every query held: ${each.map((v) => `${v.name} ${v.pass} of ${v.done} passed`).join(', ')}`,
      queries: each,
    };
  return {
    status: 'running',
    reason: `measuring: ${each.map((v, i) => `${v.name} ${v.done} of ${queries[i]?.count}`).join(', ')}`,
    queries: each,
  };
}
