import { describe, expect, it } from 'vitest';
import { loadPolicies } from '../../../src/policy/load/load-policies.js';
import { matchesSelection } from '../../../src/policy/select/select-collectors.js';

describe('the policies shipped in config/', () => {
  const policies = [...loadPolicies(), ...loadPolicies({ files: ['config/demo/policy.yaml'] })];
  const byName = (name: string) => policies.find((p) => p.policy.name === name)?.policy;

  it('are all valid; the demo policy is kept out of the default folder, which `run` reads', () => {
    expect(loadPolicies().map((p) => p.policy.name)).toEqual(['linux-fleet']);
    expect(policies.map((p) => p.policy.name).sort()).toEqual(['demo', 'linux-fleet']);
  });

  it('demo selects every Collector of the demo fleet', () => {
    const demo = byName('demo');
    expect(demo).toBeDefined();
    if (!demo) return;
    expect(demo.target).toBe('latest');
    expect(matchesSelection(demo, { id: 100_000_000, osName: 'Windows Server 2019', ephemeral: true })).toBe(
      true,
    );
  });

  it('linux-fleet ships disabled (real credentials would start upgrading at once), canaries first', () => {
    const linux = byName('linux-fleet');
    expect(linux?.enabled).toBe(false);
    expect(linux?.waves[0]).toMatchObject({ select: { hostName: ['web-canary-*'] }, approval: 'manual' });
    expect(linux?.failureGate).toMatchObject({ onTrip: 'pause', timed_out: { max: 5 } });
  });

  it('linux-fleet selects Linux web and API hosts, not excluded ones', () => {
    const linux = byName('linux-fleet');
    if (!linux) throw new Error('linux-fleet missing');
    const host = { id: 7, osName: 'Linux', hostName: 'web-prod-01a.eu-west-1.internal', ephemeral: false };
    expect(matchesSelection(linux, host)).toBe(true);
    expect(matchesSelection(linux, { ...host, hostName: 'db-prod-01a.internal' })).toBe(false);
    expect(matchesSelection(linux, { ...host, id: 42 })).toBe(false);
    expect(matchesSelection(linux, { ...host, ephemeral: true })).toBe(false);
  });
});
