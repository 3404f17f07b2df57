import { describe, expect, it } from 'vitest';
import { planMove } from '../../../src/policy/select/plan-move.js';

describe('planMove', () => {
  const forward = { allowDowngrade: false };
  const both = { allowDowngrade: true };

  it('upgrades a Collector below the target, comparing builds numerically', () => {
    expect(planMove(forward, '19.9-1', '19.10-1')).toEqual({
      kind: 'upgrade',
      from: '19.9-1',
      to: '19.10-1',
    });
  });

  it('skips a Collector on the target', () => {
    expect(planMove(forward, '19.470-4', '19.470-4')).toEqual({ kind: 'skip', reason: 'at-target' });
  });

  it('leaves a Collector above the target alone unless downgrades are allowed', () => {
    expect(planMove(forward, '20.1-2', '19.470-4')).toEqual({ kind: 'skip', reason: 'above-target' });
    expect(planMove(both, '20.1-2', '19.470-4')).toEqual({
      kind: 'downgrade',
      from: '20.1-2',
      to: '19.470-4',
    });
  });

  it('skips a Collector without a well-formed build, and refuses a malformed target', () => {
    expect(planMove(both, undefined, '19.470-4')).toEqual({ kind: 'skip', reason: 'unknown-version' });
    expect(planMove(both, '19.470', '19.470-4')).toEqual({ kind: 'skip', reason: 'unknown-version' });
    expect(() => planMove(both, '19.1-1', 'latest')).toThrow(/not a build version/);
  });
});
