import { describe, expect, it, vi } from 'vitest';
import { ConfigError } from '../../../src/lib/errors.js';
import {
  createPolicyStore,
  type PolicyStore,
  type PolicyStoreEvent,
} from '../../../src/policy/load/policy-store.js';
import { yaml } from '../../support/policy-dir.js';
import { usePolicyStore } from '../../support/use-policy-store.js';

const { dir, events, open } = usePolicyStore();
const summary = (s: PolicyStore) =>
  s.status().map((st) => [st.file.slice(dir.dir.length + 1), st.state, st.policy?.name]);

describe('createPolicyStore', () => {
  it('loads the folder and reports each policy as added', () => {
    dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: 5'));
    dir.write('b.yaml', yaml('name: bravo'));
    const s = open();
    expect(s.policies().map((p) => p.policy.name)).toEqual(['alpha', 'bravo']);
    expect(s.get('alpha')?.policy.maxInFlight).toBe(5);
    expect(events.map((e) => e.type)).toEqual(['added', 'added']);
    expect(summary(s)).toEqual([
      ['a.yaml', 'valid', 'alpha'],
      ['b.yaml', 'valid', 'bravo'],
    ]);
  });

  it('refuses to start on an invalid policy or a duplicate name, reporting nothing as added', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    dir.write('b.yaml', yaml('name: bravo', 'pageSize: 0'));
    expect(() => open()).toThrow(ConfigError);
    expect(() => open()).toThrow(/b\.yaml:2:1: pageSize: must be at least 1/);
    dir.write('b.yaml', yaml('name: alpha'));
    expect(() => open()).toThrow(/b\.yaml:1:1: name: duplicate policy name "alpha" \(also in .*a\.yaml\)/);
    expect(events).toEqual([]);
  });

  it('keeps the last valid version of a file that turns invalid, reports it, and recovers when fixed', () => {
    dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: 5'));
    const s = open();
    const original = s.get('alpha')?.policy;
    events.length = 0;

    dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: -1'));
    const broken = s.reload();
    expect(broken).toHaveLength(1);
    const invalid = broken[0] as Extract<PolicyStoreEvent, { type: 'invalid' }>;
    expect(invalid.type).toBe('invalid');
    expect(invalid.error.message).toMatch(/a\.yaml:2:1: maxInFlight: must be at least 1/);
    expect(invalid.keeping).toBe(original);
    expect(s.get('alpha')?.policy).toBe(original);
    const [status] = s.status();
    expect(status?.state).toBe('invalid-keeping-last-valid');
    expect(status?.policy?.maxInFlight).toBe(5);
    expect(status?.error).toMatch(/maxInFlight: must be at least 1/);

    expect(s.reload()).toEqual([]); // unchanged file: reported once, not on every poll

    dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: 7'));
    const fixed = s.reload();
    expect(fixed.map((e) => e.type)).toEqual(['recovered']);
    expect(s.get('alpha')?.policy.maxInFlight).toBe(7);
    expect(s.status()[0]).toMatchObject({ state: 'valid' });
    expect(s.status()[0]?.error).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['invalid', 'recovered']);
  });

  it('reports a new file that is invalid from the start and does not load it', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    const s = open();
    dir.write('new.yaml', yaml('name: newcomer', 'target: soon'));
    const changes = s.reload();
    expect(changes).toMatchObject([{ type: 'invalid', file: expect.stringMatching(/new\.yaml$/) }]);
    expect((changes[0] as { keeping?: unknown }).keeping).toBeUndefined();
    expect(s.policies().map((p) => p.policy.name)).toEqual(['alpha']);
    expect(summary(s)).toEqual([
      ['a.yaml', 'valid', 'alpha'],
      ['new.yaml', 'invalid', undefined],
    ]);
    dir.write('new.yaml', yaml('name: newcomer'));
    expect(s.reload().map((e) => e.type)).toEqual(['added']);
    expect(s.get('newcomer')).toBeDefined();
  });

  it('removes the policy of a deleted file, even one that was kept while invalid', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    dir.write('b.yaml', yaml('name: bravo'));
    const s = open();
    dir.remove('a.yaml');
    expect(s.reload()).toMatchObject([{ type: 'removed', policy: { name: 'alpha' } }]);
    dir.write('b.yaml', 'name: [');
    expect(s.reload().map((e) => e.type)).toEqual(['invalid']);
    dir.remove('b.yaml');
    expect(s.reload()).toMatchObject([{ type: 'removed', policy: { name: 'bravo' } }]);
    expect(s.policies()).toEqual([]);
    expect(s.status()).toEqual([]);
  });

  it('reports an edit as updated with the previous policy, and keeps unchanged policy objects', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    dir.write('b.yaml', yaml('name: bravo'));
    const s = open();
    const bravo = s.get('bravo')?.policy;
    dir.write('a.yaml', yaml('name: alpha', 'enabled: false'));
    const changes = s.reload();
    expect(changes).toMatchObject([
      { type: 'updated', policy: { enabled: false }, previous: { enabled: true } },
    ]);
    expect(s.get('bravo')?.policy).toBe(bravo);
  });

  it('reports nothing for an edit that leaves the policy as it was (a comment)', () => {
    dir.write('a.yaml', yaml('name: alpha', 'maxInFlight: 5'));
    const s = open();
    dir.write('a.yaml', yaml('# tuned on Monday', 'name: alpha', 'maxInFlight: 5'));
    expect(s.reload()).toEqual([]);
    expect(s.status()).toMatchObject([{ state: 'valid', policy: { maxInFlight: 5 } }]);
  });

  it('lets the file that holds a name keep it when another file claims it', () => {
    dir.write('b.yaml', yaml('name: bravo'));
    dir.write('c.yaml', yaml('name: charlie'));
    const s = open();
    // a.yaml sorts first, but bravo belongs to b.yaml; c.yaml keeps charlie while its new name clashes.
    dir.write('a.yaml', yaml('name: bravo'));
    dir.write('c.yaml', yaml('name: bravo'));
    const changes = s.reload();
    expect(changes.map((e) => e.type)).toEqual(['invalid', 'invalid']);
    expect(summary(s)).toEqual([
      ['a.yaml', 'invalid', undefined],
      ['b.yaml', 'valid', 'bravo'],
      ['c.yaml', 'invalid-keeping-last-valid', 'charlie'],
    ]);
    expect(s.status()[0]?.error).toMatch(
      /a\.yaml:1:1: name: duplicate policy name "bravo" \(also in .*b\.yaml\)/,
    );
    // Once b.yaml is gone, the first claimant in file order gets the name.
    dir.remove('b.yaml');
    s.reload();
    expect(summary(s)).toEqual([
      ['a.yaml', 'valid', 'bravo'],
      ['c.yaml', 'invalid-keeping-last-valid', 'charlie'],
    ]);
  });

  it('keeps every policy when the folder cannot be read, and says so once', () => {
    dir.write('a.yaml', yaml('name: alpha'));
    const s = open();
    dir.cleanup();
    expect(s.reload().map((e) => e.type)).toEqual(['folder-error']);
    expect(s.reload()).toEqual([]);
    expect(s.get('alpha')).toBeDefined();
  });

  it('follows the folder by polling once started', async () => {
    dir.write('a.yaml', yaml('name: alpha'));
    const s = open({ pollIntervalMs: 10 });
    s.start();
    dir.write('a.yaml', yaml('name: alpha', 'pageSize: 10'));
    await vi.waitFor(() => expect(s.get('alpha')?.policy.pageSize).toBe(10), { timeout: 2000, interval: 10 });
    dir.write('a.yaml', yaml('name: alpha', 'pageSize: 0'));
    await vi.waitFor(() => expect(s.status()[0]?.state).toBe('invalid-keeping-last-valid'), {
      timeout: 2000,
      interval: 10,
    });
    expect(s.get('alpha')?.policy.pageSize).toBe(10);
    s.close();
  });

  it('follows explicit files, a deleted one removing its policy', () => {
    const a = dir.write('a.yaml', yaml('name: alpha'));
    const missing = `${dir.dir}/missing.yaml`;
    expect(() => createPolicyStore({ files: [a, missing] })).toThrow(`${missing}: file not found`);
    const store = open({ files: [a] });
    dir.write('other.yaml', yaml('name: other'));
    expect(store.reload()).toEqual([]);
    dir.remove('a.yaml');
    expect(store.reload().map((e) => e.type)).toEqual(['removed']);
  });
});
