/**
 * A policy file that is hostile or careless (aliases, a huge file, unbounded numbers) is a clear
 * error naming the file and where, never an exception that escapes the loader.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_POLICY_BYTES,
  type PolicyFileResult,
  parsePolicyText,
  readPolicyFile,
} from '../../../src/policy/load/load-policies.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';
import { aliasBomb } from '../lib/hostile-yaml.js';

const dir = usePolicyDir();

function failure(result: PolicyFileResult): string {
  if (result.ok) throw new Error('expected the policy to be refused');
  return result.error.message;
}

describe('aliases in a policy', () => {
  it('an undefined alias is an error at its line and column, not an exception', () => {
    expect(failure(parsePolicyText('p.yaml', yaml('target: latest', 'name: *a')))).toBe(
      'p.yaml:2:7: name: anchors and aliases (&name, *name) are not allowed in a policy file: write the value out',
    );
  });

  it('an alias bomb is refused at its first anchor, cheaply', () => {
    const message = failure(parsePolicyText('bomb.yaml', aliasBomb(12)));
    expect(message.split('\n')[0]).toMatch(/^bomb\.yaml:2:5: l0: anchors and aliases .* are not allowed/);
  });

  it('even a harmless anchor is refused, at each anchor and alias', () => {
    const text = yaml('name: a', 'select: &s { osName: Linux }', 'waves:', '  - { select: *s, size: 1 }');
    expect(failure(parsePolicyText('p.yaml', text)).split('\n')).toEqual([
      'p.yaml:2:9: select: anchors and aliases (&name, *name) are not allowed in a policy file: write the value out',
      'p.yaml:4:15: waves[0].select: anchors and aliases (&name, *name) are not allowed in a policy file: write the value out',
    ]);
  });
});

describe('size of a policy file', () => {
  const big = `name: big\n${'# padding\n'.repeat(30_000)}`;

  it(`refuses a text above ${MAX_POLICY_BYTES} bytes before parsing it`, () => {
    expect(failure(parsePolicyText('big.yaml', big))).toBe(
      `big.yaml: the file is 300010 bytes; a policy file may have at most ${MAX_POLICY_BYTES} bytes (256 KB)`,
    );
  });

  it('refuses such a file on disk', () => {
    const file = dir.write('big.yaml', big);
    expect(failure(readPolicyFile(file))).toBe(
      `${file}: the file is 300010 bytes; a policy file may have at most ${MAX_POLICY_BYTES} bytes (256 KB)`,
    );
  });

  it('accepts a file just under the limit', () => {
    const text = `name: fits\n${'#'.repeat(MAX_POLICY_BYTES - 12)}\n`;
    expect(parsePolicyText('p.yaml', text).ok).toBe(true);
  });
});

describe('unbounded numbers', () => {
  it.each([
    ['taskTimeout', `"${'9'.repeat(400)}d"`, 'p.yaml:2:1: taskTimeout: must be at most 365d'],
    ['taskTimeout', '366d', 'p.yaml:2:1: taskTimeout: must be at most 365d, got 366d'],
    ['poll', '{ initial: 400d }', 'p.yaml:2:9: poll.initial: must be at most 365d, got 400d'],
    [
      'retry',
      '{ notAlive: { until: 1000d } }',
      'p.yaml:2:22: retry.notAlive.until: must be at most 365d, got 1000d',
    ],
  ])('%s: %s is refused', (field, value, message) => {
    const text = yaml('name: a', `${field}: ${value}`);
    expect(failure(parsePolicyText('p.yaml', text)).split('\n')[0]).toMatch(
      new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`),
    );
  });

  it('a number too large for a double is refused, not taken as Infinity', () => {
    const text = yaml('name: a', `pageSize: 1${'0'.repeat(400)}`, 'maxInFlight: 1e999');
    const lines = failure(parsePolicyText('p.yaml', text)).split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^p\.yaml:2:1: pageSize: /);
    expect(lines[1]).toMatch(/^p\.yaml:3:1: maxInFlight: /);
  });
});
