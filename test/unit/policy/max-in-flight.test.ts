import { describe, expect, it } from 'vitest';
import { MaxInFlight, maxInFlightOf, resolveMaxInFlight } from '../../../src/policy/max-in-flight.js';
import { Policy } from '../../../src/policy/schema.js';

describe('resolveMaxInFlight', () => {
  it('gives a count as it is, whatever the selection', () => {
    expect(resolveMaxInFlight({ kind: 'count', count: 50 }, 10)).toBe(50);
    expect(resolveMaxInFlight({ kind: 'count', count: 50 }, 0)).toBe(50);
  });

  it('rounds a percentage up, exactly for round shares', () => {
    expect(resolveMaxInFlight({ kind: 'percent', percent: 10 }, 1000)).toBe(100);
    expect(resolveMaxInFlight({ kind: 'percent', percent: 10 }, 1001)).toBe(101);
    expect(resolveMaxInFlight({ kind: 'percent', percent: 10 }, 30)).toBe(3);
    expect(resolveMaxInFlight({ kind: 'percent', percent: 7 }, 100)).toBe(7);
    expect(resolveMaxInFlight({ kind: 'percent', percent: 2.5 }, 200)).toBe(5);
    expect(resolveMaxInFlight({ kind: 'percent', percent: 100 }, 12_345)).toBe(12_345);
  });

  it('is at least 1, also for an empty selection', () => {
    expect(resolveMaxInFlight({ kind: 'percent', percent: 1 }, 3)).toBe(1);
    expect(resolveMaxInFlight({ kind: 'percent', percent: 50 }, 0)).toBe(1);
  });

  it('refuses a total that is not a whole number >= 0', () => {
    expect(() => resolveMaxInFlight({ kind: 'percent', percent: 5 }, -1)).toThrow(RangeError);
    expect(() => resolveMaxInFlight({ kind: 'percent', percent: 5 }, 1.5)).toThrow(/whole number/);
  });
});

describe('MaxInFlight and the parsed policy', () => {
  it('parses counts and percentages', () => {
    expect(MaxInFlight.parse(20)).toEqual({ kind: 'count', count: 20 });
    expect(MaxInFlight.parse(' 12.5 % ')).toEqual({ kind: 'percent', percent: 12.5 });
  });

  it('maxInFlightOf gives back what was written', () => {
    expect(maxInFlightOf(Policy.parse({ name: 'a', maxInFlight: 7 }))).toEqual({ kind: 'count', count: 7 });
    expect(maxInFlightOf(Policy.parse({ name: 'a', maxInFlight: '25%' }))).toEqual({
      kind: 'percent',
      percent: 25,
    });
    expect(maxInFlightOf(Policy.parse({ name: 'a' }))).toEqual({ kind: 'count', count: 50 });
  });

  it('resolves end to end: 25% of 10 selected is 3', () => {
    const policy = Policy.parse({ name: 'a', maxInFlight: '25%' });
    expect(resolveMaxInFlight(maxInFlightOf(policy), 10)).toBe(3);
  });
});
