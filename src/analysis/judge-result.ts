/**
 * One measurement's outcome from Prometheus's query result, pure. Every series of an instant
 * vector (or the scalar) is judged on its own:
 * - `fail` when any finite value does not meet the condition (the worst one is named);
 * - else `inconclusive` when there is nothing to judge or a value cannot be judged: no series,
 *   NaN, ±Inf, a native histogram sample, a range vector or a string;
 * - else `pass` (the series nearest to failing is named).
 * A finite value that fails wins over a series that cannot be judged: the failure is a fact.
 */
import type { AnalysisCondition } from '../policy/analysis.js';
import { conditionMargin, describeCondition, formatValue, meetsCondition } from './meets-condition.js';
import type { MeasurementOutcome, PromQueryData } from './schema.js';

export interface Judgement {
  outcome: MeasurementOutcome;
  /** The value named in the detail, when it is finite. */
  value?: number;
  /** One sentence. */
  detail: string;
}

interface Series {
  labels: string;
  value: number | undefined;
}

const LABELS_MAX_LENGTH = 160;

/** Prometheus's text for a sample value: a number, `NaN`, `+Inf` or `-Inf`. */
export function parseSampleValue(text: string): number {
  const t = text.trim();
  if (t === '+Inf' || t === 'Inf') return Number.POSITIVE_INFINITY;
  if (t === '-Inf') return Number.NEGATIVE_INFINITY;
  if (t === '' || t === 'NaN') return Number.NaN;
  return Number(t);
}

/** `{outcome="failed", rollout="a@1"}` (the metric name left out; long sets cut short). */
export function formatLabels(metric: Record<string, string>): string {
  const pairs = Object.keys(metric)
    .filter((k) => k !== '__name__')
    .sort()
    .map((k) => `${k}=${JSON.stringify(metric[k])}`);
  const text = `{${pairs.join(', ')}}`;
  return text.length > LABELS_MAX_LENGTH ? `${text.slice(0, LABELS_MAX_LENGTH - 2)}…}` : text;
}

function seriesOf(data: PromQueryData): Series[] | string {
  switch (data.resultType) {
    case 'vector':
      return data.result.map((s) => ({
        labels: Object.keys(s.metric).some((k) => k !== '__name__') ? formatLabels(s.metric) : '',
        value: s.value ? parseSampleValue(s.value[1]) : undefined,
      }));
    case 'scalar':
      return [{ labels: '', value: parseSampleValue(data.result[1]) }];
    case 'matrix':
      return 'the query returned a range vector: write an instant query (e.g. wrap it in max_over_time or rate)';
    case 'string':
      return 'the query returned a string, not a number';
  }
}

const on = (s: Series) => (s.labels ? ` on ${s.labels}` : '');

export function judgeResult(data: PromQueryData, condition: AnalysisCondition): Judgement {
  const all = seriesOf(data);
  if (typeof all === 'string') return { outcome: 'inconclusive', detail: all };
  if (all.length === 0) return { outcome: 'inconclusive', detail: 'no data: the query returned no series' };
  const wanted = describeCondition(condition);
  const finite = all.filter((s): s is Series & { value: number } => Number.isFinite(s.value));
  const byMargin = [...finite].sort(
    (a, b) => conditionMargin(condition, a.value) - conditionMargin(condition, b.value),
  );
  const failing = byMargin.filter((s) => !meetsCondition(condition, s.value));
  const of = (n: number) => (all.length > 1 ? ` (${n} of ${all.length} series)` : '');
  const worst = failing[0];
  if (worst)
    return {
      outcome: 'fail',
      value: worst.value,
      detail: `${formatValue(worst.value)}${on(worst)} is not ${wanted}${of(failing.length)}`,
    };
  const unjudged = all.filter((s) => !Number.isFinite(s.value));
  const first = unjudged[0];
  if (first) {
    const what = first.value === undefined ? 'a histogram sample' : formatValue(first.value);
    return {
      outcome: 'inconclusive',
      detail: `${what}${on(first)} cannot be judged${of(unjudged.length)}`,
    };
  }
  const nearest = byMargin[0] as Series & { value: number };
  return {
    outcome: 'pass',
    value: nearest.value,
    detail:
      all.length === 1
        ? `${formatValue(nearest.value)}${on(nearest)} is ${wanted}`
        : `all ${all.length} series are ${wanted} (nearest: ${formatValue(nearest.value)}${on(nearest)})`,
  };
}
