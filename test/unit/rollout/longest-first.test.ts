/**
 * Where the queue goes longest first (tick/learn-lengths.ts `longestFirst`): in the last wave
 * only, and never under a cohort gate; the waves before it are samples the gates judge.
 */
import { describe, expect, it } from 'vitest';
import { Policy } from '../../../src/policy/schema.js';
import { longestFirst } from '../../../src/rollout/testing.js';

const policy = (extra: Record<string, unknown> = {}) => Policy.parse({ name: 'p', ...extra });
const at = (index: number) => ({ wave: { index, seq: 0 }, canaries: 0 });

describe('longestFirst', () => {
  it('holds from the start for a rollout of one wave', () => {
    expect(longestFirst(policy(), at(0), {})).toBe(true);
    expect(longestFirst(policy(), at(0), { queued: 100 })).toBe(true);
  });

  it('waits for the last wave: not in a wave of 4, nor before the fleet is known', () => {
    const waves = policy({ waves: [4, '100%'] });
    expect(longestFirst(waves, at(0), {})).toBe(false);
    expect(longestFirst(waves, at(0), { queued: 96, progressing: 4 })).toBe(false);
    expect(longestFirst(waves, at(1), { queued: 92, succeeded: 8 })).toBe(true);
    // A first wave that already takes every Collector is the last one.
    expect(longestFirst(waves, at(0), { queued: 3 })).toBe(true);
  });

  it('never under a cohort gate', () => {
    const gated = policy({ cohorts: { by: ['osName'], maxFailureRatio: 0.1 } });
    expect(longestFirst(gated, at(0), { queued: 50 })).toBe(false);
  });
});
