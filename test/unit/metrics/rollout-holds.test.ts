/**
 * What a rollout holds back, as the gauges show it: its quarantined cohorts (bounded in number,
 * only while they can be released) and the Collectors whose previous build is gone.
 */
import { describe, expect, it } from 'vitest';
import { MAX_COHORT_SERIES, OTHER_COHORT, rolloutHolds } from '../../../src/metrics/rollout-holds.js';
import { ROLLOUT_PHASES } from '../../../src/rollout/life/index.js';

const cohort = (i: number) => `osName=os-${i},osArch=amd64`;

describe('rolloutHolds', () => {
  it('shows each quarantined cohort with the Collectors it held', () => {
    expect(
      rolloutHolds({
        phase: 'running',
        quarantined: [
          { cohort: cohort(1), held: 4 },
          { cohort: cohort(2), held: 0 },
        ],
      }),
    ).toEqual({
      quarantined: [
        { cohort: cohort(1), held: 4 },
        { cohort: cohort(2), held: 0 },
      ],
      rollbackUnavailable: 0,
      rollbackUnavailableByOrg: {},
    });
  });

  it('keeps at most MAX_COHORT_SERIES cohorts per rollout and sums the rest under `other`', () => {
    const quarantined = Array.from({ length: MAX_COHORT_SERIES + 5 }, (_, i) => ({
      cohort: cohort(i),
      held: 2,
    }));
    const out = rolloutHolds({ phase: 'halted', quarantined }).quarantined;
    expect(out).toHaveLength(MAX_COHORT_SERIES + 1);
    expect(out.slice(0, MAX_COHORT_SERIES).map((q) => q.cohort)).toEqual(
      quarantined.slice(0, MAX_COHORT_SERIES).map((q) => q.cohort),
    );
    expect(out[MAX_COHORT_SERIES]).toEqual({ cohort: OTHER_COHORT, held: 10 });
    // No cohort key can be `other`: every key is made of name=value pairs.
    expect(OTHER_COHORT).not.toContain('=');
  });

  it('shows quarantines only while the rollout can still release them', () => {
    const quarantined = [{ cohort: cohort(1), held: 3 }];
    const shown = ROLLOUT_PHASES.filter(
      (phase) => rolloutHolds({ phase, quarantined }).quarantined.length > 0,
    );
    expect(shown).toEqual(['running', 'converged', 'paused', 'halted']);
  });

  it('counts each Collector whose previous build is gone once, whatever the requests that found it', () => {
    const base = { request: 'r', at: 0, by: 'ops', reason: 'x' };
    expect(
      rolloutHolds({
        phase: 'halted',
        rollbacks: [
          { ...base, build: 'a', collectors: 150, ids: [1, 2], state: 'unavailable' },
          { ...base, build: 'a', collectors: 2, ids: [1, 2], state: 'unavailable' },
          { ...base, build: 'b', collectors: 2, ids: [7, 8], state: 'unavailable' },
          { ...base, build: 'b', collectors: 1, ids: [9], state: 'unavailable' },
          { ...base, build: 'c', collectors: 40, state: 'started' },
        ],
      }).rollbackUnavailable,
    ).toBe(150 + 3);
    expect(rolloutHolds({ phase: 'running' }).rollbackUnavailable).toBe(0);
  });

  it('counts them per organization: the same ids in two organizations are two Collectors each', () => {
    const base = { request: 'r', at: 0, by: 'ops', reason: 'x', build: 'a', state: 'unavailable' };
    const holds = rolloutHolds({
      phase: 'running',
      rollbacks: [
        { ...base, collectors: 2, ids: [1, 2] },
        { ...base, org: 'default', collectors: 2, ids: [2, 3] },
        { ...base, org: 'emea', collectors: 2, ids: [1, 2] },
        { ...base, org: 'emea', build: 'b', collectors: 5 },
        { ...base, org: 'apac', collectors: 9, state: 'started' },
      ],
    });
    // A rollback without `org` is the default organization's (from before organizations).
    expect(holds.rollbackUnavailableByOrg).toEqual({ default: 3, emea: 2 + 5 });
    expect(holds.rollbackUnavailable).toBe(10);
  });
});
