/**
 * Rings in a cycle are refused with file and line (#21: check-rings.ts): at start-up (loadPolicies
 * and the policy store), and on a reload, where the file that closes the cycle turns invalid and
 * keeps its last valid policy. A ring that follows a policy no file defines is not refused.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/lib/errors.js';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { yaml } from '../../support/policy-dir.js';
import { usePolicyStore } from '../../support/use-policy-store.js';

const { dir, open } = usePolicyStore();

describe('rings in a cycle', () => {
  it('are refused at load, each policy of the cycle named with the line of its after.policy', () => {
    dir.write('a.yaml', yaml('name: alpha', 'after:', '  policy: gamma'));
    dir.write('b.yaml', yaml('name: bravo', 'after: { policy: alpha, soak: 1d }'));
    dir.write('c.yaml', yaml('name: gamma', 'maxInFlight: 5', 'after: { policy: bravo }'));
    dir.write('d.yaml', yaml('name: delta', 'after: { policy: gamma }'));
    let error: ConfigError | undefined;
    try {
      loadPolicies({ dir: dir.dir });
    } catch (e) {
      error = e as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(
      /a\.yaml:3:3: after\.policy: the rings form a cycle \(alpha → gamma → bravo → alpha\)/,
    );
    expect(error?.message).toMatch(
      /b\.yaml:2:10: after\.policy: the rings form a cycle \(bravo → alpha → gamma → bravo\)/,
    );
    expect(error?.message).toMatch(/c\.yaml:3:10: after\.policy: the rings form a cycle/);
    // delta follows the cycle but is not part of it.
    expect(error?.message).not.toMatch(/d\.yaml/);
    expect(() => open()).toThrow(/the rings form a cycle/);
  });

  it('a chain, and a ring that follows a policy no file defines, load', () => {
    dir.write('a.yaml', yaml('name: staging'));
    dir.write('b.yaml', yaml('name: canary', 'after: { policy: staging }'));
    dir.write('c.yaml', yaml('name: production', 'after: { policy: canary }'));
    dir.write('d.yaml', yaml('name: lab', 'after: { policy: elsewhere }'));
    expect(loadPolicies({ dir: dir.dir }).map((l) => l.policy.after?.policy ?? null)).toEqual([
      null,
      'staging',
      'canary',
      'elsewhere',
    ]);
  });

  it('an edit that closes a cycle turns that file invalid, keeping its last valid policy', () => {
    dir.write('a.yaml', yaml('name: staging'));
    dir.write('b.yaml', yaml('name: canary', 'after: { policy: staging }'));
    const s = open();
    dir.write('a.yaml', yaml('name: staging', 'after: { policy: canary }'));
    const events = s.reload();
    const states = s.status().map((st) => [st.policy?.name, st.state, st.policy?.after?.policy ?? null]);
    // The edited file is refused and keeps its policy from before the edit; canary stays.
    expect(states).toEqual([
      ['staging', 'invalid-keeping-last-valid', null],
      ['canary', 'valid', 'staging'],
    ]);
    expect(events.map((e) => e.type)).toEqual(['invalid']);
    expect(events[0]?.type === 'invalid' && events[0].error.message).toMatch(
      /a\.yaml:2:10: after\.policy: the rings form a cycle \(staging → canary → staging\)/,
    );
    expect(s.get('staging')?.policy.after).toBeUndefined();
    // Fixed: valid again.
    dir.write('a.yaml', yaml('name: staging'));
    s.reload();
    expect(s.status().map((st) => st.state)).toEqual(['valid', 'valid']);
  });
});
