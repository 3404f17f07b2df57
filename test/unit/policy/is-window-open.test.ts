import { describe, expect, it } from 'vitest';
import { isWindowOpen, localTime } from '../../../src/policy/calendar/is-window-open.js';
import { MaintenanceWindow } from '../../../src/policy/calendar/maintenance-window.js';

const window = (fields: Record<string, unknown>) => MaintenanceWindow.parse(fields);
// 2024-06-03 is a Monday.
const at = (iso: string) => Date.parse(iso);

describe('isWindowOpen', () => {
  it('is always open without windows', () => {
    expect(isWindowOpen([], at('2024-06-03T12:00:00Z'))).toBe(true);
  });

  it('opens between start and end on the listed days, end excluded', () => {
    const w = [window({ days: ['mon'], start: '09:00', end: '17:00' })];
    expect(isWindowOpen(w, at('2024-06-03T08:59:00Z'))).toBe(false);
    expect(isWindowOpen(w, at('2024-06-03T09:00:00Z'))).toBe(true);
    expect(isWindowOpen(w, at('2024-06-03T16:59:00Z'))).toBe(true);
    expect(isWindowOpen(w, at('2024-06-03T17:00:00Z'))).toBe(false);
    expect(isWindowOpen(w, at('2024-06-04T10:00:00Z'))).toBe(false);
  });

  it('runs a window past midnight into the next day, counted from the day it opens', () => {
    const w = [window({ days: ['fri'], start: '22:00', end: '06:00' })];
    expect(isWindowOpen(w, at('2024-06-07T23:00:00Z'))).toBe(true); // Friday night
    expect(isWindowOpen(w, at('2024-06-08T05:59:00Z'))).toBe(true); // Saturday morning
    expect(isWindowOpen(w, at('2024-06-08T06:00:00Z'))).toBe(false);
    expect(isWindowOpen(w, at('2024-06-07T05:00:00Z'))).toBe(false); // Friday morning: Thursday not listed
  });

  it('reads a window in its time zone', () => {
    const w = [window({ start: '02:00', end: '04:00', timeZone: 'America/New_York' })];
    expect(isWindowOpen(w, at('2024-06-03T07:00:00Z'))).toBe(true); // 03:00 EDT
    expect(isWindowOpen(w, at('2024-06-03T03:00:00Z'))).toBe(false); // 23:00 EDT
  });

  it("reads a collector window in the Collector's own time zone, UTC when unknown", () => {
    const w = [window({ start: '01:00', end: '05:00', timeZone: 'collector' })];
    const instant = at('2024-06-03T00:30:00Z'); // 02:30 in Berlin (CEST), 09:30 in Tokyo
    expect(isWindowOpen(w, instant, 'Europe/Berlin')).toBe(true);
    expect(isWindowOpen(w, instant, 'Asia/Tokyo')).toBe(false);
    expect(isWindowOpen(w, instant, 'Not/AZone')).toBe(false);
    expect(isWindowOpen(w, at('2024-06-03T02:00:00Z'), undefined)).toBe(true);
  });

  it('is open when any window is, and a whole day can be written 00:00 to 24:00', () => {
    const w = [
      window({ days: 'sat', start: '00:00', end: '24:00' }),
      window({ days: ['mon'], start: '12:00', end: '13:00' }),
    ];
    expect(isWindowOpen(w, at('2024-06-08T23:59:00Z'))).toBe(true);
    expect(isWindowOpen(w, at('2024-06-03T12:30:00Z'))).toBe(true);
    expect(isWindowOpen(w, at('2024-06-03T13:30:00Z'))).toBe(false);
  });

  it('localTime gives weekday and minute of day', () => {
    expect(localTime(at('2024-06-03T10:15:00Z'), 'UTC')).toEqual({ day: 1, minute: 615 });
  });
});
