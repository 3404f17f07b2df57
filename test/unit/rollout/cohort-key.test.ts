/** Cohort keys (src/rollout/collector/cohort-key.ts): readable, stable whatever the order of `by`, and reversible. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COHORT_DIMENSIONS, type CohortDimension } from '../../../src/policy/cohorts.js';
import { cohortKey, parseCohortKey } from '../../../src/rollout/collector/index.js';

const windows = { osName: 'Windows Server 2019', osArch: 'amd64', from: '19.470-4' };

describe('cohortKey', () => {
  it('names the dimensions of `by` with their values', () => {
    expect(cohortKey(windows, ['osName', 'osArch'])).toBe('osName=Windows Server 2019,osArch=amd64');
    expect(cohortKey(windows, ['fromBuild'])).toBe('fromBuild=19.470-4');
    expect(cohortKey(windows, ['osName', 'osArch', 'fromBuild'])).toBe(
      'osName=Windows Server 2019,osArch=amd64,fromBuild=19.470-4',
    );
  });

  it('is the same whatever the order of `by`', () => {
    expect(cohortKey(windows, ['fromBuild', 'osArch', 'osName'])).toBe(
      cohortKey(windows, ['osName', 'osArch', 'fromBuild']),
    );
  });

  it('writes missing or empty values as unknown', () => {
    expect(cohortKey({ from: '19.470-4' }, ['osName', 'osArch'])).toBe('osName=unknown,osArch=unknown');
    expect(cohortKey({ osName: '  ', osArch: undefined }, ['osName', 'osArch', 'fromBuild'])).toBe(
      'osName=unknown,osArch=unknown,fromBuild=unknown',
    );
  });

  it('escapes the separators in values', () => {
    expect(cohortKey({ osName: 'Linux, 100%=ok' }, ['osName'])).toBe('osName=Linux%2C 100%25%3Dok');
    expect(parseCohortKey('osName=Linux%2C 100%25%3Dok')).toEqual({ osName: 'Linux, 100%=ok' });
  });
});

describe('parseCohortKey', () => {
  it('gives back the values', () => {
    expect(parseCohortKey('osName=Windows Server 2019,osArch=amd64')).toEqual({
      osName: 'Windows Server 2019',
      osArch: 'amd64',
    });
  });

  it('refuses what cohortKey does not make', () => {
    for (const key of ['', 'osName', 'hostName=web-1', 'osName=a,osName=b', 'osName=a=b', 'osName=50%']) {
      expect(parseCohortKey(key)).toBeUndefined();
    }
  });

  it('round-trips any values on any dimensions', () => {
    const value = fc.option(fc.string({ maxLength: 20 }), { nil: undefined });
    const by = fc.subarray([...COHORT_DIMENSIONS] as CohortDimension[], { minLength: 1 });
    fc.assert(
      fc.property(value, value, value, by, (osName, osArch, from, dims) => {
        const key = cohortKey({ osName, osArch, from }, dims);
        const expected = (v: string | undefined) => (v?.trim() ? v.trim() : 'unknown');
        const values = { osName: expected(osName), osArch: expected(osArch), fromBuild: expected(from) };
        expect(parseCohortKey(key)).toEqual(Object.fromEntries(dims.map((d) => [d, values[d]])));
      }),
    );
  });
});
