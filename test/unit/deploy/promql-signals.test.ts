/** signalsOf: the parts of an alert expression that the live test evaluates one by one. */
import { describe, expect, it } from 'vitest';
import { signalsOf, splitSetOperands, stripThreshold } from '../../support/promql-signals.js';

describe('signalsOf', () => {
  it('drops a trailing comparison with a number, with or without bool', () => {
    expect(stripThreshold('sum(rate(x[5m])) > 0.05')).toBe('sum(rate(x[5m]))');
    expect(stripThreshold('up{job=~"a.*"} == 0')).toBe('up{job=~"a.*"}');
    expect(stripThreshold('x >= bool 1e3')).toBe('x');
    expect(stripThreshold('a / b')).toBe('a / b');
  });

  it('keeps comparisons inside brackets and label matchers that look like comparisons', () => {
    expect(stripThreshold('count(up == 0)')).toBe('count(up == 0)');
    expect(stripThreshold('x{code!="200"}')).toBe('x{code!="200"}');
  });

  it('splits at top-level and / or / unless and drops their on (...) clause', () => {
    expect(splitSetOperands('a == 1 and on (rollout) b > 0 unless on(rollout) c > 0')).toEqual([
      'a == 1',
      'b > 0',
      'c > 0',
    ]);
    expect(splitSetOperands('sum(x and y)')).toEqual(['sum(x and y)']);
    expect(splitSetOperands('x{outcome="a and b"} or ignoring (le) y')).toEqual([
      'x{outcome="a and b"}',
      'y',
    ]);
    expect(splitSetOperands('error_or_unless_total')).toEqual(['error_or_unless_total']);
  });

  it('unwraps absent() and outer parentheses', () => {
    expect(signalsOf('absent(fleet_upgrade_process_info)')).toEqual(['fleet_upgrade_process_info']);
    expect(signalsOf('(\n  a\n  /\n  b\n) > 0.1\nand on (rollout)\nc >= 10')).toEqual(['a\n  /\n  b', 'c']);
    expect(signalsOf('(a) / (b)')).toEqual(['(a) / (b)']);
    expect(signalsOf('absent(a) + absent(b)')).toEqual(['absent(a) + absent(b)']);
  });
});
