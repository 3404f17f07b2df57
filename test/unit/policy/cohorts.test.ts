/**
 * The `cohorts` field (src/policy/cohorts.ts) read from YAML through the project's loader
 * (loadSourceFile: errors carry file:line:column and the field), inside a small policy-like
 * schema as the integrator will place it (`cohorts: Cohorts.optional()`).
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadSourceFile } from '../../../src/lib/source/yaml-source.js';
import { Cohorts } from '../../../src/policy/cohorts.js';
import { configErrorMessage } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const Wrapper = z.strictObject({ name: z.string(), cohorts: Cohorts.optional() });

const dir = usePolicyDir();

function load(...lines: string[]) {
  return loadSourceFile(dir.write('p.yaml', yaml('name: p', ...lines)), Wrapper).cohorts;
}

/** The error of p.yaml, the folder's path taken out; fails when the file is valid. */
function errorOf(...lines: string[]): string {
  return configErrorMessage(dir.write('p.yaml', yaml('name: p', ...lines)), (file) =>
    loadSourceFile(file, Wrapper),
  );
}

describe('cohorts', () => {
  it('is optional', () => {
    expect(load()).toBeUndefined();
  });

  it('fills confidence 0.95 and minSample 5, and takes a single dimension as a list', () => {
    expect(load('cohorts: { by: osName, maxFailureRatio: 0.1 }')).toEqual({
      by: ['osName'],
      maxFailureRatio: 0.1,
      confidence: 0.95,
      minSample: 5,
    });
  });

  it('reads every field', () => {
    expect(
      load(
        'cohorts:',
        '  by: [osName, osArch, fromBuild]',
        '  maxFailureRatio: 0.2',
        '  confidence: 0.99',
        '  minSample: 10',
      ),
    ).toEqual({
      by: ['osName', 'osArch', 'fromBuild'],
      maxFailureRatio: 0.2,
      confidence: 0.99,
      minSample: 10,
    });
  });

  it('refuses a missing by and maxFailureRatio', () => {
    expect(errorOf('cohorts: {}')).toBe(
      [
        'p.yaml:2:10: cohorts.by: required field is missing',
        'p.yaml:2:10: cohorts.maxFailureRatio: required field is missing',
      ].join('\n'),
    );
  });

  it('refuses unknown or repeated dimensions, an empty list, and values out of range', () => {
    expect(
      errorOf(
        'cohorts:',
        '  by: [osName, hostName, osName]',
        '  maxFailureRatio: 1.5',
        '  confidence: 0.9999',
        '  minSample: 0',
      ),
    ).toBe(
      [
        'p.yaml:3:16: cohorts.by[1]: expected one of osName, osArch, fromBuild, got "hostName"',
        'p.yaml:4:3: cohorts.maxFailureRatio: must be between 0 and 1',
        'p.yaml:5:3: cohorts.confidence: must be between 0.5 and 0.999',
        'p.yaml:6:3: cohorts.minSample: must be at least 1',
      ].join('\n'),
    );
    expect(errorOf('cohorts: { by: [osName, osName], maxFailureRatio: 0.1, confidence: 0.4 }')).toBe(
      [
        'p.yaml:2:12: cohorts.by: a dimension is named twice',
        'p.yaml:2:56: cohorts.confidence: must be between 0.5 and 0.999',
      ].join('\n'),
    );
    expect(errorOf('cohorts: { by: [], maxFailureRatio: 0.1, minSample: 2.5 }')).toBe(
      [
        'p.yaml:2:12: cohorts.by: name at least one of osName, osArch, fromBuild',
        'p.yaml:2:42: cohorts.minSample: must be a whole number',
      ].join('\n'),
    );
  });

  it('refuses a misspelt field with a suggestion', () => {
    expect(errorOf('cohorts: { by: osArch, maxFailureRatio: 0.1, minSamples: 3 }')).toBe(
      'p.yaml:2:46: cohorts.minSamples: unknown field (did you mean "minSample"?)',
    );
  });
});
