/**
 * The zod field for a duration in a policy file. Operators write `90s`, `10m`, `2h` (or `1h30m`,
 * `500ms`, `1d`); the parsed policy holds milliseconds. A bare number is refused on purpose: `30`
 * could mean seconds or minutes, and a wrong guess turns a 30-minute time-out into 30 ms.
 *
 * Every duration is finite and at most MAX_DURATION_MS (365d), or its field's own smaller `max`:
 * `taskTimeout: 999…9d` once read as Infinity, was stored as null, and timed every task out.
 */
import { z } from 'zod';
import { formatDuration, isDurationText, parseDuration } from '../lib/duration.js';

export const DURATION_HINT = 'expected a duration like 90s, 10m, 2h';

const DAY_MS = 86_400_000;
/** The longest duration any policy field accepts: a year. */
export const MAX_DURATION_MS = 365 * DAY_MS;

/** A bound as an operator would write it: `365d`, `30d`, `24h`, `2m`. */
function formatBound(ms: number): string {
  return ms > DAY_MS && ms % DAY_MS === 0 ? `${ms / DAY_MS}d` : formatDuration(ms);
}

export interface DurationBounds {
  /** Smallest accepted duration in milliseconds (inclusive); default: anything above 0. */
  min?: number;
  /** Largest accepted duration in milliseconds (inclusive); default and ceiling MAX_DURATION_MS. */
  max?: number;
}

/** A duration written as text, parsed to milliseconds. */
export function durationField(bounds: DurationBounds = {}) {
  const max = Math.min(bounds.max ?? MAX_DURATION_MS, MAX_DURATION_MS);
  return z
    .string({
      error: (iss) =>
        iss.input === undefined
          ? 'required field is missing'
          : typeof iss.input === 'number'
            ? `${DURATION_HINT} (a bare number has no unit: write ${iss.input}s or ${iss.input}m)`
            : `${DURATION_HINT}, got ${JSON.stringify(iss.input)}`,
    })
    .transform((text, ctx) => {
      const ms = parseDuration(text);
      if (ms === undefined) {
        // Written like a duration, but too large for a number.
        const message = isDurationText(text)
          ? `must be at most ${formatBound(max)}, got ${text.trim()}`
          : `${DURATION_HINT}, got ${JSON.stringify(text)}`;
        ctx.addIssue({ code: 'custom', message });
        return z.NEVER;
      }
      if (bounds.min === undefined ? ms <= 0 : ms < bounds.min) {
        const floor = bounds.min === undefined ? 'longer than 0' : `at least ${formatDuration(bounds.min)}`;
        ctx.addIssue({ code: 'custom', message: `must be ${floor}, got ${text}` });
        return z.NEVER;
      }
      if (ms > max) {
        ctx.addIssue({ code: 'custom', message: `must be at most ${formatBound(max)}, got ${text}` });
        return z.NEVER;
      }
      return ms;
    });
}

/** Milliseconds of a duration written in source code (defaults); throws on a typo. */
export function ms(text: string): number {
  const value = parseDuration(text);
  if (value === undefined) throw new RangeError(`not a duration: ${text}`);
  return value;
}
