/**
 * The `failureCauses` field (src/policy/failure-causes.ts) read from YAML files through the
 * project's loader (loadSourceFile, so errors carry file:line:column and the field), inside a
 * small policy-like schema as the integrator will place it (`FailureCauses.prefault({})`):
 * defaults, actions and their shorthand, patterns and every way a pattern or an action is refused.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadSourceFile } from '../../../src/lib/source/yaml-source.js';
import { DEFAULT_FAILURE_ACTIONS, FailureCauses } from '../../../src/policy/failure-causes.js';
import { configErrorMessage } from '../../support/config-error.js';
import { usePolicyDir, yaml } from '../../support/policy-dir.js';

const Wrapper = z.strictObject({ name: z.string(), failureCauses: FailureCauses.prefault({}) });

const dir = usePolicyDir();

function load(...lines: string[]) {
  return loadSourceFile(dir.write('p.yaml', yaml('name: p', ...lines)), Wrapper).failureCauses;
}

/** The error of p.yaml, the folder's path taken out; fails when the file is valid. */
function errorOf(...lines: string[]): string {
  return configErrorMessage(dir.write('p.yaml', yaml('name: p', ...lines)), (file) =>
    loadSourceFile(file, Wrapper),
  );
}

describe('failureCauses defaults', () => {
  it('fills every built-in class when the field is left out', () => {
    expect(load()).toEqual({
      patterns: [],
      actions: {
        disk_space: { action: 'manual' },
        upgrades_disabled: { action: 'manual' },
        permission: { action: 'manual' },
        network: { action: 'retry', attempts: 3, backoff: 600_000 },
        unknown: { action: 'fail' },
      },
    });
    expect(FailureCauses.parse({}).actions).toEqual(DEFAULT_FAILURE_ACTIONS);
  });
});

describe('failureCauses as written', () => {
  it('reads patterns and actions, a bare word standing for { action }, durations in milliseconds', () => {
    const causes = load(
      'failureCauses:',
      '  patterns:',
      '    - { class: antivirus, match: "blocked by .*defender" }',
      '    - { class: network, match: "proxy authentication required" }',
      '  actions:',
      '    antivirus: manual',
      '    network: { action: retry, attempts: 5, backoff: 30m }',
      '    disk_space: { action: retry }',
      '    unknown: manual',
    );
    expect(causes.patterns).toEqual([
      { class: 'antivirus', match: 'blocked by .*defender' },
      { class: 'network', match: 'proxy authentication required' },
    ]);
    expect(causes.actions).toEqual({
      disk_space: { action: 'retry', attempts: 3, backoff: 600_000 },
      upgrades_disabled: { action: 'manual' },
      permission: { action: 'manual' },
      network: { action: 'retry', attempts: 5, backoff: 1_800_000 },
      unknown: { action: 'manual' },
      antivirus: { action: 'manual' },
    });
  });

  it('takes 50 patterns of 500 characters', () => {
    const patterns = Array.from({ length: 50 }, (_, i) => ({ class: `c${i}`, match: 'x'.repeat(500) }));
    expect(FailureCauses.parse({ patterns }).patterns).toHaveLength(50);
  });
});

describe('failureCauses errors name the file, line, column and field', () => {
  it('refuses a pattern that does not compile', () => {
    expect(errorOf('failureCauses:', '  patterns:', '    - { class: broken, match: "disk (full" }')).toBe(
      'p.yaml:4:24: failureCauses.patterns[0].match: not a valid regular expression: Invalid regular expression: /disk (full/i: Unterminated group',
    );
  });

  it('refuses nested repetition, back-references and overlapping repetitions', () => {
    expect(
      errorOf(
        'failureCauses:',
        '  patterns:',
        '    - { class: slow, match: "(a+)+$" }',
        '    - { class: slow, match: "(disk|volume)* full" }',
        '    - { class: slow, match: "(\\\\w)\\\\1" }',
        '    - { class: slow, match: "error.*timeout.*download" }',
      ),
    ).toBe(
      [
        'p.yaml:4:22: failureCauses.patterns[0].match: refused: a repeated group whose body repeats or has alternatives (like (a+)+ or (a|b)*) can take exponential time; repeat the inner part only',
        'p.yaml:5:22: failureCauses.patterns[1].match: refused: a repeated group whose body repeats or has alternatives (like (a+)+ or (a|b)*) can take exponential time; repeat the inner part only',
        'p.yaml:6:22: failureCauses.patterns[2].match: refused: back-references (\\1, \\k<name>) are not allowed',
        'p.yaml:7:22: failureCauses.patterns[3].match: refused: two repetitions that can match the same characters one after the other (like \\s*\\s* or .*a.*) can take seconds on a long message; separate them by text the first cannot match, or drop one',
      ].join('\n'),
    );
  });

  it('refuses an empty pattern, a long one, a bad class name and a missing field', () => {
    expect(
      errorOf(
        'failureCauses:',
        '  patterns:',
        '    - { class: empty, match: "" }',
        `    - { class: long, match: "${'x'.repeat(501)}" }`,
        '    - { class: Bad-Name, match: x }',
        '    - { class: nomatch }',
      ),
    ).toBe(
      [
        'p.yaml:4:23: failureCauses.patterns[0].match: must not be empty',
        'p.yaml:5:22: failureCauses.patterns[1].match: must be at most 500 characters',
        'p.yaml:6:9: failureCauses.patterns[2].class: must be lowercase letters, digits and underscores, starting with a letter',
        'p.yaml:7:7: failureCauses.patterns[3].match: required field is missing',
      ].join('\n'),
    );
  });

  it('refuses more than 50 patterns', () => {
    const lines = Array.from({ length: 51 }, (_, i) => `    - { class: c${i}, match: x }`);
    expect(errorOf('failureCauses:', '  patterns:', ...lines)).toBe(
      'p.yaml:3:3: failureCauses.patterns: at most 50 patterns',
    );
  });

  it('refuses an action for a class nobody names, suggesting the close one', () => {
    expect(
      errorOf(
        'failureCauses:',
        '  patterns: [{ class: antivirus, match: defender }]',
        '  actions:',
        '    netwrok: manual',
        '    spam: fail',
      ),
    ).toBe(
      [
        'p.yaml:5:5: failureCauses.actions.netwrok: unknown failure class (did you mean "network"?): the classes are disk_space, upgrades_disabled, permission, network, unknown, antivirus',
        'p.yaml:6:5: failureCauses.actions.spam: unknown failure class: the classes are disk_space, upgrades_disabled, permission, network, unknown, antivirus',
      ].join('\n'),
    );
  });

  it('refuses an unknown action, attempts out of 1..20, a bare-number or too long back-off, and extra fields', () => {
    expect(
      errorOf(
        'failureCauses:',
        '  actions:',
        '    network: { action: later }',
        '    permission: 3',
        '    disk_space: { action: retry, attempts: 0, backoff: 30 }',
        '    unknown: { action: retry, attempts: 21, backoff: 2d }',
        '    upgrades_disabled: { action: manual, attempts: 2 }',
      ),
    ).toBe(
      [
        'p.yaml:4:16: failureCauses.actions.network.action: expected retry, manual or fail, got "later"',
        'p.yaml:5:5: failureCauses.actions.permission: expected retry, manual or fail (or an object such as { action: retry, attempts: 3, backoff: 10m }), got 3',
        'p.yaml:6:34: failureCauses.actions.disk_space.attempts: must be at least 1',
        'p.yaml:6:47: failureCauses.actions.disk_space.backoff: expected a duration like 90s, 10m, 2h (a bare number has no unit: write 30s or 30m)',
        'p.yaml:7:31: failureCauses.actions.unknown.attempts: must be at most 20',
        'p.yaml:7:45: failureCauses.actions.unknown.backoff: must be at most 24h, got 2d',
        'p.yaml:8:42: failureCauses.actions.upgrades_disabled.attempts: applies only to action: retry, not manual',
      ].join('\n'),
    );
  });

  it('refuses a misspelt field of an action with a suggestion', () => {
    expect(errorOf('failureCauses:', '  actions:', '    network: { actoin: retry }')).toBe(
      [
        'p.yaml:4:14: failureCauses.actions.network.action: required field is missing (expected retry, manual or fail)',
        'p.yaml:4:16: failureCauses.actions.network.actoin: unknown field (did you mean "action"?)',
      ].join('\n'),
    );
  });

  it('refuses an unknown field of failureCauses with a suggestion', () => {
    expect(errorOf('failureCauses:', '  pattern: []')).toBe(
      'p.yaml:3:3: failureCauses.pattern: unknown field (did you mean "patterns"?)',
    );
  });
});
