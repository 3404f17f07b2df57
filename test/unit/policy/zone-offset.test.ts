import { describe, expect, it } from 'vitest';
import {
  instantsOfWallTime,
  zoneOffset,
  zoneOffsetSegments,
} from '../../../src/policy/calendar/zone-offset.js';

const at = (iso: string) => Date.parse(iso);
const HOUR = 3_600_000;

describe('zoneOffset', () => {
  it('reads winter and summer offsets, east and west, and half-hour zones', () => {
    expect(zoneOffset('Europe/Berlin', at('2026-01-15T12:00:00Z'))).toBe(HOUR);
    expect(zoneOffset('Europe/Berlin', at('2026-07-15T12:00:00Z'))).toBe(2 * HOUR);
    expect(zoneOffset('America/New_York', at('2026-01-15T12:00:00Z'))).toBe(-5 * HOUR);
    expect(zoneOffset('Asia/Kathmandu', at('2026-01-15T12:00:00Z'))).toBe(5.75 * HOUR);
    expect(zoneOffset('UTC', at('2026-01-15T12:34:56.789Z'))).toBe(0);
  });

  it('reads an unknown zone as UTC', () => {
    expect(zoneOffset('Mars/Base', at('2026-07-15T12:00:00Z'))).toBe(0);
  });

  it('changes at the transition instant, to the millisecond', () => {
    const springForward = at('2026-03-29T01:00:00Z'); // Berlin 02:00 CET -> 03:00 CEST
    expect(zoneOffset('Europe/Berlin', springForward - 1)).toBe(HOUR);
    expect(zoneOffset('Europe/Berlin', springForward)).toBe(2 * HOUR);
  });
});

describe('zoneOffsetSegments', () => {
  it('cuts a span at each DST transition (Europe/Berlin, spring and autumn)', () => {
    expect(
      zoneOffsetSegments('Europe/Berlin', at('2026-03-27T00:00:00Z'), at('2026-04-02T00:00:00Z')),
    ).toEqual([
      { start: at('2026-03-27T00:00:00Z'), offset: HOUR },
      { start: at('2026-03-29T01:00:00Z'), offset: 2 * HOUR },
    ]);
    expect(
      zoneOffsetSegments('Europe/Berlin', at('2026-10-20T07:13:00Z'), at('2026-10-28T00:00:00Z')),
    ).toEqual([
      { start: at('2026-10-20T07:13:00Z'), offset: 2 * HOUR },
      { start: at('2026-10-25T01:00:00Z'), offset: HOUR },
    ]);
  });

  it('finds a half-hour transition (Australia/Lord_Howe)', () => {
    const segments = zoneOffsetSegments(
      'Australia/Lord_Howe',
      at('2026-04-01T00:00:00Z'),
      at('2026-04-10T00:00:00Z'),
    );
    expect(segments).toHaveLength(2);
    expect(segments[1]?.offset).toBe(10.5 * HOUR);
    expect(segments[0]?.offset).toBe(11 * HOUR);
    expect(zoneOffset('Australia/Lord_Howe', (segments[1]?.start as number) - 1)).toBe(11 * HOUR);
  });

  it('is one segment for UTC and for a zone without DST', () => {
    expect(zoneOffsetSegments('UTC', 0, 30 * 86_400_000)).toEqual([{ start: 0, offset: 0 }]);
    expect(zoneOffsetSegments('Asia/Tokyo', 0, 30 * 86_400_000)).toEqual([{ start: 0, offset: 9 * HOUR }]);
  });
});

describe('instantsOfWallTime', () => {
  const wall = (iso: string) => Date.parse(`${iso}Z`);
  it('gives one instant for an ordinary wall time', () => {
    expect(instantsOfWallTime('Europe/Berlin', wall('2026-12-20T18:00:00'))).toEqual([
      at('2026-12-20T17:00:00Z'),
    ]);
  });
  it('gives none in the spring-forward gap and two in the fall-back overlap (Europe/Berlin)', () => {
    expect(instantsOfWallTime('Europe/Berlin', wall('2026-03-29T02:30:00'))).toEqual([]);
    expect(instantsOfWallTime('Europe/Berlin', wall('2026-03-29T03:00:00'))).toEqual([
      at('2026-03-29T01:00:00Z'),
    ]);
    expect(instantsOfWallTime('Europe/Berlin', wall('2026-10-25T02:30:00'))).toEqual([
      at('2026-10-25T00:30:00Z'),
      at('2026-10-25T01:30:00Z'),
    ]);
    expect(instantsOfWallTime('Europe/Berlin', wall('2026-10-25T03:00:00'))).toEqual([
      at('2026-10-25T02:00:00Z'),
    ]);
  });
});
