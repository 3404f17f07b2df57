import { describe, expect, it } from 'vitest';
import { DURATION_HINT, durationField, MAX_DURATION_MS, ms } from '../../../src/policy/duration-field.js';

describe('durationField', () => {
  const field = durationField();

  it.each([
    ['90s', 90_000],
    ['10m', 600_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['500ms', 500],
    ['1d', 86_400_000],
    [' 5m ', 300_000],
  ])('reads %s as %i ms', (text, expected) => {
    expect(field.parse(text)).toBe(expected);
  });

  it.each(['10', '10 minutes', 'm10', '', '-5s', '1.5.2m', '10M'])('refuses %j with the hint', (text) => {
    const result = field.safeParse(text);
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe(`${DURATION_HINT}, got ${JSON.stringify(text)}`);
  });

  it('refuses a bare number and says which units to add', () => {
    const result = field.safeParse(30);
    expect(result.error?.issues[0]?.message).toBe(
      `${DURATION_HINT} (a bare number has no unit: write 30s or 30m)`,
    );
  });

  it('refuses zero by default and honours explicit bounds', () => {
    expect(field.safeParse('0s').error?.issues[0]?.message).toBe('must be longer than 0, got 0s');
    const bounded = durationField({ min: ms('1m'), max: ms('1h') });
    expect(bounded.safeParse('30s').error?.issues[0]?.message).toBe('must be at least 1m, got 30s');
    expect(bounded.safeParse('2h').error?.issues[0]?.message).toBe('must be at most 1h, got 2h');
    expect(bounded.parse('1h')).toBe(3_600_000);
  });

  it('caps every duration at 365d, finite, unless the field has a smaller max', () => {
    expect(MAX_DURATION_MS).toBe(ms('365d'));
    expect(field.parse('365d')).toBe(MAX_DURATION_MS);
    expect(field.safeParse('366d').error?.issues[0]?.message).toBe('must be at most 365d, got 366d');
    expect(field.safeParse('8761h').error?.issues[0]?.message).toBe('must be at most 365d, got 8761h');
    const huge = `${'9'.repeat(400)}d`;
    expect(field.safeParse(huge).error?.issues[0]?.message).toBe(`must be at most 365d, got ${huge}`);
    expect(durationField({ max: ms('400d') }).safeParse('366d').success).toBe(false);
    expect(durationField({ max: ms('30d') }).safeParse('31d').error?.issues[0]?.message).toBe(
      'must be at most 30d, got 31d',
    );
  });

  it('ms() converts source defaults and throws on a typo', () => {
    expect(ms('35m')).toBe(2_100_000);
    expect(() => ms('35 min')).toThrow(/not a duration/);
  });
});
