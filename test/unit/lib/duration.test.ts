import { describe, expect, it } from 'vitest';
import { formatDuration, isDurationText, parseDuration } from '../../../src/lib/duration.js';

describe('parseDuration', () => {
  it('reads each unit', () => {
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('2h')).toBe(7_200_000);
    expect(parseDuration('1d')).toBe(86_400_000);
  });

  it('reads combined parts and decimals', () => {
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1m30s500ms')).toBe(90_500);
    expect(parseDuration('1.5s')).toBe(1500);
    expect(parseDuration('0s')).toBe(0);
  });

  it('ignores surrounding white space', () => {
    expect(parseDuration('  10s ')).toBe(10_000);
  });

  it('is undefined for anything that is not a duration', () => {
    for (const text of [
      '',
      '10',
      'm',
      '10x',
      '-5s',
      '10 s',
      '1h 30m',
      's10',
      '1.s',
      '.5s',
      'ten seconds',
      '10S',
    ]) {
      expect(parseDuration(text), JSON.stringify(text)).toBeUndefined();
    }
  });
});

describe('formatDuration', () => {
  it('below a second, in ms', () => {
    expect(formatDuration(0)).toBe('0ms');
    expect(formatDuration(999)).toBe('999ms');
    expect(formatDuration(12.4)).toBe('12ms');
  });

  it('from a second on, in h/m/s with zero parts left out', () => {
    expect(formatDuration(1000)).toBe('1s');
    expect(formatDuration(60_000)).toBe('1m');
    expect(formatDuration(61_000)).toBe('1m1s');
    expect(formatDuration(90_000)).toBe('1m30s');
    expect(formatDuration(3_600_000)).toBe('1h');
    expect(formatDuration(3_661_000)).toBe('1h1m1s');
    expect(formatDuration(7_205_000)).toBe('2h5s');
    expect(formatDuration(90_000_000)).toBe('25h');
  });

  it('rounds to whole seconds', () => {
    expect(formatDuration(1499)).toBe('1s');
    expect(formatDuration(59_500)).toBe('1m');
  });

  it('round-trips through parseDuration', () => {
    for (const ms of [1000, 61_000, 3_661_000, 5_400_000]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});

describe('parseDuration of huge numbers', () => {
  it('is undefined, never Infinity, for a number too large for a double', () => {
    expect(parseDuration(`${'9'.repeat(400)}d`)).toBeUndefined();
    expect(parseDuration(`1s${'9'.repeat(400)}ms`)).toBeUndefined();
    expect(isDurationText(`${'9'.repeat(400)}d`)).toBe(true);
    expect(isDurationText('10')).toBe(false);
  });
});
