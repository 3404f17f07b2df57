/**
 * The time left of GET /eta (src/http/get-eta.ts): ceil(left / maxInFlight) × the median of the
 * rollout's durations, per rollout and per part; nothing without a duration or with nothing left;
 * the wait now named beside it (a phase other than running, or the wave's wait).
 */
import { describe, expect, it } from 'vitest';
import { etaMs, rolloutEta } from '../../../src/http/get-eta.js';
import type { RolloutStatus } from '../../../src/rollout/index.js';

const MIN = 60_000;

function status(over: Partial<RolloutStatus>): RolloutStatus {
  return {
    id: 'linux@19.470-4',
    phase: 'running',
    phaseText: 'running',
    maxInFlight: 10,
    total: 100,
    done: 40,
    wave: { index: 1 },
    byOrg: [
      { org: 'emea', build: '19.470-4', counts: {}, inflight: 0, total: 70, done: 20 },
      { org: 'apac', build: '19.470-4', counts: {}, inflight: 0, total: 30, done: 30 },
    ],
    ...over,
  } as unknown as RolloutStatus;
}

describe('the time left', () => {
  it('is the rounds of maxInFlight left times the median duration', () => {
    expect(etaMs(60, 10, 2 * MIN)).toBe(12 * MIN);
    expect(etaMs(61, 10, 2 * MIN)).toBe(14 * MIN);
    expect(etaMs(3, 10, 2 * MIN)).toBe(2 * MIN);
    expect(etaMs(0, 10, 2 * MIN)).toBeUndefined();
    expect(etaMs(5, 10, undefined)).toBeUndefined();
    expect(etaMs(5, 0, MIN)).toBe(5 * MIN);
  });

  it("gives a rollout's and each part's from the median of its durations", () => {
    const eta = rolloutEta(status({}), [3 * MIN, MIN, 2 * MIN, 9 * MIN]);
    // Sorted 1, 2, 3, 9 min: the nearest rank below the middle is 3 min.
    expect(eta).toEqual({
      id: 'linux@19.470-4',
      etaMs: 6 * 3 * MIN,
      medianMs: 3 * MIN,
      samples: 4,
      maxInFlight: 10,
      parts: [{ org: 'emea', etaMs: 5 * 3 * MIN }, { org: 'apac' }],
    });
  });

  it('has none before a first duration, and names the wait it does not count', () => {
    expect(rolloutEta(status({}), [])).toEqual(
      expect.objectContaining({ samples: 0, parts: [{ org: 'emea' }, { org: 'apac' }] }),
    );
    expect(rolloutEta(status({}), []).etaMs).toBeUndefined();
    const paused = rolloutEta(status({ phase: 'paused', phaseText: 'paused by olga' }), [MIN]);
    expect(paused.waitingFor).toBe('paused by olga');
    const baking = rolloutEta(status({ wave: { index: 0, waitingFor: 'bake' } as RolloutStatus['wave'] }), [
      MIN,
    ]);
    expect(baking.waitingFor).toBe('bake');
  });
});
