/**
 * The success condition of an analysis query, judged on one finite value: its bounds, how far a
 * value is from failing (to pick the series worth naming), and the condition in words.
 */
import type { AnalysisCondition } from '../policy/analysis.js';

/** Whether `value` meets every bound of `condition`. */
export function meetsCondition(condition: AnalysisCondition, value: number): boolean {
  if (condition.below !== undefined && !(value < condition.below)) return false;
  if (condition.atMost !== undefined && !(value <= condition.atMost)) return false;
  if (condition.above !== undefined && !(value > condition.above)) return false;
  if (condition.atLeast !== undefined && !(value >= condition.atLeast)) return false;
  return true;
}

/**
 * Distance from `value` to the nearest bound: the smaller, the closer to failing (negative: the
 * bound is crossed). Ranks series; `meetsCondition` is what judges.
 */
export function conditionMargin(condition: AnalysisCondition, value: number): number {
  const upper = condition.below ?? condition.atMost;
  const lower = condition.above ?? condition.atLeast;
  return Math.min(
    upper === undefined ? Number.POSITIVE_INFINITY : upper - value,
    lower === undefined ? Number.POSITIVE_INFINITY : value - lower,
  );
}

/** The condition in words: `below 0.05`, `at least 100`, `at least 1 and below 5`. */
export function describeCondition(condition: AnalysisCondition): string {
  const parts: string[] = [];
  if (condition.above !== undefined) parts.push(`above ${formatValue(condition.above)}`);
  if (condition.atLeast !== undefined) parts.push(`at least ${formatValue(condition.atLeast)}`);
  if (condition.below !== undefined) parts.push(`below ${formatValue(condition.below)}`);
  if (condition.atMost !== undefined) parts.push(`at most ${formatValue(condition.atMost)}`);
  return parts.join(' and ');
}

/** A number as a person reads it: six significant digits at most, `NaN`, `+Inf`, `-Inf`. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(Number(value.toPrecision(6)));
}
