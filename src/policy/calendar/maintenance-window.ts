/**
 * The zod schema of a maintenance window: the weekly hours in which a rollout may start tasks.
 * A window is written in a fixed time zone, or in each Collector's own time zone
 * (`timeZone: collector`), so that a worldwide fleet can be upgraded at night everywhere.
 * Whether a window is open at an instant is decided by is-window-open.ts.
 */
import { z } from 'zod';
import { oneOrMany } from '../select/selection.js';
import { isKnownTimeZone } from './zone-offset.js';

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** The `timeZone` value that means "the Collector's own time zone". */
export const COLLECTOR_TIME_ZONE = 'collector';

const TIME_OF_DAY = /^([01]?\d|2[0-3]):([0-5]\d)$/;

function timeOfDay(allowEndOfDay: boolean) {
  const hint = `expected a time like 22:00 (hours 00-23${allowEndOfDay ? ', or 24:00' : ''})`;
  return z
    .string({
      error: (iss) => (iss.input === undefined ? 'required field is missing' : `${hint}; quote it in YAML`),
    })
    .transform((value, ctx) => {
      if (allowEndOfDay && value === '24:00') return 24 * 60;
      const m = TIME_OF_DAY.exec(value.trim());
      if (!m) {
        ctx.addIssue({ code: 'custom', message: `${hint}, got ${JSON.stringify(value)}` });
        return z.NEVER;
      }
      return Number(m[1]) * 60 + Number(m[2]);
    });
}

const FULL_NAMES = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const weekday = z.preprocess(
  (value) => {
    if (typeof value !== 'string') return value;
    const lower = value.trim().toLowerCase();
    const full = FULL_NAMES.indexOf(lower);
    return full >= 0 ? WEEKDAYS[full] : lower;
  },
  z.enum(WEEKDAYS, { error: `expected a weekday: ${WEEKDAYS.join(', ')}` }),
);

export const MaintenanceWindow = z
  .strictObject({
    /** Days on which the window opens (it may run into the next day). Default: every day. */
    days: oneOrMany(weekday, 'weekday').default([...WEEKDAYS]),
    /** Opening time, `HH:MM`; parsed to minutes after midnight. Required. */
    start: timeOfDay(false),
    /** Closing time, `HH:MM` or `24:00`; earlier than `start` means the next day. Required. */
    end: timeOfDay(true),
    /** IANA time zone of `start` and `end`, or `collector` for each Collector's own. Default `UTC`. */
    timeZone: z
      .string({ error: 'expected a time zone such as UTC or Europe/Berlin, or "collector"' })
      .default('UTC')
      .refine((tz) => tz === COLLECTOR_TIME_ZONE || isKnownTimeZone(tz), {
        error: (iss) =>
          `unknown time zone ${JSON.stringify(iss.input)}: use an IANA name such as Europe/Berlin, UTC, or "collector"`,
      }),
  })
  .refine((window) => window.start !== window.end, {
    path: ['end'],
    message: 'end must differ from start (for a whole day write start: "00:00", end: "24:00")',
  });
export type MaintenanceWindow = z.infer<typeof MaintenanceWindow>;
