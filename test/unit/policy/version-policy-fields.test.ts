import { describe, expect, it } from 'vitest';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { Policy } from '../../../src/policy/schema.js';
import { parseTarget } from '../../../src/policy/target.js';
import { configErrorMessage } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const dir = usePolicyDir();

function errorOf(text: string): string {
  return configErrorMessage(dir.write('p.yaml', text), (file) => loadPolicies({ files: [file] }));
}

describe('targets, rings, known issues and compliance in a policy (#21)', () => {
  it('reads latest-N, minAge, minimumBuild, after, knownIssues and complianceAlert with their defaults', () => {
    const policy = Policy.parse({
      name: 'prod',
      target: 'latest-1',
      minAge: '14d',
      minimumBuild: '19.400-1',
      after: { policy: 'canary' },
      knownIssues: [{ build: '19.516-*', select: { osName: 'Mac OS X' }, note: 'stops until restarted' }],
      complianceAlert: { below: 0.95 },
    });
    expect(policy.target).toBe('latest-1');
    expect(policy.minAge).toBe(14 * 86_400_000);
    expect(policy.minimumBuild).toBe('19.400-1');
    expect(policy.after).toEqual({ policy: 'canary', soak: 0, require: {} });
    expect(policy.knownIssues).toEqual([
      { build: '19.516-*', select: { osName: ['Mac OS X'] }, action: 'skip', note: 'stops until restarted' },
    ]);
    expect(policy.complianceAlert).toEqual({ below: 0.95, for: 86_400_000 });
  });

  it('leaves every new field out of a policy that names none (its fingerprint is unchanged)', () => {
    const policy = Policy.parse({ name: 'minimal' });
    for (const field of ['minAge', 'minimumBuild', 'after', 'knownIssues', 'complianceAlert'])
      expect(field in policy).toBe(false);
  });

  it('parses the forms of a target', () => {
    expect(parseTarget('latest')).toEqual({ kind: 'latest', back: 0 });
    expect(parseTarget('latest-3')).toEqual({ kind: 'latest', back: 3 });
    expect(parseTarget('19.470-4')).toEqual({ kind: 'build', build: '19.470-4' });
    for (const bad of ['latest-0', 'latest-21', 'latest-', 'latest+1', 'newest'])
      expect(parseTarget(bad)).toBeUndefined();
  });

  it.each([
    ['latest-0', yaml('name: a', 'target: latest-0'), 'p.yaml:2:1: target: expected "latest", "latest-N"'],
    ['minAge', yaml('name: a', 'minAge: 14'), 'p.yaml:2:1: minAge: expected a duration'],
    ['minimumBuild', yaml('name: a', 'minimumBuild: 19.4'), 'p.yaml:2:1: minimumBuild: expected a build'],
    [
      'minimumBuild above a fixed target',
      yaml('name: a', 'target: 19.300-1', 'minimumBuild: 19.400-1'),
      'p.yaml:3:1: minimumBuild: must not be above the target 19.300-1',
    ],
    [
      'after without policy',
      yaml('name: a', 'after: { soak: 1d }'),
      'after.policy: required field is missing',
    ],
    ['after itself', yaml('name: a', 'after: { policy: a }'), 'after.policy: a policy cannot follow itself'],
    [
      'verifiedRatio',
      yaml('name: a', 'after: { policy: b, require: { verifiedRatio: 2 } }'),
      'after.require.verifiedRatio: must be between 0 and 1',
    ],
    [
      'knownIssues action',
      yaml('name: a', 'knownIssues:', '  - { build: "19.516-*", action: ignore, note: x }'),
      'knownIssues[0].action: expected skip or manual, got "ignore"',
    ],
    [
      'knownIssues note',
      yaml('name: a', 'knownIssues:', '  - { build: "19.516-*" }'),
      'knownIssues[0].note: required field is missing',
    ],
    [
      'knownIssues select',
      yaml('name: a', 'knownIssues:', '  - { build: "19.516-*", note: x, select: { os: Linux } }'),
      'knownIssues[0].select.os: unknown field',
    ],
    [
      'complianceAlert',
      yaml('name: a', 'complianceAlert: { below: 0 }'),
      'complianceAlert.below: must be above 0',
    ],
    [
      'complianceAlert for',
      yaml('name: a', 'complianceAlert: { below: 0.9, for: 10s }'),
      'complianceAlert.for: must be at least 1m',
    ],
  ])('names the file, line and field: %s', (_label, text, expected) => {
    expect(errorOf(text)).toContain(expected);
  });
});
