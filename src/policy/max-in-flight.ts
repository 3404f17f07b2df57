/**
 * `maxInFlight`: Collectors of a policy with an unfinished task at once, written as a count (`50`)
 * or as a share of the selected Collectors (`"10%"`, like waves). A share is resolved against the
 * rollout's selection by `resolveMaxInFlight`: rounded up, at least 1.
 *
 * The parsed policy keeps `maxInFlight: number` (code written before percentages reads it) and
 * adds `maxInFlightPercent` for a share: see `splitMaxInFlight`. Read the limit through
 * `resolveMaxInFlight(maxInFlightOf(policy), selectedTotal)`.
 */
import { z } from 'zod';

/** The limit as written: a count or a share of the selection. */
export type MaxInFlight = { kind: 'count'; count: number } | { kind: 'percent'; percent: number };

export const MAX_IN_FLIGHT_COUNT = 100_000;

const HINT = 'expected a number of Collectors (e.g. 50) or a percentage of the selected ones (e.g. "10%")';
const PERCENT = /^(\d+(?:\.\d+)?)\s*%$/;

function countIssue(value: number): string | undefined {
  if (!Number.isInteger(value)) return 'must be a whole number';
  if (value < 1) return 'must be at least 1';
  if (value > MAX_IN_FLIGHT_COUNT) return `must be at most ${MAX_IN_FLIGHT_COUNT}`;
  return undefined;
}

/** The zod field: a whole number 1..100000, or a percentage above 0 and at most 100. */
export const MaxInFlight = z
  .union([z.number(), z.string()], { error: (iss) => `${HINT}, got ${JSON.stringify(iss.input)}` })
  .transform((value, ctx): MaxInFlight => {
    if (typeof value === 'number') {
      const issue = countIssue(value);
      if (issue === undefined) return { kind: 'count', count: value };
      ctx.addIssue({ code: 'custom', message: issue });
      return z.NEVER;
    }
    const m = PERCENT.exec(value.trim());
    const percent = m ? Number(m[1]) : Number.NaN;
    if (percent > 0 && percent <= 100) return { kind: 'percent', percent };
    const message = m
      ? `a percentage must be above 0% and at most 100%, got ${JSON.stringify(value)}`
      : /^\d+$/.test(value.trim())
        ? `${HINT}, got the text ${JSON.stringify(value)}: write ${value.trim()} without quotes, or "${value.trim()}%"`
        : `${HINT}, got ${JSON.stringify(value)}`;
    ctx.addIssue({ code: 'custom', message });
    return z.NEVER;
  });

/** How the parsed policy holds the limit. */
export interface MaxInFlightFields {
  /**
   * The count when one was written. For a percentage it is 1, a safe floor for code that does not
   * resolve percentages; read the limit with `resolveMaxInFlight(maxInFlightOf(policy), total)`.
   */
  maxInFlight: number;
  /** The percentage (0 < p <= 100) when one was written; undefined for a count. */
  maxInFlightPercent?: number;
}

/** Replaces the parsed `maxInFlight` union with MaxInFlightFields (used by the Policy schema). */
export function splitMaxInFlight<T extends { maxInFlight: MaxInFlight }>(
  policy: T,
): Omit<T, 'maxInFlight'> & MaxInFlightFields {
  const { maxInFlight, ...rest } = policy;
  return maxInFlight.kind === 'count'
    ? { ...rest, maxInFlight: maxInFlight.count }
    : { ...rest, maxInFlight: 1, maxInFlightPercent: maxInFlight.percent };
}

/** The limit as written, from a parsed policy. */
export function maxInFlightOf(policy: MaxInFlightFields): MaxInFlight {
  return policy.maxInFlightPercent === undefined
    ? { kind: 'count', count: policy.maxInFlight }
    : { kind: 'percent', percent: policy.maxInFlightPercent };
}

/**
 * The in-flight limit for a rollout of `selectedTotal` selected Collectors: the count, or the
 * share rounded up and at least 1 (so that a rollout of few Collectors still moves).
 */
export function resolveMaxInFlight(value: MaxInFlight, selectedTotal: number): number {
  if (!Number.isInteger(selectedTotal) || selectedTotal < 0)
    throw new RangeError(`selectedTotal must be a whole number >= 0, got ${selectedTotal}`);
  if (value.kind === 'count') return value.count;
  // The epsilon keeps 0.1 * 30 (3.0000000000000004) from rounding up to 4.
  return Math.max(1, Math.ceil((selectedTotal * value.percent) / 100 - 1e-9));
}
