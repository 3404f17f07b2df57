/**
 * UTC offsets of IANA time zones, from Node's Intl (full ICU), without a time-zone library.
 * `zoneOffset` reads one offset; `zoneOffsetSegments` turns a span of time into pieces of
 * constant offset, so that the window and date-time code can convert between instants and
 * wall-clock times with plain arithmetic instead of one Intl call per minute. This module holds
 * the one Intl formatter per zone (`wallClock`, `isKnownTimeZone`); a zone that this Node.js does
 * not know is read as UTC.
 */

const SECOND = 1000;
const HOUR = 3_600_000;
/** Offsets are sampled this far apart; real zones change their offset at most once in it. */
const SAMPLE_STEP = 6 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat | undefined>();

/** A cached formatter for `timeZone`, or undefined when this Node.js does not know the zone. */
function formatterFor(timeZone: string): Intl.DateTimeFormat | undefined {
  if (formatters.has(timeZone)) return formatters.get(timeZone);
  let f: Intl.DateTimeFormat | undefined;
  try {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      weekday: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
  } catch {
    f = undefined;
  }
  formatters.set(timeZone, f);
  return f;
}

/** Whether `name` is a time zone that this Node.js knows (IANA names such as `Europe/Berlin`, or `UTC`). */
export function isKnownTimeZone(name: string): boolean {
  return formatterFor(name) !== undefined;
}

/** What the wall clock of a zone shows at an instant; `weekday` as Intl writes it (`Mon`). */
export interface WallClock {
  weekday: string;
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** The wall clock of `timeZone` at `epochMs` (of UTC when the zone is unknown). */
export function wallClock(timeZone: string, epochMs: number): WallClock {
  const formatter = formatterFor(timeZone) ?? (formatterFor('UTC') as Intl.DateTimeFormat);
  const wall: WallClock = { weekday: '', year: 0, month: 1, day: 1, hour: 0, minute: 0, second: 0 };
  for (const { type, value } of formatter.formatToParts(epochMs)) {
    if (type === 'weekday') wall.weekday = value;
    else if (
      type === 'year' ||
      type === 'month' ||
      type === 'day' ||
      type === 'hour' ||
      type === 'minute' ||
      type === 'second'
    )
      wall[type] = Number(value);
  }
  return wall;
}

function isUtc(timeZone: string): boolean {
  return timeZone === 'UTC' || timeZone === 'Etc/UTC' || formatterFor(timeZone) === undefined;
}

/** Offset of `timeZone` from UTC at `epochMs`, in milliseconds (east positive; 0 for an unknown zone). */
export function zoneOffset(timeZone: string, epochMs: number): number {
  if (isUtc(timeZone)) return 0;
  const wall = wallClock(timeZone, epochMs);
  const asUtc = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute, wall.second);
  const wholeSecond = Math.floor(epochMs / SECOND) * SECOND;
  return asUtc - wholeSecond;
}

/** From `start` on (until the next segment's start), wall-clock time is the instant plus `offset`. */
export interface OffsetSegment {
  start: number;
  offset: number;
}

/** The first whole second in (`low`, `high`] at which the offset differs from the one at `low`. */
function transitionBetween(timeZone: string, low: number, high: number, before: number): number {
  let lo = Math.floor(low / SECOND);
  let hi = Math.ceil(high / SECOND);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (zoneOffset(timeZone, mid * SECOND) === before) lo = mid;
    else hi = mid;
  }
  return hi * SECOND;
}

/**
 * The offsets of `timeZone` over [`from`, `to`): the first segment starts at `from`, each later
 * one at a transition (to the second). About (to - from) / 6h Intl calls, plus ~15 per transition.
 */
export function zoneOffsetSegments(timeZone: string, from: number, to: number): OffsetSegment[] {
  let offset = zoneOffset(timeZone, from);
  const segments: OffsetSegment[] = [{ start: from, offset }];
  if (isUtc(timeZone)) return segments;
  for (let low = from; low < to; low += SAMPLE_STEP) {
    const high = Math.min(low + SAMPLE_STEP, to);
    const next = zoneOffset(timeZone, high);
    if (next === offset) continue;
    const at = transitionBetween(timeZone, low, high, offset);
    if (at < to) segments.push({ start: at, offset: zoneOffset(timeZone, at) });
    offset = next;
  }
  return segments;
}

const DAY = 24 * HOUR;
const CACHE_LIMIT = 1000;
const segmentCache = new Map<string, OffsetSegment[]>();

/**
 * Offset segments covering at least [`from`, `from + span`), shared by every caller that asks
 * within the same UTC day (a tick evaluates many Collectors of a few zones). Pure: a cache hit
 * returns what a fresh computation would.
 */
export function cachedZoneOffsetSegments(timeZone: string, from: number, span: number): OffsetSegment[] {
  const dayStart = Math.floor(from / DAY) * DAY;
  const spanDays = Math.ceil(span / DAY) + 1;
  const key = `${timeZone}|${dayStart}|${spanDays}`;
  let segments = segmentCache.get(key);
  if (!segments) {
    if (segmentCache.size >= CACHE_LIMIT) segmentCache.clear();
    segments = zoneOffsetSegments(timeZone, dayStart, dayStart + spanDays * DAY);
    segmentCache.set(key, segments);
  }
  return segments;
}

/**
 * The instants at which the wall clock of `timeZone` shows `wallMs` (a wall-clock time written
 * as if it were UTC): one normally, none in a gap (clocks moved forward past it), two in an
 * overlap (clocks moved back over it), earlier first.
 */
export function instantsOfWallTime(timeZone: string, wallMs: number): number[] {
  const candidates = new Set([zoneOffset(timeZone, wallMs - DAY), zoneOffset(timeZone, wallMs + DAY)]);
  const instants: number[] = [];
  for (const offset of candidates) {
    const instant = wallMs - offset;
    if (zoneOffset(timeZone, instant) === offset) instants.push(instant);
  }
  return [...new Set(instants)].sort((a, b) => a - b);
}
