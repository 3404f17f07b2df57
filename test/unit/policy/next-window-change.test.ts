import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isWindowOpen } from '../../../src/policy/calendar/is-window-open.js';
import { MaintenanceWindow, WEEKDAYS } from '../../../src/policy/calendar/maintenance-window.js';
import { nextWindowChange, WINDOW_HORIZON_MS } from '../../../src/policy/calendar/next-window-change.js';
import { windowFits } from '../../../src/policy/calendar/window-fits.js';
import { windowOpenIntervals } from '../../../src/policy/calendar/window-open-intervals.js';

const window = (fields: Record<string, unknown>) => MaintenanceWindow.parse(fields);
const at = (iso: string) => Date.parse(iso);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('nextWindowChange', () => {
  it('is open for good without windows', () => {
    expect(nextWindowChange([], at('2026-06-01T00:00:00Z'))).toEqual({ open: true, until: undefined });
  });

  it('says when a closed window opens, and when an open one closes (end excluded)', () => {
    const w = [window({ days: ['mon'], start: '09:00', end: '17:00' })]; // 2026-06-01 is a Monday
    expect(nextWindowChange(w, at('2026-06-01T08:59:30Z'))).toEqual({
      open: false,
      until: at('2026-06-01T09:00:00Z'),
      timeZone: 'UTC',
    });
    expect(nextWindowChange(w, at('2026-06-01T09:00:00Z'))).toEqual({
      open: true,
      until: at('2026-06-01T17:00:00Z'),
      timeZone: 'UTC',
    });
    expect(nextWindowChange(w, at('2026-06-01T17:00:00Z'))).toEqual({
      open: false,
      until: at('2026-06-08T09:00:00Z'),
      timeZone: 'UTC',
    });
  });

  it('follows a window past midnight, from the day it opens', () => {
    const w = [window({ days: ['fri'], start: '22:00', end: '06:00', timeZone: 'Europe/Berlin' })];
    // Friday 2026-06-05 23:00 Berlin (21:00Z): open until Saturday 06:00 Berlin.
    expect(nextWindowChange(w, at('2026-06-05T21:00:00Z'))).toEqual({
      open: true,
      until: at('2026-06-06T04:00:00Z'),
      timeZone: 'Europe/Berlin',
    });
    // Thursday 23:00 Berlin: Thursday is not listed, so closed until Friday 22:00.
    expect(nextWindowChange(w, at('2026-06-04T21:00:00Z'))).toEqual({
      open: false,
      until: at('2026-06-05T20:00:00Z'),
      timeZone: 'Europe/Berlin',
    });
  });

  it('joins windows that touch, across days and zones', () => {
    const w = [
      window({ days: ['sat'], start: '22:00', end: '24:00' }),
      window({ days: ['sun'], start: '00:00', end: '06:00' }),
      window({ days: ['sun'], start: '08:00', end: '10:00', timeZone: 'Europe/Berlin' }), // 06:00-08:00Z
    ];
    expect(nextWindowChange(w, at('2026-06-06T23:00:00Z'))).toEqual({
      open: true,
      until: at('2026-06-07T08:00:00Z'),
      timeZone: 'Europe/Berlin',
    });
  });

  it("reads collector windows in the Collector's zone, UTC when unknown or missing", () => {
    const w = [window({ start: '01:00', end: '05:00', timeZone: 'collector' })];
    const now = at('2026-06-01T12:00:00Z');
    expect(nextWindowChange(w, now, 'Asia/Tokyo')).toEqual({
      open: false,
      until: at('2026-06-01T16:00:00Z'),
      timeZone: 'Asia/Tokyo',
    });
    expect(nextWindowChange(w, now, 'Not/AZone')).toEqual({
      open: false,
      until: at('2026-06-02T01:00:00Z'),
      timeZone: 'UTC',
    });
    expect(nextWindowChange(w, now)).toEqual(nextWindowChange(w, now, 'Not/AZone'));
  });

  it('reports no change within the horizon for a window open all week', () => {
    const w = [window({ start: '00:00', end: '24:00' })];
    expect(nextWindowChange(w, at('2026-06-01T12:00:00Z'))).toEqual({ open: true, until: undefined });
  });

  describe('DST in Europe/Berlin', () => {
    const w = [window({ days: ['sun'], start: '01:00', end: '04:00', timeZone: 'Europe/Berlin' })];

    it('spring forward: the window is one hour shorter (02:00-03:00 does not exist)', () => {
      // Sunday 2026-03-29: 01:00 CET = 00:00Z; 04:00 CEST = 02:00Z.
      expect(nextWindowChange(w, at('2026-03-28T12:00:00Z'))).toMatchObject({
        open: false,
        until: at('2026-03-29T00:00:00Z'),
      });
      expect(nextWindowChange(w, at('2026-03-29T00:00:00Z'))).toMatchObject({
        open: true,
        until: at('2026-03-29T02:00:00Z'),
      });
    });

    it('fall back: the window is one hour longer (02:00-03:00 happens twice)', () => {
      // Sunday 2026-10-25: 01:00 CEST = 23:00Z Saturday; 04:00 CET = 03:00Z.
      expect(nextWindowChange(w, at('2026-10-24T22:59:00Z'))).toMatchObject({
        open: false,
        until: at('2026-10-24T23:00:00Z'),
      });
      expect(nextWindowChange(w, at('2026-10-25T01:30:00Z'))).toMatchObject({
        open: true,
        until: at('2026-10-25T03:00:00Z'),
      });
    });

    it('a window inside the skipped hour does not open that day, and the next week it does', () => {
      const gap = [window({ days: ['sun'], start: '02:15', end: '02:45', timeZone: 'Europe/Berlin' })];
      expect(nextWindowChange(gap, at('2026-03-28T12:00:00Z'))).toMatchObject({
        open: false,
        until: at('2026-04-05T00:15:00Z'),
      });
    });

    it('a window that closes inside the repeated hour opens again when the clocks go back', () => {
      const overlap = [window({ days: ['sun'], start: '02:00', end: '02:30', timeZone: 'Europe/Berlin' })];
      // 02:00-02:30 CEST = 00:00-00:30Z, then 02:00-02:30 CET = 01:00-01:30Z.
      expect(nextWindowChange(overlap, at('2026-10-25T00:10:00Z'))).toMatchObject({
        open: true,
        until: at('2026-10-25T00:30:00Z'),
      });
      expect(nextWindowChange(overlap, at('2026-10-25T00:30:00Z'))).toMatchObject({
        open: false,
        until: at('2026-10-25T01:00:00Z'),
      });
    });
  });
});

describe('windowFits', () => {
  const w = [window({ days: ['fri'], start: '22:00', end: '06:00', timeZone: 'Europe/Berlin' })];
  const fridayNight = at('2026-06-05T21:00:00Z'); // 23:00 Berlin, window closes 04:00Z

  it('always fits without windows', () => {
    expect(windowFits([], fridayNight, undefined, 10 * HOUR)).toBe(true);
  });

  it('fits when the task ends before the window closes, or exactly then', () => {
    expect(windowFits(w, fridayNight, undefined, 35 * MINUTE)).toBe(true);
    expect(windowFits(w, fridayNight, undefined, 7 * HOUR)).toBe(true);
    expect(windowFits(w, fridayNight, undefined, 7 * HOUR + 1)).toBe(false);
  });

  it('does not fit in a window closing sooner than the task ends, nor when no window is open', () => {
    expect(windowFits(w, at('2026-06-06T03:40:00Z'), undefined, 35 * MINUTE)).toBe(false);
    expect(windowFits(w, at('2026-06-06T04:00:00Z'), undefined, 0)).toBe(false);
  });

  it("uses the Collector's zone for collector windows", () => {
    const c = [window({ start: '01:00', end: '05:00', timeZone: 'collector' })];
    const now = at('2026-06-01T02:00:00Z'); // 04:00 Berlin (closes in 1h), 02:00 UTC (closes in 3h)
    expect(windowFits(c, now, 'Europe/Berlin', 2 * HOUR)).toBe(false);
    expect(windowFits(c, now, 'UTC', 2 * HOUR)).toBe(true);
  });

  it('counts touching windows as one, and a window open longer than the horizon', () => {
    const joined = [
      window({ days: ['fri'], start: '22:00', end: '24:00' }),
      window({ days: ['sat'], start: '00:00', end: '06:00' }),
    ];
    expect(windowFits(joined, at('2026-06-05T22:00:00Z'), undefined, 8 * HOUR)).toBe(true);
    expect(windowFits(joined, at('2026-06-05T22:00:00Z'), undefined, 8 * HOUR + 1)).toBe(false);
    const always = [window({ start: '00:00', end: '24:00' })];
    expect(windowFits(always, fridayNight, undefined, 10 * 86_400_000)).toBe(true);
  });

  it('is shortened by a spring-forward night (Europe/Berlin)', () => {
    const night = [window({ days: ['sat'], start: '23:00', end: '05:00', timeZone: 'Europe/Berlin' })];
    const start = at('2026-03-28T22:00:00Z'); // Saturday 23:00 CET; Sunday 05:00 CEST = 03:00Z: 5 hours
    expect(windowFits(night, start, undefined, 5 * HOUR)).toBe(true);
    expect(windowFits(night, start, undefined, 5 * HOUR + MINUTE)).toBe(false);
  });

  it('refuses a negative or infinite duration', () => {
    expect(() => windowFits(w, fridayNight, undefined, -1)).toThrow(RangeError);
    expect(() => windowFits(w, fridayNight, undefined, Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

// Random windows in zones with DST (both hemispheres, a 30-minute shift), odd offsets and none.
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'America/Santiago',
  'Asia/Kathmandu',
  'collector',
];
const COLLECTOR_ZONES = [undefined, 'Europe/Berlin', 'Pacific/Chatham', 'Not/AZone'];
const hhmm = (minutes: number) =>
  `${String(Math.floor(minutes / 60)).padStart(2, '0')}:${String(minutes % 60).padStart(2, '0')}`;
const windowArb = fc
  .record({
    days: fc.subarray([...WEEKDAYS], { minLength: 1 }),
    start: fc.integer({ min: 0, max: 95 }).map((q) => q * 15),
    end: fc.integer({ min: 1, max: 96 }).map((q) => q * 15),
    timeZone: fc.constantFrom(...ZONES),
  })
  .filter((w) => w.start !== w.end)
  .map((w) => window({ ...w, start: hhmm(w.start), end: hhmm(w.end) }));
// Instants around the 2026 DST changes of these zones, and elsewhere in the year.
const nowArb = fc.oneof(
  fc.integer({ min: at('2026-03-25T00:00:00Z'), max: at('2026-04-08T00:00:00Z') }),
  fc.integer({ min: at('2026-10-20T00:00:00Z'), max: at('2026-11-03T00:00:00Z') }),
  fc.integer({ min: at('2026-01-01T00:00:00Z'), max: at('2027-01-01T00:00:00Z') }),
);

describe('agreement with isWindowOpen (property)', () => {
  it('an instant lies in an open interval exactly when isWindowOpen says so', () => {
    fc.assert(
      fc.property(
        fc.array(windowArb, { minLength: 1, maxLength: 3 }),
        nowArb,
        fc.constantFrom(...COLLECTOR_ZONES),
        fc.array(fc.integer({ min: 0, max: WINDOW_HORIZON_MS - 1 }), { minLength: 20, maxLength: 20 }),
        (windows, now, tz, probes) => {
          const intervals = windowOpenIntervals(windows, now, now + WINDOW_HORIZON_MS, tz);
          for (const p of probes) {
            const t = now + p;
            const inside = intervals.some((i) => i.start <= t && t < i.end);
            expect(inside).toBe(isWindowOpen(windows, t, tz));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('nextWindowChange agrees with a minute-by-minute scan', () => {
    fc.assert(
      fc.property(
        fc.array(windowArb, { minLength: 1, maxLength: 2 }),
        nowArb.map((t) => Math.floor(t / MINUTE) * MINUTE),
        fc.constantFrom(...COLLECTOR_ZONES),
        (windows, now, tz) => {
          const change = nextWindowChange(windows, now, tz);
          const open = isWindowOpen(windows, now, tz);
          expect(change.open).toBe(open);
          let scanned: number | undefined;
          for (let t = now + MINUTE; t < now + WINDOW_HORIZON_MS; t += MINUTE) {
            if (isWindowOpen(windows, t, tz) !== open) {
              scanned = t;
              break;
            }
          }
          expect(change.until).toBe(scanned);
        },
      ),
      { numRuns: 40 },
    );
  });
});
