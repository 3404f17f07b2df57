/**
 * The zod field for a duration in a policy file. Operators write `90s`, `10m`, `2h` (or `1h30m`,
 * `500ms`, `1d`); the parsed policy holds milliseconds. A bare number is refused on purpose: `30`
 * could mean seconds or minutes, and a wrong guess turns a 30-minute time-out into 30 ms.
 */
import { z } from 'zod';
import { formatDuration, parseDuration } from '../lib/duration.js';

export const DURATION_HINT = 'expected a duration like 90s, 10m, 2h';

export interface DurationBounds {
  /** Smallest accepted duration in milliseconds (inclusive); default: anything above 0. */
  min?: number;
  /** Largest accepted duration in milliseconds (inclusive). */
  max?: number;
}

/** A duration written as text, parsed to milliseconds. */
export function durationField(bounds: DurationBounds = {}) {
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
        ctx.addIssue({ code: 'custom', message: `${DURATION_HINT}, got ${JSON.stringify(text)}` });
        return z.NEVER;
      }
      if (bounds.min === undefined ? ms <= 0 : ms < bounds.min) {
        const floor = bounds.min === undefined ? 'longer than 0' : `at least ${formatDuration(bounds.min)}`;
        ctx.addIssue({ code: 'custom', message: `must be ${floor}, got ${text}` });
        return z.NEVER;
      }
      if (bounds.max !== undefined && ms > bounds.max) {
        ctx.addIssue({
          code: 'custom',
          message: `must be at most ${formatDuration(bounds.max)}, got ${text}`,
        });
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
