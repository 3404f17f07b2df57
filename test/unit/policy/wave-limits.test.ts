/**
 * A policy's waves as a rollout's plan (src/policy/wave-limits.ts): cumulative caps from counts
 * and rounded-up percentages, never going down, always ending with every Collector; empty waves
 * dropped with their bake and approval moved to the wave before; a first wave that selects its
 * members (canaries) sized by the canaries found.
 */
import { describe, expect, it } from 'vitest';
import type { Wave } from '../../../src/policy/wave.js';
import { waveLimits, wavePlan } from '../../../src/policy/wave-limits.js';

const count = (n: number) => ({ size: { kind: 'count', count: n } }) as const;
const percent = (p: number) => ({ size: { kind: 'percent', percent: p } }) as const;
const HOUR = 3_600_000;

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
    expect(() => waveLimits([percent(100)], 2.5)).toThrow(RangeError);
  });

  it('is the caps of wavePlan', () => {
    const waves: Wave[] = [
      { ...count(5), bakeMs: HOUR },
      { ...percent(50), approval: 'manual' },
      percent(100),
    ];
    expect(waveLimits(waves, 40)).toEqual(wavePlan(waves, 40).map((w) => w.cap));
  });
});

describe('wavePlan', () => {
  it('carries each wave’s bake and approval with its cap', () => {
    expect(
      wavePlan(
        [
          { ...count(5), bakeMs: HOUR },
          { ...percent(50), bakeMs: 2 * HOUR, approval: 'manual' },
          percent(100),
        ],
        40,
      ),
    ).toEqual([{ cap: 5, bakeMs: HOUR }, { cap: 20, bakeMs: 2 * HOUR, approval: 'manual' }, { cap: 40 }]);
  });

  it('drops an empty wave, moving its bake (the longer one) and its approval to the wave before', () => {
    // 5% of 40 is 2, below the 10 of the first wave: nobody new, so the wave goes.
    expect(
      wavePlan(
        [
          { ...count(10), bakeMs: HOUR },
          { ...percent(5), bakeMs: 3 * HOUR, approval: 'manual' },
          percent(100),
        ],
        40,
      ),
    ).toEqual([{ cap: 10, bakeMs: 3 * HOUR, approval: 'manual' }, { cap: 40 }]);
    // A shorter bake of the dropped wave does not shorten the one before.
    expect(
      wavePlan([{ ...count(10), bakeMs: 3 * HOUR }, { ...count(10), bakeMs: HOUR }, percent(100)], 40),
    ).toEqual([{ cap: 10, bakeMs: 3 * HOUR }, { cap: 40 }]);
    // A wave before without a bake takes the dropped one's.
    expect(wavePlan([count(10), { ...count(8), bakeMs: HOUR }, percent(100)], 40)).toEqual([
      { cap: 10, bakeMs: HOUR },
      { cap: 40 },
    ]);
  });

  it('drops waves past the total too: what follows them follows the last wave, which has nothing after it', () => {
    // 30 Collectors: the 50 and 100% waves admit nobody new after the first wave of 30.
    expect(
      wavePlan(
        [
          { ...count(50), bakeMs: HOUR },
          { ...percent(100), approval: 'manual' },
        ],
        30,
      ),
    ).toEqual([{ cap: 30, bakeMs: HOUR, approval: 'manual' }]);
  });

  it('adds a final wave of everything when the waves stop short, without bake or approval', () => {
    expect(wavePlan([{ ...count(10), approval: 'manual' }], 100)).toEqual([
      { cap: 10, approval: 'manual' },
      { cap: 100 },
    ]);
    expect(wavePlan([], 7)).toEqual([{ cap: 7 }]);
  });

  it('sizes a first wave that selects its canaries, without a size, by the canaries found', () => {
    const canaryWave: Wave = { select: { hostName: ['canary-*'] }, bakeMs: HOUR, approval: 'manual' };
    expect(wavePlan([canaryWave, percent(50), percent(100)], 200, 3)).toEqual([
      { cap: 3, bakeMs: HOUR, approval: 'manual' },
      { cap: 100 },
      { cap: 200 },
    ]);
    // More canaries than the total: capped at the total, a single wave.
    expect(wavePlan([canaryWave, percent(100)], 2, 5)).toEqual([
      { cap: 2, bakeMs: HOUR, approval: 'manual' },
    ]);
    // A later wave smaller than the canaries found is dropped, its approval moved to the canaries.
    expect(
      wavePlan([{ select: { hostName: ['c-*'] } }, { ...count(2), approval: 'manual' }, percent(100)], 50, 4),
    ).toEqual([{ cap: 4, approval: 'manual' }, { cap: 50 }]);
  });

  it('a first wave with both select and size is sized by its size, not by the canaries', () => {
    expect(wavePlan([{ ...count(2), select: { hostName: ['canary-*'] } }, percent(100)], 50, 7)).toEqual([
      { cap: 2 },
      { cap: 50 },
    ]);
  });

  it('does not change the waves it is given', () => {
    const waves: Wave[] = [{ ...count(10), bakeMs: HOUR }, { ...count(5), approval: 'manual' }, percent(100)];
    const copy = structuredClone(waves);
    wavePlan(waves, 40);
    expect(waves).toEqual(copy);
  });
});
