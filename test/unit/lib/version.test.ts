import { describe, expect, it } from 'vitest';
import {
  BUILD_VERSION_PATTERN,
  compareBuildVersions,
  isBuildVersion,
  parseBuildVersion,
} from '../../../src/lib/version.js';

describe('parseBuildVersion', () => {
  it('parses <major>.<minor>-<build> into three numbers', () => {
    expect(parseBuildVersion('19.470-4')).toEqual([19, 470, 4]);
    expect(parseBuildVersion('20.1-2749')).toEqual([20, 1, 2749]);
    expect(parseBuildVersion('0.0-0')).toEqual([0, 0, 0]);
  });

  it('rejects anything else', () => {
    for (const text of [
      '',
      'abc',
      '19.470',
      '19-4',
      '19.470.4',
      '19.470-',
      'v19.470-4',
      '19.470-4 ',
      ' 19.470-4',
      '19.470-4a',
      '-19.470-4',
      '19.4a0-4',
      '19.470-4\n',
    ]) {
      expect(parseBuildVersion(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('matches the pattern of the real builds', () => {
    for (const v of ['19.115-37', '19.245-6', '19.516-1', '19.536-4', '20.1-2749']) {
      expect(BUILD_VERSION_PATTERN.test(v)).toBe(true);
    }
  });
});

describe('isBuildVersion', () => {
  it('is true exactly when parseBuildVersion parses', () => {
    expect(isBuildVersion('19.400-5')).toBe(true);
    expect(isBuildVersion('19.400')).toBe(false);
    expect(isBuildVersion('latest')).toBe(false);
  });
});

describe('compareBuildVersions', () => {
  it('compares numerically, part by part, never as strings', () => {
    expect(compareBuildVersions('19.115-37', '19.245-6')).toBeLessThan(0);
    expect(compareBuildVersions('9.1-1', '10.1-1')).toBeLessThan(0); // "9" > "10" as strings
    expect(compareBuildVersions('19.99-1', '19.100-1')).toBeLessThan(0);
    expect(compareBuildVersions('19.470-9', '19.470-10')).toBeLessThan(0);
    expect(compareBuildVersions('20.1-2749', '19.536-4')).toBeGreaterThan(0);
    expect(compareBuildVersions('19.470-4', '19.470-4')).toBe(0);
  });

  it('major before minor before build', () => {
    expect(compareBuildVersions('20.0-0', '19.999-999')).toBeGreaterThan(0);
    expect(compareBuildVersions('19.2-0', '19.1-999')).toBeGreaterThan(0);
    expect(compareBuildVersions('19.1-2', '19.1-1')).toBeGreaterThan(0);
  });

  it('sorts a list of builds from oldest to newest', () => {
    const builds = ['20.1-2749', '19.115-37', '9.99-1', '19.536-4', '19.245-6'];
    expect([...builds].sort(compareBuildVersions)).toEqual([
      '9.99-1',
      '19.115-37',
      '19.245-6',
      '19.536-4',
      '20.1-2749',
    ]);
  });

  it('throws a RangeError naming a malformed version', () => {
    expect(() => compareBuildVersions('abc', '19.1-1')).toThrow(RangeError);
    expect(() => compareBuildVersions('19.1-1', '19.1')).toThrow(/"19\.1"/);
  });
});
