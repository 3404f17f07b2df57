/**
 * The zod schema of a policy's `schedule`: the span of time in which its rollouts may start
 * tasks. Before `start` nothing starts; from `end` on nothing more starts, and with
 * `endBehavior: abort` the rollout is aborted (the rollout code does that; here it is only
 * read). Date-times are written as date-time-field.ts describes and held in epoch milliseconds.
 * Whether the schedule lets a task start at an instant is decided by calendar-state.ts.
 */
import { z } from 'zod';
import { checkEndAfterStart, dateTimeText, dateTimeZoneField, resolveDateTimes } from './date-time-field.js';

export const END_BEHAVIORS = ['stop', 'abort'] as const;
export type EndBehavior = (typeof END_BEHAVIORS)[number];

/** A parsed `schedule`. */
export interface Schedule {
  /** Epoch ms from which tasks may start; undefined: at once. */
  start?: number;
  /** Epoch ms from which no task starts; undefined: never. */
  end?: number;
  /** What reaching `end` does: `stop` (nothing more starts) or `abort` (the rollout is aborted). */
  endBehavior: EndBehavior;
  /** The zone in which local date-times were read and in which `status` shows them; undefined: UTC. */
  timeZone?: string;
}

export const Schedule = z
  .strictObject(
    {
      /** First instant at which tasks may start (a date-time with an offset, or local with `timeZone`). Default none: at once. */
      start: dateTimeText().optional(),
      /** Instant from which no more tasks start; after `start`. Default none: never ends. */
      end: dateTimeText().optional(),
      /** `stop`: after `end` nothing more starts, tasks under way finish; `abort`: the rollout is aborted at `end`. Default `stop`. */
      endBehavior: z.enum(END_BEHAVIORS, { error: 'expected stop or abort' }).default('stop'),
      /** IANA zone of `start` and `end` when they are written without an offset, and of the times `status` shows. Default none (UTC for display). */
      timeZone: dateTimeZoneField().optional(),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type'
          ? 'expected a schedule: { start, end, endBehavior, timeZone }'
          : undefined,
    },
  )
  .transform((value, ctx): Schedule => {
    if (value.start === undefined && value.end === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give start, end or both (or leave schedule out)' });
      return z.NEVER;
    }
    const instants = resolveDateTimes(value, ['start', 'end'], ctx);
    if (!instants) return z.NEVER;
    const { start, end } = instants;
    if (start !== undefined && end !== undefined && !checkEndAfterStart(start, end, value.timeZone, ctx))
      return z.NEVER;
    const schedule: Schedule = { endBehavior: value.endBehavior };
    if (start !== undefined) schedule.start = start;
    if (end !== undefined) schedule.end = end;
    if (value.timeZone !== undefined) schedule.timeZone = value.timeZone;
    return schedule;
  });
