/**
 * When a Collector's maintenance windows next open or close, for `status` ("window closed until
 * 22:00 Europe/Berlin") and for the admitter's wake-up time. Looks 8 days ahead, which covers a
 * whole week of windows plus a day; a change further away is reported as unknown.
 */
import type { MaintenanceWindow } from './maintenance-window.js';
import { windowOpenIntervals } from './window-open-intervals.js';

/** How far ahead windows are searched. */
export const WINDOW_HORIZON_MS = 8 * 86_400_000;

export interface WindowChange {
  /** Whether a window is open at `now`. */
  open: boolean;
  /**
   * Epoch ms at which that changes: the open window closes, or the next one opens. Undefined
   * when nothing changes within WINDOW_HORIZON_MS (e.g. no windows: always open).
   */
  until: number | undefined;
  /** Zone of the window that closes or opens at `until` (to show it in local time); undefined with `until`. */
  timeZone?: string;
}

/** Whether `windows` are open at `now` for a Collector in `collectorTimeZone`, and until when. */
export function nextWindowChange(
  windows: readonly MaintenanceWindow[],
  now: number,
  collectorTimeZone?: string,
): WindowChange {
  if (windows.length === 0) return { open: true, until: undefined };
  const horizon = now + WINDOW_HORIZON_MS;
  const intervals = windowOpenIntervals(windows, now, horizon, collectorTimeZone);
  const first = intervals[0];
  if (!first) return { open: false, until: undefined };
  if (first.start > now) return { open: false, until: first.start, timeZone: first.startZone };
  return first.end >= horizon
    ? { open: true, until: undefined }
    : { open: true, until: first.end, timeZone: first.endZone };
}
