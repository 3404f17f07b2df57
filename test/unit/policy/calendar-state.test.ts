import { describe, expect, it } from 'vitest';
import { calendarState } from '../../../src/policy/calendar/calendar-state.js';
import { Policy } from '../../../src/policy/schema.js';

const at = (iso: string) => Date.parse(iso);
const calendar = (fields: { schedule?: unknown; freeze?: unknown }) => Policy.parse({ name: 'p', ...fields });

describe('calendarState', () => {
  it('is always open without schedule or freeze', () => {
    expect(calendarState(calendar({}), at('2026-12-24T12:00:00Z'))).toEqual({ open: true });
  });

  describe('schedule', () => {
    const policy = calendar({
      schedule: { start: '2026-12-20 18:00', end: '2026-12-31 18:00', timeZone: 'Europe/Berlin' },
    });

    it('holds everything before start, until start', () => {
      expect(calendarState(policy, at('2026-12-20T16:59:59Z'))).toEqual({
        open: false,
        reason: 'before_schedule',
        until: at('2026-12-20T17:00:00Z'),
        detail: 'schedule starts 2026-12-20 18:00 Europe/Berlin',
      });
    });

    it('opens at start (included) and says when it closes', () => {
      expect(calendarState(policy, at('2026-12-20T17:00:00Z'))).toEqual({
        open: true,
        until: at('2026-12-31T17:00:00Z'),
      });
    });

    it('stops at end (included), for good, with endBehavior stop by default', () => {
      expect(calendarState(policy, at('2026-12-31T17:00:00Z'))).toEqual({
        open: false,
        reason: 'after_schedule',
        endBehavior: 'stop',
        detail: 'schedule ended 2026-12-31 18:00 Europe/Berlin: nothing more starts',
      });
    });

    it('reports endBehavior abort', () => {
      const abort = calendar({ schedule: { end: '2026-12-31T18:00Z', endBehavior: 'abort' } });
      expect(calendarState(abort, at('2027-01-01T00:00:00Z'))).toEqual({
        open: false,
        reason: 'after_schedule',
        endBehavior: 'abort',
        detail: 'schedule ended 2026-12-31 18:00 UTC: endBehavior abort: the rollout is aborted',
      });
      expect(calendarState(abort, at('2026-12-31T17:59:59Z'))).toEqual({
        open: true,
        until: at('2026-12-31T18:00:00Z'),
      });
    });
  });

  describe('freeze', () => {
    const policy = calendar({
      freeze: [
        { start: '2026-12-20T00:00Z', end: '2026-12-27T09:00Z', reason: 'year-end' },
        { start: '2027-02-01 00:00', end: '2027-02-02 00:00', timeZone: 'Europe/Berlin' },
      ],
    });

    it('holds a period from start (included) to end (excluded), naming the reason', () => {
      expect(calendarState(policy, at('2026-12-19T23:59:59Z'))).toEqual({
        open: true,
        until: at('2026-12-20T00:00:00Z'),
      });
      expect(calendarState(policy, at('2026-12-20T00:00:00Z'))).toEqual({
        open: false,
        reason: 'frozen',
        until: at('2026-12-27T09:00:00Z'),
        detail: 'change freeze until 2026-12-27 09:00 UTC (year-end)',
      });
      expect(calendarState(policy, at('2026-12-27T09:00:00Z'))).toEqual({
        open: true,
        until: at('2027-01-31T23:00:00Z'),
      });
    });

    it("shows the end in the period's zone, and no reason when none is given", () => {
      expect(calendarState(policy, at('2027-02-01T12:00:00Z'))).toMatchObject({
        reason: 'frozen',
        until: at('2027-02-01T23:00:00Z'),
        detail: 'change freeze until 2027-02-02 00:00 Europe/Berlin',
      });
    });

    it('joins overlapping and touching periods: until is when starting is allowed again', () => {
      const chained = calendar({
        freeze: [
          { start: '2026-12-20T00:00Z', end: '2026-12-24T00:00Z', reason: 'year-end' },
          { start: '2026-12-23T00:00Z', end: '2026-12-28T00:00Z', reason: 'holidays' },
          { start: '2026-12-28T00:00Z', end: '2027-01-04T09:00Z', reason: 'inventory' },
        ],
      });
      expect(calendarState(chained, at('2026-12-21T00:00:00Z'))).toEqual({
        open: false,
        reason: 'frozen',
        until: at('2027-01-04T09:00:00Z'),
        detail: 'change freeze until 2027-01-04 09:00 UTC (year-end)',
      });
    });

    it('never opens again when a freeze lasts past the end of the schedule', () => {
      const ends = calendar({
        schedule: { end: '2026-12-25T00:00Z' },
        freeze: { start: '2026-12-20T00:00Z', end: '2027-01-04T00:00Z', reason: 'year-end' },
      });
      const state = calendarState(ends, at('2026-12-21T00:00:00Z'));
      expect(state).toEqual({
        open: false,
        reason: 'frozen',
        until: undefined,
        detail: 'change freeze until the schedule ends 2026-12-25 00:00 UTC (year-end)',
      });
    });
  });

  describe('schedule and freeze together', () => {
    it('before start, until is when a freeze covering the start ends', () => {
      const policy = calendar({
        schedule: { start: '2026-12-21T00:00Z' },
        freeze: { start: '2026-12-20T00:00Z', end: '2026-12-27T09:00Z', reason: 'year-end' },
      });
      expect(calendarState(policy, at('2026-12-01T00:00:00Z'))).toEqual({
        open: false,
        reason: 'before_schedule',
        until: at('2026-12-27T09:00:00Z'),
        detail:
          'schedule starts 2026-12-21 00:00 UTC; a change freeze holds then, until 2026-12-27 09:00 UTC',
      });
    });

    it('after the end, the end wins over a freeze', () => {
      const policy = calendar({
        schedule: { end: '2026-12-21T00:00Z' },
        freeze: { start: '2026-12-20T00:00Z', end: '2026-12-27T09:00Z' },
      });
      expect(calendarState(policy, at('2026-12-22T00:00:00Z'))).toMatchObject({ reason: 'after_schedule' });
    });

    it('open: until is the earlier of the next freeze and the end', () => {
      const policy = calendar({
        schedule: { end: '2027-06-01T00:00Z' },
        freeze: [
          { start: '2026-01-01T00:00Z', end: '2026-01-02T00:00Z' },
          { start: '2026-12-20T00:00Z', end: '2026-12-27T09:00Z' },
        ],
      });
      expect(calendarState(policy, at('2026-06-01T00:00:00Z'))).toEqual({
        open: true,
        until: at('2026-12-20T00:00:00Z'),
      });
      expect(calendarState(policy, at('2027-01-01T00:00:00Z'))).toEqual({
        open: true,
        until: at('2027-06-01T00:00:00Z'),
      });
    });
  });
});
