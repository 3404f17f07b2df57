import { describe, expect, it } from 'vitest';
import { Policy, type PolicyInput } from '../../../src/policy/schema.js';
import {
  compileClaim,
  compileSelection,
  matchesSelection,
  type SelectableCollector,
  selectCollectors,
} from '../../../src/policy/select/select-collectors.js';

const policy = (fields: Omit<PolicyInput, 'name'>) => Policy.parse({ name: 'p', ...fields });

const collector = (fields: Partial<SelectableCollector> = {}): SelectableCollector => ({
  id: 1,
  name: 'SumoCollector_web-1',
  hostName: 'web-1.example.com',
  osName: 'Linux',
  osArch: 'amd64',
  timeZone: 'UTC',
  collectorVersion: '19.470-4',
  ephemeral: false,
  ...fields,
});

describe('matchesSelection', () => {
  it('selects every Collector when select is left out', () => {
    expect(matchesSelection(policy({}), collector())).toBe(true);
    expect(matchesSelection(policy({}), { id: 7 })).toBe(true);
  });

  it('matches ids exactly', () => {
    const p = policy({ select: { ids: [1, 3] } });
    expect(matchesSelection(p, collector({ id: 3 }))).toBe(true);
    expect(matchesSelection(p, collector({ id: 2 }))).toBe(false);
  });

  it('matches hostName and name globs, ignoring case, * crossing dots and slashes', () => {
    const p = policy({ select: { hostName: ['web-*', 'db?.prod'] } });
    expect(matchesSelection(p, collector({ hostName: 'WEB-7.example.com' }))).toBe(true);
    expect(matchesSelection(p, collector({ hostName: 'db1.prod' }))).toBe(true);
    expect(matchesSelection(p, collector({ hostName: 'db12.prod' }))).toBe(false);
    expect(matchesSelection(p, collector({ hostName: 'api-web-1' }))).toBe(false);
    expect(matchesSelection(p, collector({ hostName: undefined }))).toBe(false);
    const byName = policy({ select: { name: 'team/*' } });
    expect(matchesSelection(byName, collector({ name: 'TEAM/a/b' }))).toBe(true);
    expect(matchesSelection(byName, collector({ name: 'other/a' }))).toBe(false);
  });

  it('matches a literal glob (no wildcard) exactly, including glob-like characters', () => {
    const p = policy({ select: { name: 'web-1' } });
    expect(matchesSelection(p, collector({ name: 'WEB-1' }))).toBe(true);
    expect(matchesSelection(p, collector({ name: 'web-10' }))).toBe(false);
  });

  it('matches osName, osArch and timeZone exactly, ignoring case', () => {
    const p = policy({
      select: { osName: ['linux', 'Mac OS X'], osArch: 'AMD64', timeZone: 'Europe/Berlin' },
    });
    expect(matchesSelection(p, collector({ osName: 'Linux', timeZone: 'europe/berlin' }))).toBe(true);
    expect(matchesSelection(p, collector({ osName: 'mac os x', timeZone: 'Europe/Berlin' }))).toBe(true);
    expect(matchesSelection(p, collector({ osName: 'Linux Mint', timeZone: 'Europe/Berlin' }))).toBe(false);
    expect(matchesSelection(p, collector({ osArch: 'arm64', timeZone: 'Europe/Berlin' }))).toBe(false);
  });

  it('requires every criterion of one selection, and any of a list of selections', () => {
    const both = policy({ select: { osName: 'Linux', hostName: 'web-*' } });
    expect(matchesSelection(both, collector({ osName: 'Linux', hostName: 'web-1' }))).toBe(true);
    expect(matchesSelection(both, collector({ osName: 'Linux', hostName: 'db-1' }))).toBe(false);
    expect(matchesSelection(both, collector({ osName: 'Windows', hostName: 'web-1' }))).toBe(false);
    const either = policy({ select: [{ osName: 'Windows' }, { hostName: 'web-*' }] });
    expect(matchesSelection(either, collector({ osName: 'Linux', hostName: 'web-1' }))).toBe(true);
    expect(matchesSelection(either, collector({ osName: 'Windows', hostName: 'db-1' }))).toBe(true);
    expect(matchesSelection(either, collector({ osName: 'Linux', hostName: 'db-1' }))).toBe(false);
  });

  it('matches ephemeral', () => {
    const p = policy({ select: { ephemeral: true } });
    expect(matchesSelection(p, collector({ ephemeral: true }))).toBe(true);
    expect(matchesSelection(p, collector({ ephemeral: false }))).toBe(false);
    expect(matchesSelection(p, collector({ ephemeral: undefined }))).toBe(false);
  });

  it('compares builds numerically: 19.10-1 is above 19.9-1', () => {
    const p = policy({ select: { versions: { above: '19.9-1' } } });
    expect(matchesSelection(p, collector({ collectorVersion: '19.10-1' }))).toBe(true);
    expect(matchesSelection(p, collector({ collectorVersion: '19.9-1' }))).toBe(false);
    expect(matchesSelection(p, collector({ collectorVersion: '19.9-10' }))).toBe(true);
    expect(matchesSelection(p, collector({ collectorVersion: '20.1-2' }))).toBe(true);
    expect(matchesSelection(p, collector({ collectorVersion: '19.8-99' }))).toBe(false);
  });

  it('treats from and to as inclusive, above and below as exclusive, and a list as alternatives', () => {
    const inclusive = policy({ select: { versions: { from: '19.400-5', to: '19.470-4' } } });
    for (const [v, inside] of [
      ['19.400-5', true],
      ['19.470-4', true],
      ['19.400-4', false],
      ['19.470-5', false],
      ['19.45-1', false],
    ] as const) {
      expect(matchesSelection(inclusive, collector({ collectorVersion: v })), v).toBe(inside);
    }
    const exclusive = policy({ select: { versions: [{ below: '19.100-1' }, { above: '20.1-1' }] } });
    expect(matchesSelection(exclusive, collector({ collectorVersion: '19.99-9' }))).toBe(true);
    expect(matchesSelection(exclusive, collector({ collectorVersion: '19.100-1' }))).toBe(false);
    expect(matchesSelection(exclusive, collector({ collectorVersion: '20.1-1' }))).toBe(false);
    expect(matchesSelection(exclusive, collector({ collectorVersion: '20.2-1' }))).toBe(true);
  });

  it('does not match a version range when the record has no well-formed build', () => {
    const p = policy({ select: { versions: { to: '30.1-1' } } });
    expect(matchesSelection(p, collector({ collectorVersion: undefined }))).toBe(false);
    expect(matchesSelection(p, collector({ collectorVersion: '19.470' }))).toBe(false);
  });

  it('lets exclude win over select', () => {
    const p = policy({ select: { osName: 'Linux' }, exclude: [{ ids: [42] }, { hostName: 'db-*' }] });
    expect(matchesSelection(p, collector({ id: 41 }))).toBe(true);
    expect(matchesSelection(p, collector({ id: 42 }))).toBe(false);
    expect(matchesSelection(p, collector({ id: 43, hostName: 'db-1' }))).toBe(false);
  });

  it('excludes only when every criterion of an exclude entry holds', () => {
    const p = policy({ exclude: { osName: 'Windows', versions: { below: '19.200-1' } } });
    expect(matchesSelection(p, collector({ osName: 'Windows', collectorVersion: '19.100-1' }))).toBe(false);
    expect(matchesSelection(p, collector({ osName: 'Windows', collectorVersion: '19.300-1' }))).toBe(true);
    expect(matchesSelection(p, collector({ osName: 'Linux', collectorVersion: '19.100-1' }))).toBe(true);
  });
});

describe('compileSelection', () => {
  it('compiles once per policy object and recompiles a new (reloaded) policy', () => {
    const p = policy({ select: { hostName: 'web-*' } });
    expect(compileSelection(p)).toBe(compileSelection(p));
    expect(compileSelection(policy({ select: { hostName: 'web-*' } }))).not.toBe(compileSelection(p));
  });

  it('matches a pathological glob without stalling (it took 0.3 s to 10 s per Collector)', () => {
    const p = policy({ select: { hostName: '*a*a*a*a*a*a*a*b', name: ['*x*x*x*x*x*x*y', 'web-*'] } });
    const fleet = Array.from({ length: 20 }, (_, i) =>
      collector({ id: i, hostName: 'a'.repeat(40 + i), name: 'x'.repeat(40 + i) }),
    );
    const started = performance.now();
    expect(selectCollectors(p, fleet)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('sweeps 100k Collectors quickly', () => {
    const p = policy({
      select: { osName: 'Linux', hostName: ['web-*', 'api-*'], versions: { below: '19.470-4' } },
      exclude: { ids: [5, 6, 7] },
    });
    const fleet = Array.from({ length: 100_000 }, (_, i) =>
      collector({
        id: i,
        hostName: `${i % 3 === 0 ? 'web' : i % 3 === 1 ? 'api' : 'db'}-${i}`,
        collectorVersion: `19.${400 + (i % 100)}-1`,
      }),
    );
    const started = performance.now();
    const chosen = selectCollectors(p, fleet);
    const elapsed = performance.now() - started;
    const expected = fleet.filter(
      // 19.470-1 is below 19.470-4, so minor 470 is in.
      (c) => c.id % 3 !== 2 && (c.id % 100) + 400 <= 470 && ![5, 6, 7].includes(c.id),
    ).length;
    expect(chosen).toHaveLength(expected);
    expect(elapsed).toBeLessThan(2000);
  });
});

describe('compileClaim', () => {
  it("claims only the Collectors of the policy's organizations, whatever their ids", () => {
    const emea = compileClaim(policy({ orgs: 'emea' }));
    expect(emea(collector({ org: 'emea' }))).toBe(true);
    // The selection alone (every Collector) would take us's Collector 1 too.
    expect(compileSelection(policy({ orgs: 'emea' }))(collector({ org: 'us' }))).toBe(true);
    expect(emea(collector({ org: 'us' }))).toBe(false);
    // A one-off's policy: Collector 7 of b, not Collector 7 of a.
    const oneOff = compileClaim(policy({ orgs: ['b'], select: { ids: [7] } }));
    expect(oneOff(collector({ id: 7, org: 'b' }))).toBe(true);
    expect(oneOff(collector({ id: 7, org: 'a' }))).toBe(false);
    expect(oneOff(collector({ id: 8, org: 'b' }))).toBe(false);
  });

  it('reads a Collector without an organization as default, and orgs as globs', () => {
    expect(compileClaim(policy({}))(collector())).toBe(true);
    expect(compileClaim(policy({ orgs: 'lab-*' }))(collector({ org: 'LAB-2' }))).toBe(true);
    expect(compileClaim(policy({ orgs: 'lab-*' }))(collector())).toBe(false);
  });
});
