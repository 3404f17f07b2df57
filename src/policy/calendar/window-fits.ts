/**
 * Whether a task started now would end inside the maintenance window that is open now. The
 * admitter passes the expected duration of an upgrade (the rollout's learned p95, else the
 * policy's taskTimeout), so that no upgrade is started that would run past its window's close.
 * Windows that touch or overlap count as one (Friday 22:00-24:00 and Saturday 00:00-06:00 give
 * 8 hours).
 */
import type { MaintenanceWindow } from './maintenance-window.js';
import { WINDOW_HORIZON_MS } from './next-window-change.js';
import { windowOpenIntervals } from './window-open-intervals.js';

/**
 * True when a task started at `now` and taking `expectedMs` ends (at the latest) when the open
 * window closes. No windows: always true. No window open at `now`: false.
 */
export function windowFits(
  windows: readonly MaintenanceWindow[],
  now: number,
  collectorTimeZone: string | undefined,
  expectedMs: number,
): boolean {
  if (!Number.isFinite(expectedMs) || expectedMs < 0)
    throw new RangeError(`expectedMs must be a finite number >= 0, got ${expectedMs}`);
  if (windows.length === 0) return true;
  // Looking one horizon past the task's end tells "open until then" from "open and beyond".
  const horizon = now + Math.max(WINDOW_HORIZON_MS, expectedMs + 1);
  const first = windowOpenIntervals(windows, now, horizon, collectorTimeZone)[0];
  return first !== undefined && first.start <= now && now + expectedMs <= first.end;
}
