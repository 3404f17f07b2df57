/**
 * The policy's `verify.healthEvents` (src/policy/verify.ts): on by default (Error counted),
 * `false` turns it off, `severities`, `trackers`, `ignore`; what the rollout keeps of it; a
 * mistake named by file, line and field.
 */
import { describe, expect, it } from 'vitest';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { verifySettings } from '../../../src/policy/verify.js';
import { configErrorMessage } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const dir = usePolicyDir();

function load(...lines: string[]) {
  const [loaded] = loadPolicies({ files: [dir.write('p.yaml', yaml('name: p', ...lines))] });
  return loaded?.policy.verify;
}

function errorOf(...lines: string[]): string {
  return configErrorMessage(dir.write('p.yaml', yaml('name: p', ...lines)), (file) =>
    loadPolicies({ files: [file] }),
  );
}

describe('verify.healthEvents', () => {
  it('is on by default, counting Error; the rollout keeps what counts', () => {
    const verify = load();
    expect(verify?.healthEvents).toEqual({ enabled: true, severities: ['Error'], ignore: [] });
    expect(verify && verifySettings(verify)?.health).toEqual({ severities: ['Error'], ignore: [] });
  });

  it('false judges by heartbeat only; verify: false turns verification off altogether', () => {
    const off = load('verify: { healthEvents: false }');
    expect(off?.healthEvents.enabled).toBe(false);
    expect(off && verifySettings(off)).toEqual({ withinMs: 600_000, bakeMs: 300_000, intervalMs: 60_000 });
    const none = load('verify: false');
    expect(none && verifySettings(none)).toBeUndefined();
  });

  it('takes severities, trackers and ignore', () => {
    const verify = load(
      'verify:',
      '  healthEvents:',
      '    severities: [Error, Warning]',
      '    trackers: [FileCollectionBroken]',
      '    ignore: [IngestThrottled]',
    );
    expect(verify && verifySettings(verify)?.health).toEqual({
      severities: ['Error', 'Warning'],
      trackers: ['FileCollectionBroken'],
      ignore: ['IngestThrottled'],
    });
  });

  it('names the file, line and field of a mistake', () => {
    expect(errorOf('verify:', '  healthEvents: { severities: [Fatal] }')).toMatch(
      /^p\.yaml:3:\d+: verify\.healthEvents\.severities\[0\]: expected Error or Warning/,
    );
    expect(errorOf('verify:', '  healthEvents: { trackers: [] }')).toMatch(
      /^p\.yaml:3:\d+: verify\.healthEvents\.trackers: give at least one tracker/,
    );
    expect(errorOf('verify:', '  healthEvents: { ignore: ["no spaces please"] }')).toMatch(
      /^p\.yaml:3:\d+: verify\.healthEvents\.ignore\[0\]: expected a tracker id such as FileCollectionBroken/,
    );
    expect(errorOf('verify:', '  healthEvents: maybe')).toMatch(
      /^p\.yaml:3:\d+: verify\.healthEvents: expected true, false or \{ severities, trackers, ignore \}/,
    );
    expect(errorOf('verify:', '  healthEvents: { severity: [Error] }')).toMatch(
      /^p\.yaml:3:\d+: verify\.healthEvents/,
    );
  });
});
