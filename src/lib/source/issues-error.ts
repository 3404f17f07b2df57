/**
 * Turns the problems found in one file into one ConfigError: each at its line and column, in the
 * order of the file, reasons clipped, at most MAX_ISSUES listed and the rest counted, so that an
 * error stays readable (and small) whatever the file holds.
 */
import type { LineCounter } from 'yaml';
import { ConfigError, formatIssue, type SourceIssue } from '../errors.js';
import { MAX_ISSUES, MAX_REASON_LENGTH } from './source-limits.js';

/** `reason`, cut to MAX_REASON_LENGTH. */
export const clipReason = (reason: string) =>
  reason.length > MAX_REASON_LENGTH ? `${reason.slice(0, MAX_REASON_LENGTH - 1)}…` : reason;

/** The issue at `offset` in the text that `counter` has counted (line 1, column 1 when unknown). */
export function issueAt(
  file: string,
  counter: LineCounter,
  offset: number | undefined,
  field: string,
  reason: string,
) {
  const pos = offset === undefined ? undefined : counter.linePos(offset);
  return { file, line: pos?.line ?? 1, column: pos?.col ?? 1, field, reason: clipReason(reason) };
}

/** One ConfigError for `issues`: in the order of the file, at most MAX_ISSUES and a count of the rest. */
export function issuesError(issues: SourceIssue[], more?: { count: number; at: SourceIssue }): ConfigError {
  issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0));
  let listed = issues;
  let rest = more;
  if (!rest && issues.length > MAX_ISSUES) {
    listed = issues.slice(0, MAX_ISSUES);
    rest = { count: issues.length - MAX_ISSUES, at: issues[MAX_ISSUES] as SourceIssue };
  }
  if (rest) {
    const n = rest.count;
    listed.push({
      ...rest.at,
      field: '',
      reason: `and ${n} more problem${n === 1 ? '' : 's'} (fix the ones above first)`,
    });
  }
  return new ConfigError(listed.map(formatIssue).join('\n'), listed);
}
