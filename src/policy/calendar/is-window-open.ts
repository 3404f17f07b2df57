/**
 * Whether a policy's maintenance windows let a rollout start a task at an instant. No windows
 * means always open. A window whose end is earlier than its start runs past midnight: its `days`
 * name the day on which it opens. With `timeZone: collector` the window is read in the
 * Collector's own time zone; a Collector whose zone is missing or unknown is read in UTC.
 */
import { COLLECTOR_TIME_ZONE, type MaintenanceWindow, WEEKDAYS, type Weekday } from './maintenance-window.js';
import { wallClock } from './zone-offset.js';

/** Day of the week (0 = Sunday) and minute of the day at `epochMs` in `timeZone` (UTC when unknown). */
export function localTime(epochMs: number, timeZone: string): { day: number; minute: number } {
  const { weekday, hour, minute } = wallClock(timeZone, epochMs);
  return { day: WEEKDAYS.indexOf(weekday.toLowerCase() as Weekday), minute: hour * 60 + minute };
}

function zoneOf(window: MaintenanceWindow, collectorTimeZone: string | undefined): string {
  return window.timeZone === COLLECTOR_TIME_ZONE ? (collectorTimeZone ?? 'UTC') : window.timeZone;
}

function opensOn(window: MaintenanceWindow, day: number): boolean {
  return window.days.includes(WEEKDAYS[(day + 7) % 7] as Weekday);
}

/** Whether any of `windows` is open at `epochMs` (for a Collector in `collectorTimeZone`). */
export function isWindowOpen(
  windows: readonly MaintenanceWindow[],
  epochMs: number,
  collectorTimeZone?: string,
): boolean {
  if (windows.length === 0) return true;
  return windows.some((w) => {
    const { day, minute } = localTime(epochMs, zoneOf(w, collectorTimeZone));
    if (w.start < w.end) return opensOn(w, day) && minute >= w.start && minute < w.end;
    return (opensOn(w, day) && minute >= w.start) || (opensOn(w, day - 1) && minute < w.end);
  });
}
