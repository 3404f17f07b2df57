/**
 * The zod schema of a policy's `freeze`: change freezes, periods in which its rollouts start no
 * task (tasks under way finish). A period runs from `start` included to `end` excluded; periods
 * may overlap or touch, and then hold as one. Date-times are written as date-time-field.ts
 * describes and held in epoch milliseconds. calendar-state.ts decides what they hold back.
 */
import { z } from 'zod';
import { oneOrMany } from '../select/selection.js';
import { checkEndAfterStart, dateTimeText, dateTimeZoneField, resolveDateTimes } from './date-time-field.js';

/** At most this many periods per policy: a longer list is a mistake, or periods to merge. */
export const MAX_FREEZE_PERIODS = 100;

/** A parsed freeze period. */
export interface FreezePeriod {
  /** Epoch ms at which the freeze begins (included). */
  start: number;
  /** Epoch ms at which it ends (excluded); after `start`. */
  end: number;
  /** Why, shown by `status`; undefined when not given. */
  reason?: string;
  /** The zone in which local date-times were read and in which `status` shows them; undefined: UTC. */
  timeZone?: string;
}

export const FreezePeriod = z
  .strictObject(
    {
      /** Beginning of the freeze (a date-time with an offset, or local with `timeZone`). Required. */
      start: dateTimeText(),
      /** End of the freeze, after `start`; tasks may start again from then. Required. */
      end: dateTimeText(),
      /** Why (e.g. `year-end`), shown by `status`. Default none. */
      reason: z
        .string({ error: 'expected text' })
        .trim()
        .min(1, 'must not be empty')
        .max(200, 'must be at most 200 characters')
        .optional(),
      /** IANA zone of `start` and `end` when they are written without an offset, and of the times `status` shows. Default none (UTC for display). */
      timeZone: dateTimeZoneField().optional(),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type'
          ? 'expected a freeze period: { start, end, reason, timeZone }'
          : undefined,
    },
  )
  .transform((value, ctx): FreezePeriod => {
    const instants = resolveDateTimes(value, ['start', 'end'], ctx);
    if (!instants) return z.NEVER;
    const { start, end } = instants as { start: number; end: number };
    if (!checkEndAfterStart(start, end, value.timeZone, ctx)) return z.NEVER;
    const period: FreezePeriod = { start, end };
    if (value.reason !== undefined) period.reason = value.reason;
    if (value.timeZone !== undefined) period.timeZone = value.timeZone;
    return period;
  });

/** The `freeze` field: one period or a list of them, at most MAX_FREEZE_PERIODS. */
export const FreezePeriods = oneOrMany(FreezePeriod, 'freeze period', { allowEmpty: true }).refine(
  (periods) => periods.length <= MAX_FREEZE_PERIODS,
  { message: `at most ${MAX_FREEZE_PERIODS} freeze periods (merge adjacent ones)` },
);
