import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dateTimeText, resolveDateTime } from '../../../src/policy/calendar/date-time-field.js';
import { formatInstant } from '../../../src/policy/calendar/format-instant.js';

const at = (iso: string) => Date.parse(iso);
/** The instant of `text` read in `timeZone`, or the reason it has none. */
function instant(text: string, timeZone?: string): number | string {
  const parsed = dateTimeText().safeParse(text);
  if (!parsed.success) return parsed.error.issues[0]?.message ?? 'invalid';
  const result = resolveDateTime(parsed.data, timeZone);
  return result.ok ? result.epochMs : result.reason;
}

describe('date-times with an offset', () => {
  it.each([
    ['2026-12-20T18:00:00+01:00', '2026-12-20T17:00:00Z'],
    ['2026-12-20T18:00+01:00', '2026-12-20T17:00:00Z'],
    ['2026-12-20 18:00+0100', '2026-12-20T17:00:00Z'],
    ['2026-12-20T18:00:00Z', '2026-12-20T18:00:00Z'],
    ['2026-12-20t18:00:00.5z', '2026-12-20T18:00:00.500Z'],
    ['2026-12-20T18:00-05:30', '2026-12-20T23:30:00Z'],
    ['2026-12-20T18:00-05', '2026-12-20T23:00:00Z'],
  ])('%s is %s', (text, iso) => {
    expect(instant(text)).toBe(at(iso));
  });

  it('keeps its own offset even when a timeZone is set beside it', () => {
    expect(instant('2026-12-20T18:00Z', 'Europe/Berlin')).toBe(at('2026-12-20T18:00:00Z'));
  });
});

describe('local date-times with a timeZone', () => {
  it('reads the wall time in the zone, winter and summer', () => {
    expect(instant('2026-12-20 18:00', 'Europe/Berlin')).toBe(at('2026-12-20T17:00:00Z'));
    expect(instant('2026-07-01T09:30', 'Europe/Berlin')).toBe(at('2026-07-01T07:30:00Z'));
    expect(instant('2026-07-01 09:30', 'America/New_York')).toBe(at('2026-07-01T13:30:00Z'));
  });

  it('takes the edges of the DST changes that exist once (Europe/Berlin)', () => {
    expect(instant('2026-03-29 01:59', 'Europe/Berlin')).toBe(at('2026-03-29T00:59:00Z'));
    expect(instant('2026-03-29 03:00', 'Europe/Berlin')).toBe(at('2026-03-29T01:00:00Z'));
    expect(instant('2026-10-25 01:59', 'Europe/Berlin')).toBe(at('2026-10-24T23:59:00Z'));
    expect(instant('2026-10-25 03:00', 'Europe/Berlin')).toBe(at('2026-10-25T02:00:00Z'));
  });

  it('refuses a time that the spring-forward gap skips', () => {
    expect(instant('2026-03-29 02:30', 'Europe/Berlin')).toBe(
      '"2026-03-29 02:30" does not exist in Europe/Berlin: the clocks move forward 1h over it; write a time outside that gap',
    );
  });

  it('refuses a time that the fall-back overlap repeats, naming both offsets', () => {
    expect(instant('2026-10-25 02:30', 'Europe/Berlin')).toBe(
      '"2026-10-25 02:30" occurs twice in Europe/Berlin (clocks move back): write which one with its offset, 2026-10-25T02:30+02:00 (the first) or 2026-10-25T02:30+01:00 (the second)',
    );
    expect(instant('2026-10-25T02:30+02:00')).toBe(at('2026-10-25T00:30:00Z'));
    expect(instant('2026-10-25T02:30+01:00')).toBe(at('2026-10-25T01:30:00Z'));
  });

  it('refuses a local date-time without a timeZone: its instant would depend on the host', () => {
    expect(instant('2026-12-20 18:00')).toBe(
      '"2026-12-20 18:00" has no offset and no timeZone is set, so its instant would depend on the host: write 2026-12-20T18:00Z for UTC or give its offset (e.g. 2026-12-20T18:00+01:00), or add a timeZone (e.g. Europe/Berlin) beside it',
    );
  });
});

describe('refused text', () => {
  it.each([
    ['2026-12-20', 'has no time of day: write one, e.g. "2026-12-20 00:00"'],
    ['1999-12-31T23:00Z', 'the year must be between 2000 and 2100'],
    ['2101-01-01T00:00Z', 'the year must be between 2000 and 2100'],
    ['2026-02-30T10:00Z', 'not a calendar date and time'],
    ['2026-12-20T24:00Z', 'not a calendar date and time'],
    ['2026-12-20T18:00+19:00', 'the offset must be between -18:00 and +18:00'],
    ['20 Dec 2026 18:00', 'expected a date-time with an offset like 2026-12-20T18:00+01:00'],
    ['2026-12-20T18:00 Europe/Berlin', 'expected a date-time with an offset'],
  ])('%s', (text, reason) => {
    expect(instant(text)).toContain(reason);
  });

  it('refuses a number or a missing value', () => {
    expect(z.object({ s: dateTimeText() }).safeParse({ s: 2026 }).error?.issues[0]?.message).toContain(
      'expected a date-time with an offset',
    );
    expect(z.object({ s: dateTimeText() }).safeParse({}).error?.issues[0]?.message).toBe(
      'required field is missing',
    );
  });
});

describe('formatInstant', () => {
  it('shows wall time in the zone, seconds only when not zero, UTC by default', () => {
    expect(formatInstant(at('2026-12-27T09:00:00Z'))).toBe('2026-12-27 09:00 UTC');
    expect(formatInstant(at('2026-12-27T09:00:30Z'), 'Europe/Berlin')).toBe(
      '2026-12-27 10:00:30 Europe/Berlin',
    );
    expect(formatInstant(at('2026-12-27T09:00:00Z'), 'Nowhere/Land')).toBe('2026-12-27 09:00 UTC');
  });
  it('adds the offset to a wall time that the zone shows twice', () => {
    expect(formatInstant(at('2026-10-25T00:30:00Z'), 'Europe/Berlin')).toBe(
      '2026-10-25 02:30 Europe/Berlin (UTC+02:00)',
    );
    expect(formatInstant(at('2026-10-25T01:30:00Z'), 'Europe/Berlin')).toBe(
      '2026-10-25 02:30 Europe/Berlin (UTC+01:00)',
    );
  });
});
