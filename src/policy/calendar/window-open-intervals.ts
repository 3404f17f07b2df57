/**
 * The instants at which a policy's maintenance windows are open, as sorted, disjoint intervals,
 * with the same meaning as is-window-open.ts (an instant is open when its wall-clock time in the
 * window's zone lies in the window) but computed from each window's daily boundaries instead of
 * minute by minute: per zone, the span is cut into pieces of constant UTC offset
 * (zone-offset.ts), in which wall-clock time is the instant plus the offset, and each day's
 * window maps to at most one interval per piece. A DST gap or overlap therefore needs no special
 * case: a window hour that the clocks skip is simply never open, and one they repeat is open
 * twice. Windows that touch (22:00-24:00 and 00:00-06:00) merge into one interval.
 */
import { COLLECTOR_TIME_ZONE, type MaintenanceWindow, WEEKDAYS, type Weekday } from './maintenance-window.js';
import { cachedZoneOffsetSegments, isKnownTimeZone } from './zone-offset.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** From `start` included to `end` excluded, epoch ms. */
export interface OpenInterval {
  start: number;
  end: number;
  /** Zone of the window that opens at `start` (an unknown zone is read, and named, as UTC). */
  startZone: string;
  /** Zone of the window that closes at `end`. */
  endZone: string;
}

function zoneOf(window: MaintenanceWindow, collectorTimeZone: string | undefined): string {
  return window.timeZone === COLLECTOR_TIME_ZONE ? (collectorTimeZone ?? 'UTC') : window.timeZone;
}

/** Weekday (0 = Sunday) of the day `dayNumber` days after 1970-01-01, a Thursday. */
function weekdayOf(dayNumber: number): Weekday {
  return WEEKDAYS[(((dayNumber + 4) % 7) + 7) % 7] as Weekday;
}

/**
 * The open intervals of `windows` within [`from`, `to`), for a Collector in `collectorTimeZone`
 * (used by `timeZone: collector` windows; UTC when missing or unknown). No windows: one interval
 * covering the whole span. Intervals are clipped to the span.
 */
export function windowOpenIntervals(
  windows: readonly MaintenanceWindow[],
  from: number,
  to: number,
  collectorTimeZone?: string,
): OpenInterval[] {
  if (to <= from) return [];
  if (windows.length === 0) return [{ start: from, end: to, startZone: 'UTC', endZone: 'UTC' }];
  const byZone = new Map<string, MaintenanceWindow[]>();
  for (const w of windows) {
    const zone = zoneOf(w, collectorTimeZone);
    byZone.set(zone, [...(byZone.get(zone) ?? []), w]);
  }
  const pieces: OpenInterval[] = [];
  for (const [zone, zoneWindows] of byZone) {
    const segments = cachedZoneOffsetSegments(zone, from, to - from);
    const shownZone = isKnownTimeZone(zone) ? zone : 'UTC';
    segments.forEach((segment, i) => {
      const a = Math.max(segment.start, from);
      const b = Math.min(segments[i + 1]?.start ?? Number.POSITIVE_INFINITY, to);
      if (a >= b) return;
      const o = segment.offset;
      // A window opening the day before the piece may still run into it (past midnight).
      const firstDay = Math.floor((a + o) / DAY) - 1;
      const lastDay = Math.floor((b - 1 + o) / DAY);
      for (let day = firstDay; day <= lastDay; day++) {
        const weekday = weekdayOf(day);
        for (const w of zoneWindows) {
          if (!w.days.includes(weekday)) continue;
          const wallStart = day * DAY + w.start * MINUTE;
          const wallEnd = (w.start < w.end ? day : day + 1) * DAY + w.end * MINUTE;
          const start = Math.max(wallStart - o, a);
          const end = Math.min(wallEnd - o, b);
          if (start < end) pieces.push({ start, end, startZone: shownZone, endZone: shownZone });
        }
      }
    });
  }
  return mergeIntervals(pieces);
}

/** Sorted, with overlapping or touching intervals joined. */
function mergeIntervals(pieces: OpenInterval[]): OpenInterval[] {
  pieces.sort((x, y) => x.start - y.start || y.end - x.end);
  const merged: OpenInterval[] = [];
  for (const piece of pieces) {
    const last = merged[merged.length - 1];
    if (last && piece.start <= last.end) {
      if (piece.end > last.end) {
        last.end = piece.end;
        last.endZone = piece.endZone;
      }
    } else merged.push({ ...piece });
  }
  return merged;
}
