/**
 * Whether a policy's calendar (`schedule` and `freeze`) lets a task start at an instant, and if
 * not, why, until when, and a sentence for `status`. Pure: the admitter asks once per policy per
 * tick, with the clock's time. The weekly maintenance windows are a separate question
 * (next-window-change.ts, window-fits.ts), asked per Collector.
 *
 * The calendar is open from `schedule.start` (included) to `schedule.end` (excluded), outside
 * every freeze period [start, end). Freeze periods that overlap or touch hold as one, so `until`
 * is the instant at which the calendar really opens again, or undefined when it never does.
 */

import { formatInstant } from './format-instant.js';
import type { FreezePeriod } from './freeze-period.js';
import type { EndBehavior, Schedule } from './schedule.js';

/** The calendar's fields of a parsed policy. */
export interface PolicyCalendar {
  schedule?: Schedule | undefined;
  freeze: readonly FreezePeriod[];
}

export type CalendarState =
  | {
      open: true;
      /** When the calendar next closes (a freeze begins or the schedule ends); undefined: never. */
      until?: number;
    }
  | {
      open: false;
      reason: 'before_schedule' | 'frozen';
      /** Epoch ms at which the calendar opens again; undefined: never (the schedule ends first). */
      until?: number;
      /** A sentence for `status`, e.g. "change freeze until 2026-12-27 09:00 UTC (year-end)". */
      detail: string;
    }
  | {
      open: false;
      reason: 'after_schedule';
      /** Never opens again. */
      until?: undefined;
      /** `stop`: nothing more starts; `abort`: the rollout is to be aborted. */
      endBehavior: EndBehavior;
      detail: string;
    };

/** The freeze periods holding at `at`, the one ending last first; empty when none. */
function freezesAt(freeze: readonly FreezePeriod[], at: number): FreezePeriod[] {
  return freeze.filter((f) => f.start <= at && at < f.end).sort((a, b) => b.end - a.end);
}

/** The first instant at or after `from` outside every freeze period, and the period that ended last. */
function thawFrom(freeze: readonly FreezePeriod[], from: number): { at: number; last?: FreezePeriod } {
  let at = from;
  let last: FreezePeriod | undefined;
  // Each step moves past at least one period, so this ends within freeze.length steps.
  for (let holding = freezesAt(freeze, at)[0]; holding; holding = freezesAt(freeze, at)[0]) {
    last = holding;
    at = holding.end;
  }
  return last ? { at, last } : { at };
}

/** Whether the calendar of `policy` lets a task start at `now` (epoch ms). */
export function calendarState(policy: PolicyCalendar, now: number): CalendarState {
  const { schedule, freeze } = policy;
  const end = schedule?.end;
  const zone = schedule?.timeZone;
  if (end !== undefined && now >= end) {
    const endBehavior = schedule?.endBehavior ?? 'stop';
    const consequence =
      endBehavior === 'abort' ? 'endBehavior abort: the rollout is aborted' : 'nothing more starts';
    return {
      open: false,
      reason: 'after_schedule',
      endBehavior,
      detail: `schedule ended ${formatInstant(end, zone)}: ${consequence}`,
    };
  }
  const start = schedule?.start;
  const beforeStart = start !== undefined && now < start;
  const thaw = thawFrom(freeze, beforeStart ? start : now);
  const opens = end !== undefined && thaw.at >= end ? undefined : thaw.at;
  const untilText = (at: number | undefined, period: FreezePeriod | undefined) =>
    at === undefined
      ? `until the schedule ends ${formatInstant(end as number, zone)}`
      : `until ${formatInstant(at, period?.timeZone)}`;

  if (beforeStart) {
    const starts = `schedule starts ${formatInstant(start, zone)}`;
    const detail =
      opens === start ? starts : `${starts}; a change freeze holds then, ${untilText(opens, thaw.last)}`;
    return { open: false, reason: 'before_schedule', until: opens, detail };
  }
  const holding = freezesAt(freeze, now)[0];
  if (holding) {
    const why = holding.reason === undefined ? '' : ` (${holding.reason})`;
    return {
      open: false,
      reason: 'frozen',
      until: opens,
      detail: `change freeze ${untilText(opens, thaw.last)}${why}`,
    };
  }
  const nextFreeze = Math.min(...freeze.filter((f) => f.start > now).map((f) => f.start));
  const closes = Math.min(nextFreeze, end ?? Number.POSITIVE_INFINITY);
  return Number.isFinite(closes) ? { open: true, until: closes } : { open: true };
}
