/**
 * Date-times in a policy file (`schedule`, `freeze`), parsed to epoch milliseconds. Two ways of
 * writing one, and no third: an ISO 8601 date-time with its offset (`2026-12-20T18:00+01:00`,
 * `2026-12-20T17:00:00Z`), which is an instant by itself; or a local date-time
 * (`2026-12-20 18:00`) read in the `timeZone` field of the same object. A local date-time without
 * a `timeZone` is refused, since it would mean a different instant on every host, and so is one
 * that the zone skips (clocks moved forward) or shows twice (clocks moved back): the error says
 * which offset to write.
 *
 * The text is checked field by field (`dateTimeText`); the instant needs the object's
 * `timeZone`, so the object resolves it (`resolveDateTimes`) and reports at the field.
 */
import { z } from 'zod';
import { formatDuration } from '../../lib/duration.js';
import { formatInstant, formatOffset, formatWallTime } from './format-instant.js';
import { instantsOfWallTime, isKnownTimeZone, zoneOffset } from './zone-offset.js';

export const DATE_TIME_HINT =
  'expected a date-time with an offset like 2026-12-20T18:00+01:00 (Z for UTC), or a local one like "2026-12-20 18:00" with timeZone set beside it';

/** Earliest and latest year accepted: a typo such as 2206 is refused rather than waited for. */
export const MIN_YEAR = 2000;
export const MAX_YEAR = 2100;

const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,3}))?)?\s*(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)?$/;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const MAX_OFFSET_MS = 18 * 3_600_000;

/** A date-time as written: its wall-clock time (held as if UTC) and its offset when given. */
export interface WrittenDateTime {
  text: string;
  /** The written date and time in milliseconds, as if it were UTC. */
  wall: number;
  /** The written offset in milliseconds (east positive); undefined for a local date-time. */
  offset?: number;
}

function parseDateTime(text: string): WrittenDateTime | string {
  const trimmed = text.trim();
  if (DATE_ONLY.test(trimmed))
    return `${JSON.stringify(text)} has no time of day: write one, e.g. "${trimmed} 00:00" (the day starts at 00:00)`;
  const m = DATE_TIME.exec(trimmed);
  if (!m) return `${DATE_TIME_HINT}; got ${JSON.stringify(text)}`;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const millis = Number((m[7] ?? '').padEnd(3, '0'));
  if (year < MIN_YEAR || year > MAX_YEAR)
    return `the year must be between ${MIN_YEAR} and ${MAX_YEAR}, got ${JSON.stringify(text)}`;
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const check = new Date(wall);
  if (
    month < 1 ||
    month > 12 ||
    check.getUTCDate() !== day ||
    check.getUTCMonth() !== month - 1 ||
    hour > 23 ||
    minute > 59 ||
    second > 59
  )
    return `not a calendar date and time: ${JSON.stringify(text)}`;
  if (m[8]) return { text, wall, offset: 0 };
  if (!m[9]) return { text, wall };
  const offset = (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 3_600_000 + Number(m[11] ?? 0) * 60_000);
  if (Math.abs(offset) > MAX_OFFSET_MS || Number(m[11] ?? 0) > 59)
    return `the offset must be between -18:00 and +18:00, got ${JSON.stringify(text)}`;
  return { text, wall, offset };
}

/** The zod field of one date-time, checked as text; the object resolves it to an instant. */
export function dateTimeText() {
  return z
    .string({
      error: (iss) =>
        iss.input === undefined
          ? 'required field is missing'
          : `${DATE_TIME_HINT}; got ${JSON.stringify(iss.input)}`,
    })
    .transform((text, ctx): WrittenDateTime => {
      const parsed = parseDateTime(text);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    });
}

/** The zod field `timeZone` of an object holding date-times: an IANA name or UTC. */
export function dateTimeZoneField() {
  return z.string({ error: 'expected a time zone such as UTC or Europe/Berlin' }).refine(isKnownTimeZone, {
    error: (iss) =>
      `unknown time zone ${JSON.stringify(iss.input)}: use an IANA name such as Europe/Berlin, or UTC`,
  });
}

/** The instant of a written date-time, or the reason there is none. */
export function resolveDateTime(
  written: WrittenDateTime,
  timeZone: string | undefined,
): { ok: true; epochMs: number } | { ok: false; reason: string } {
  if (written.offset !== undefined) return { ok: true, epochMs: written.wall - written.offset };
  const iso = formatWallTime(written.wall).replace(' ', 'T');
  if (timeZone === undefined)
    return {
      ok: false,
      reason: `${JSON.stringify(written.text)} has no offset and no timeZone is set, so its instant would depend on the host: write ${iso}Z for UTC or give its offset (e.g. ${iso}+01:00), or add a timeZone (e.g. Europe/Berlin) beside it`,
    };
  const instants = instantsOfWallTime(timeZone, written.wall);
  const [first, second] = instants;
  if (first === undefined) {
    const jump =
      zoneOffset(timeZone, written.wall + 86_400_000) - zoneOffset(timeZone, written.wall - 86_400_000);
    return {
      ok: false,
      reason: `${JSON.stringify(written.text)} does not exist in ${timeZone}: the clocks move forward ${formatDuration(jump)} over it; write a time outside that gap`,
    };
  }
  if (second !== undefined) {
    const [a, b] = [formatOffset(written.wall - first), formatOffset(written.wall - second)];
    return {
      ok: false,
      reason: `${JSON.stringify(written.text)} occurs twice in ${timeZone} (clocks move back): write which one with its offset, ${iso}${a} (the first) or ${iso}${b} (the second)`,
    };
  }
  return { ok: true, epochMs: first };
}

/**
 * Resolves the date-time fields `keys` of `value` with its `timeZone`, reporting each failure at
 * its field; undefined when any failed. Fields that are absent stay absent.
 */
export function resolveDateTimes<K extends string>(
  value: Partial<Record<K, WrittenDateTime>> & { timeZone?: string },
  keys: readonly K[],
  ctx: z.RefinementCtx,
): Partial<Record<K, number>> | undefined {
  const out: Partial<Record<K, number>> = {};
  let failed = false;
  for (const key of keys) {
    const written = value[key] as WrittenDateTime | undefined;
    if (written === undefined) continue;
    const result = resolveDateTime(written, value.timeZone);
    if (result.ok) out[key] = result.epochMs;
    else {
      ctx.addIssue({ code: 'custom', message: result.reason, path: [key] });
      failed = true;
    }
  }
  return failed ? undefined : out;
}

/**
 * Whether `end` is after `start`; when it is not, the issue is reported at the field `end`, both
 * instants shown in `timeZone` (UTC when undefined).
 */
export function checkEndAfterStart(
  start: number,
  end: number,
  timeZone: string | undefined,
  ctx: z.RefinementCtx,
): boolean {
  if (end <= start) {
    ctx.addIssue({
      code: 'custom',
      path: ['end'],
      message: `must be after start (${formatInstant(end, timeZone)} is not after ${formatInstant(start, timeZone)})`,
    });
    return false;
  }
  return true;
}
