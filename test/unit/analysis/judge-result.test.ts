import { describe, expect, it } from 'vitest';
import { formatLabels, judgeResult, parseSampleValue } from '../../../src/analysis/judge-result.js';
import { describeCondition, formatValue, meetsCondition } from '../../../src/analysis/meets-condition.js';
import type { PromQueryData } from '../../../src/analysis/schema.js';

const T = 1_700_000_000;
const vector = (...series: [Record<string, string>, string][]): PromQueryData => ({
  resultType: 'vector',
  result: series.map(([metric, v]) => ({ metric, value: [T, v] })),
});

describe('meetsCondition', () => {
  it('judges strict and inclusive bounds', () => {
    expect(meetsCondition({ below: 0.05 }, 0.04)).toBe(true);
    expect(meetsCondition({ below: 0.05 }, 0.05)).toBe(false);
    expect(meetsCondition({ atMost: 0.05 }, 0.05)).toBe(true);
    expect(meetsCondition({ above: 100 }, 100)).toBe(false);
    expect(meetsCondition({ atLeast: 100 }, 100)).toBe(true);
    expect(meetsCondition({ atLeast: 1, below: 5 }, 4.99)).toBe(true);
    expect(meetsCondition({ atLeast: 1, below: 5 }, 0.99)).toBe(false);
    expect(meetsCondition({ below: 1 }, Number.NaN)).toBe(false);
  });

  it('says the condition and values in words', () => {
    expect(describeCondition({ below: 0.05 })).toBe('below 0.05');
    expect(describeCondition({ atLeast: 1, below: 5 })).toBe('at least 1 and below 5');
    expect(describeCondition({ above: 0, atMost: 10 })).toBe('above 0 and at most 10');
    expect(formatValue(0.1 + 0.2)).toBe('0.3');
    expect(formatValue(123456789)).toBe('123457000');
    expect([Number.NaN, Infinity, -Infinity].map(formatValue)).toEqual(['NaN', '+Inf', '-Inf']);
  });
});

describe('parseSampleValue and formatLabels', () => {
  it("reads Prometheus's value texts", () => {
    expect(parseSampleValue('0.12')).toBe(0.12);
    expect(parseSampleValue('1e-3')).toBe(0.001);
    expect(parseSampleValue('+Inf')).toBe(Number.POSITIVE_INFINITY);
    expect(parseSampleValue('-Inf')).toBe(Number.NEGATIVE_INFINITY);
    expect(parseSampleValue('NaN')).toBeNaN();
    expect(parseSampleValue('')).toBeNaN();
    expect(parseSampleValue('abc')).toBeNaN();
  });

  it('writes labels sorted, without the metric name, cut when long', () => {
    expect(formatLabels({ __name__: 'x', rollout: 'a@1', outcome: 'failed' })).toBe(
      '{outcome="failed", rollout="a@1"}',
    );
    const long = formatLabels({ a: 'x'.repeat(300) });
    expect(long.length).toBe(160);
    expect(long.endsWith('…}')).toBe(true);
  });
});

describe('judgeResult', () => {
  it('passes one series that meets the condition', () => {
    expect(judgeResult(vector([{ rollout: 'a@1' }, '0.01']), { below: 0.05 })).toEqual({
      outcome: 'pass',
      value: 0.01,
      detail: '0.01 on {rollout="a@1"} is below 0.05',
    });
  });

  it('fails one series that does not, naming it', () => {
    expect(judgeResult(vector([{ rollout: 'a@1' }, '0.12']), { below: 0.05 })).toEqual({
      outcome: 'fail',
      value: 0.12,
      detail: '0.12 on {rollout="a@1"} is not below 0.05',
    });
  });

  it('leaves out empty label sets (an aggregate) and judges a scalar', () => {
    expect(judgeResult(vector([{}, '7']), { atMost: 5 }).detail).toBe('7 is not at most 5');
    expect(judgeResult({ resultType: 'scalar', result: [T, '3'] }, { atMost: 5 })).toEqual({
      outcome: 'pass',
      value: 3,
      detail: '3 is at most 5',
    });
    expect(judgeResult({ resultType: 'scalar', result: [T, 'NaN'] }, { atMost: 5 }).outcome).toBe(
      'inconclusive',
    );
  });

  it('is inconclusive without series: no data never passes', () => {
    expect(judgeResult(vector(), { below: 1 })).toEqual({
      outcome: 'inconclusive',
      detail: 'no data: the query returned no series',
    });
  });

  it.each([
    ['NaN', 'NaN on {rollout="a@1"} cannot be judged'],
    ['+Inf', '+Inf on {rollout="a@1"} cannot be judged'],
    ['-Inf', '-Inf on {rollout="a@1"} cannot be judged'],
  ])('is inconclusive on %s, whatever the condition', (value, detail) => {
    for (const condition of [{ below: 1 }, { above: 1 }, { atLeast: -1e300, atMost: 1e300 }]) {
      expect(judgeResult(vector([{ rollout: 'a@1' }, value]), condition)).toEqual({
        outcome: 'inconclusive',
        detail,
      });
    }
  });

  it('passes several series only when every one meets the condition, naming the nearest to failing', () => {
    const data = vector([{ s: 'a' }, '0.01'], [{ s: 'b' }, '0.04'], [{ s: 'c' }, '0.02']);
    expect(judgeResult(data, { below: 0.05 })).toEqual({
      outcome: 'pass',
      value: 0.04,
      detail: 'all 3 series are below 0.05 (nearest: 0.04 on {s="b"})',
    });
    expect(judgeResult(data, { above: 0 }).value).toBe(0.01);
    expect(judgeResult(data, { atLeast: 0, atMost: 0.045 }).value).toBe(0.04);
  });

  it('fails several series when one fails, naming the worst and how many fail', () => {
    const data = vector([{ s: 'a' }, '0.01'], [{ s: 'b' }, '0.2'], [{ s: 'c' }, '0.09']);
    expect(judgeResult(data, { below: 0.05 })).toEqual({
      outcome: 'fail',
      value: 0.2,
      detail: '0.2 on {s="b"} is not below 0.05 (2 of 3 series)',
    });
  });

  it('fails on a finite failing series even when another is NaN; else NaN makes it inconclusive', () => {
    const failing = vector([{ s: 'a' }, 'NaN'], [{ s: 'b' }, '0.2']);
    expect(judgeResult(failing, { below: 0.05 }).outcome).toBe('fail');
    const passingAndNaN = vector([{ s: 'a' }, '0.01'], [{ s: 'b' }, 'NaN']);
    expect(judgeResult(passingAndNaN, { below: 0.05 })).toEqual({
      outcome: 'inconclusive',
      detail: 'NaN on {s="b"} cannot be judged (1 of 2 series)',
    });
  });

  it('is inconclusive on a histogram sample, a range vector and a string', () => {
    const histogram: PromQueryData = {
      resultType: 'vector',
      result: [{ metric: { s: 'a' }, histogram: [T, {}] }],
    };
    expect(judgeResult(histogram, { below: 1 }).detail).toBe(
      'a histogram sample on {s="a"} cannot be judged',
    );
    expect(judgeResult({ resultType: 'matrix', result: [] }, { below: 1 }).detail).toMatch(
      /range vector: write an instant query/,
    );
    expect(judgeResult({ resultType: 'string', result: [T, 'x'] }, { below: 1 }).outcome).toBe(
      'inconclusive',
    );
  });
});
