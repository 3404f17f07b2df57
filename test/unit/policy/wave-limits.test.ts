import { describe, expect, it } from 'vitest';
import { waveLimits } from '../../../src/policy/wave-limits.js';

const count = (n: number) => ({ kind: 'count', count: n }) as const;
const percent = (p: number) => ({ kind: 'percent', percent: p }) as const;

describe('waveLimits', () => {
  it('is one wave of everything by default', () => {
    expect(waveLimits([percent(100)], 500)).toEqual([500]);
  });

  it('turns counts and rounded-up percentages into cumulative caps', () => {
    expect(waveLimits([count(5), percent(10), percent(50), percent(100)], 501)).toEqual([5, 51, 251, 501]);
  });

  it('drops waves that admit nobody new and never lets a cap go down', () => {
    expect(waveLimits([count(50), percent(5), percent(100)], 200)).toEqual([50, 200]);
  });

  it('ends with every Collector even when the list stops short', () => {
    expect(waveLimits([count(10), percent(20)], 100)).toEqual([10, 20, 100]);
    expect(waveLimits([count(1000)], 30)).toEqual([30]);
  });

  it('handles an empty selection and refuses a bad total', () => {
    expect(waveLimits([percent(10), percent(100)], 0)).toEqual([0]);
    expect(() => waveLimits([percent(100)], -1)).toThrow(RangeError);
  });
});
