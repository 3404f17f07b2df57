/**
 * `upgrade --org`: a one-off's Collector ids are of one organization. `--org` must be one the
 * settings name; without it, the settings' only organization, and with several it is required
 * (a usage error naming them). The one-off policy covers that organization only.
 */
import { describe, expect, it } from 'vitest';
import { oneOffOrg } from '../../../src/cli/commands/upgrade.js';
import { oneOffPolicy } from '../../../src/rollout/one-off/index.js';

describe('oneOffOrg', () => {
  it('takes --org when the settings name it, else the only organization', () => {
    expect(oneOffOrg('b', ['a', 'b'])).toBe('b');
    expect(oneOffOrg(undefined, ['default'])).toBe('default');
    expect(oneOffOrg(undefined, ['emea'])).toBe('emea');
  });

  it('refuses an organization the settings do not name, and a missing --org with several', () => {
    expect(() => oneOffOrg('zz', ['a', 'b'])).toThrow(
      expect.objectContaining({
        code: 'FLEET_ERR_USAGE',
        message: "--org: the settings name no organization 'zz' (they name a, b)",
      }),
    );
    expect(() => oneOffOrg(undefined, ['a', 'b', 'c'])).toThrow(/--org is required: .*\(a, b, c\)/);
  });
});

describe('the one-off policy', () => {
  it('covers the organization of its ids only', () => {
    const policy = oneOffPolicy('upgrade-20261125100200-abc123', {
      collectors: [7],
      to: '19.450-12',
      allowDowngrade: false,
      org: 'b',
    });
    expect(policy.orgs).toEqual(['b']);
    expect(policy.select).toEqual([expect.objectContaining({ ids: [7] })]);
  });

  it('without an organization covers every one (as before)', () => {
    expect(oneOffPolicy('upgrade-x', { collectors: [1], to: 'latest', allowDowngrade: false }).orgs).toEqual([
      '*',
    ]);
  });
});
