/**
 * Hot reload with files that cannot even be parsed (an undefined alias, an alias bomb, nesting
 * deep enough to exhaust the stack, a huge file): each affects only itself, its last valid
 * version stays in force, the other files keep reloading, and /readyz names the file and line.
 */
import { describe, expect, it, vi } from 'vitest';
import { policyProblems } from '../../../src/policy/load/policy-problems.js';
import { yaml } from '../../support/policy-dir.js';
import { usePolicyStore } from '../../support/use-policy-store.js';
import { aliasBomb } from '../lib/hostile-yaml.js';

const { dir, events, errors, open } = usePolicyStore();

const ALIASES = 'anchors and aliases (&name, *name) are not allowed in a policy file: write the value out';

describe('a policy file that cannot be parsed, while the daemon runs', () => {
  it.each([
    ['an undefined alias', yaml('maxInFlight: 5', 'name: *a'), ':2:7: name: '],
    ['an alias bomb', aliasBomb(12), ':2:5: l0: '],
    ['deep nesting', yaml('name: alpha', `select: ${'['.repeat(100_000)}${']'.repeat(100_000)}`), ':2:'],
  ])('%s affects only its own file, and later reloads of the others go on', (_, bad, where) => {
    const a = dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: 5'));
    const b = dir.write('b.yaml', yaml('name: bravo'));
    const s = open();
    const alpha = s.get('alpha')?.policy;
    events.length = 0;

    dir.write('a.yaml', bad);
    const first = s.reload();
    expect(first.map((e) => [e.type, 'file' in e ? e.file : undefined])).toEqual([['invalid', a]]);
    expect(s.get('alpha')?.policy).toBe(alpha);
    const [status] = s.status();
    expect(status).toMatchObject({ file: a, state: 'invalid-keeping-last-valid' });
    expect(status?.error).toContain(`${a}${where}`);

    // Another file's edit (disabling its policy) still takes effect, on every later reload too.
    dir.write('b.yaml', yaml('name: bravo', 'enabled: false'));
    expect(s.reload().map((e) => [e.type, 'file' in e ? e.file : undefined])).toEqual([['updated', b]]);
    expect(s.get('bravo')?.policy.enabled).toBe(false);
    dir.write('b.yaml', yaml('name: bravo', 'enabled: true'));
    expect(s.reload().map((e) => e.type)).toEqual(['updated']);
    expect(s.get('bravo')?.policy.enabled).toBe(true);
    expect(s.get('alpha')?.policy).toBe(alpha);

    // /readyz names the file and the line.
    expect(policyProblems(s.status())).toMatch(new RegExp(`^${escapeRegExp(a)}${escapeRegExp(where)}`));

    dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: 7'));
    expect(s.reload().map((e) => e.type)).toEqual(['recovered']);
    expect(policyProblems(s.status())).toBeUndefined();
  });

  it('a file grown above the size limit keeps its last valid version, and /readyz says why', () => {
    const a = dir.write('a.yaml', yaml('name: alpha'));
    const s = open();
    dir.write('a.yaml', `name: alpha\n${'# padding\n'.repeat(30_000)}`);
    expect(s.reload().map((e) => e.type)).toEqual(['invalid']);
    expect(s.get('alpha')).toBeDefined();
    expect(policyProblems(s.status())).toBe(
      `${a}: the file is 300012 bytes; a policy file may have at most 262144 bytes (256 KB) (keeping its last valid version)`,
    );
  });

  it('a new file that is bad from the start is reported with its line, and not loaded', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    const s = open();
    const c = dir.write('c.yaml', yaml('name: *c'));
    expect(s.reload().map((e) => e.type)).toEqual(['invalid']);
    expect(s.policies().map((p) => p.policy.name)).toEqual(['alpha']);
    expect(policyProblems(s.status())).toBe(`${c}:1:7: name: ${ALIASES}`);
  });

  it('the daemon refuses to start on such a file, with a ConfigError naming it', () => {
    const a = dir.write('a.yaml', yaml('name: *a'));
    expect(() => open()).toThrow(expect.objectContaining({ code: 'FLEET_ERR_CONFIG' }));
    expect(() => open()).toThrow(`${a}:1:7: name: ${ALIASES}`);
  });

  it('polling goes on past a bad file', async () => {
    dir.write('a.yaml', yaml('name: alpha'));
    dir.write('b.yaml', yaml('name: bravo'));
    const s = open({ pollIntervalMs: 10 });
    s.start();
    dir.write('a.yaml', yaml('name: *alpha'));
    await vi.waitFor(() => expect(s.status()[0]?.state).toBe('invalid-keeping-last-valid'), {
      timeout: 2000,
      interval: 10,
    });
    dir.write('b.yaml', yaml('name: bravo', 'pageSize: 10'));
    await vi.waitFor(() => expect(s.get('bravo')?.policy.pageSize).toBe(10), { timeout: 2000, interval: 10 });
    expect(errors).toEqual([]);
  });

  it('a listener that throws does not lose the changes after it', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    dir.write('b.yaml', yaml('name: bravo'));
    const seen: string[] = [];
    const store = open({
      onEvent: (e) => {
        seen.push(e.type);
        if (e.type === 'updated') throw new Error('listener failed');
      },
    });
    dir.write('a.yaml', yaml('name: alpha', 'pageSize: 5'));
    dir.write('b.yaml', yaml('name: bravo', 'pageSize: 5'));
    seen.length = 0;
    expect(store.reload().map((e) => e.type)).toEqual(['updated', 'updated']);
    expect(seen).toEqual(['updated', 'updated']);
    expect(errors).toHaveLength(2);
  });
});

describe('policyProblems', () => {
  it('is undefined when every file is valid, and else one line per bad file', () => {
    expect(policyProblems([{ file: 'a.yaml', state: 'valid' }])).toBeUndefined();
    expect(
      policyProblems([
        { file: 'a.yaml', state: 'valid' },
        {
          file: 'b.yaml',
          state: 'invalid',
          error: 'b.yaml:3:1: pageSize: must be at least 1\nb.yaml:4:1: x: y',
        },
        { file: 'c.yaml', state: 'invalid-keeping-last-valid', error: 'c.yaml:1:7: name: expected text' },
      ]),
    ).toBe(
      'b.yaml:3:1: pageSize: must be at least 1 (and 1 more problem); c.yaml:1:7: name: expected text (keeping its last valid version)',
    );
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
