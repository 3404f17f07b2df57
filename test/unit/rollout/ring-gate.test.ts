import { describe, expect, it } from 'vitest';
import type { CurrentRollout } from '../../../src/rollout/life/index.js';
import { judgeRing } from '../../../src/rollout/testing.js';

const NOW = Date.UTC(2026, 10, 27, 10, 0);
const after = { policy: 'canary', soak: 0, require: 0 } as unknown as Parameters<typeof judgeRing>[0];

function earlier(phase: 'converged' | 'superseded'): CurrentRollout {
  return {
    rollout: {
      id: 'canary@19.470-4',
      phase,
      convergedAt: NOW - 1000,
      updatedAt: NOW - 500,
      quarantined: [{ cohort: 'osName=Mac OS X', reason: '4 of 5 failed', at: NOW - 2000, held: 8 }],
    },
    counts: { succeeded: 10, quarantined: 8 },
    slotsHeld: 0,
  } as unknown as CurrentRollout;
}

describe('judgeRing with a cohort quarantined in the earlier ring', () => {
  it('suggests the retry that releases it while the rollout can be retried', () => {
    expect(judgeRing(after, '19.470-4', earlier('converged'), NOW)).toEqual({
      kind: 'blocked',
      reason: 'quarantined',
      text: '19.470-4 has a cohort quarantined in canary (osName=Mac OS X): `fleet-upgrade retry canary@19.470-4 --only quarantined` releases it',
    });
  });

  it('suggests no retry once the rollout is superseded (retry refuses it)', () => {
    const verdict = judgeRing(after, '19.470-4', earlier('superseded'), NOW);
    expect(verdict).toEqual({
      kind: 'blocked',
      reason: 'quarantined',
      text: '19.470-4 has a cohort quarantined in canary (osName=Mac OS X), never released: canary@19.470-4 was superseded',
    });
  });
});
