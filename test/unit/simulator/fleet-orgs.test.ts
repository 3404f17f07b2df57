/**
 * The fleet file's `orgs:` (several organizations in one process) and the vendor's cap of
 * 10,000 Collectors per organization: accepted forms, and refusals naming file, line and field.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/lib/errors.js';
import { parseSource } from '../../../src/lib/source/yaml-source.js';
import { FleetSource, fleetOrgs, parseFleet } from '../../../src/simulator/fleet-source.js';
import { FleetFile, MAX_ORG_COLLECTORS } from '../../../src/simulator/schema.js';

/** The ConfigError of parsing `text` as a fleet file, as one string per issue. */
function refusal(text: string): string[] {
  try {
    parseSource('fleet.yaml', text, FleetSource);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).issues.map((i) => `${i.file}:${i.line}: ${i.field}: ${i.reason}`);
  }
  throw new Error('expected the fleet file to be refused');
}

const yaml = (...lines: string[]) => `${lines.join('\n')}\n`;

describe('orgs: several organizations', () => {
  it('a file without orgs is one organization named default, with the fields as they were', () => {
    const orgs = parseFleet({ builds: ['19.400-5'], collectors: [{ id: 1 }] });
    expect(orgs.map((o) => o.name)).toEqual(['default']);
    const { name: _name, ...rest } = orgs[0] as NonNullable<(typeof orgs)[0]>;
    expect(rest).toEqual(FleetFile.parse({ builds: ['19.400-5'], collectors: [{ id: 1 }] }));
  });

  it('each organization gets the defaults of a one-organization file; ids may repeat across them', () => {
    const orgs = fleetOrgs(
      parseSource(
        'fleet.yaml',
        yaml(
          'orgs:',
          '  - name: acme',
          '    builds: ["19.400-5"]',
          '    collectors: [{ id: 1 }]',
          '  - name: globex-eu',
          '    builds: ["19.400-5", "19.470-4"]',
          '    users: [{ accessId: g, accessKey: g-secret }]',
          '    collectors: [{ id: 1 }]',
          '    seed: 9',
        ),
        FleetSource,
      ),
    );
    expect(orgs.map((o) => [o.name, o.users[0]?.accessId, o.collectors[0]?.id, o.seed])).toEqual([
      ['acme', 'demo', 1, 1],
      ['globex-eu', 'g', 1, 9],
    ]);
  });

  it('an accessId in two organizations is refused at its line, naming the other organization', () => {
    const issues = refusal(
      yaml(
        'orgs:',
        '  - name: acme',
        '    builds: ["19.400-5"]',
        '    users: [{ accessId: ops, accessKey: a }]',
        '  - name: globex',
        '    builds: ["19.400-5"]',
        '    users:',
        '      - { accessId: ops, accessKey: b }',
      ),
    );
    expect(issues).toEqual([
      expect.stringMatching(
        /^fleet\.yaml:8: orgs\[1\]\.users\[0\]\.accessId: accessId ops is already a user of organization acme/,
      ),
    ]);
  });

  it('two organizations left with the default user share its accessId: refused (give each its users)', () => {
    const issues = refusal(
      yaml('orgs:', '  - { name: a, builds: ["19.400-5"] }', '  - { name: b, builds: ["19.400-5"] }'),
    );
    expect(issues.join('\n')).toMatch(
      /orgs\[1\]\.users\[0\]\.accessId: accessId demo is already a user of organization a/,
    );
  });

  it.each([
    [
      yaml('orgs:', '  - { name: a, builds: ["19.400-5"] }', '  - { name: a, builds: ["19.400-5"] }'),
      /orgs\[1\]\.name: duplicate organization name a/,
    ],
    [yaml('orgs:', '  - { name: Acme, builds: ["19.400-5"] }'), /orgs\[0\]\.name: must be a short slug/],
    [yaml('orgs:', '  - { name: 1st, builds: ["19.400-5"] }'), /orgs\[0\]\.name: must be a short slug/],
    [
      yaml('orgs:', `  - { name: ${'a'.repeat(33)}, builds: ["19.400-5"] }`),
      /orgs\[0\]\.name: must be a short slug/,
    ],
    [yaml('orgs:', '  - { builds: ["19.400-5"] }'), /orgs\[0\]\.name/],
    [yaml('orgs: []'), /orgs: at least one organization/],
    [yaml('builds: ["19.400-5"]', 'orgs:', '  - { name: a, builds: ["19.400-5"] }'), /builds: unknown field/],
    [
      yaml('orgs:', '  - { name: a, builds: ["19.400-5"], generat: { count: 1 } }'),
      /orgs\[0\]\.generat: unknown field \(did you mean "generate"\?\)/,
    ],
    [
      yaml('orgs:', '  - { name: a, builds: ["19.400-5"], collectors: [{ id: 1, version: "1.2-3" }] }'),
      /orgs\[0\]\.collectors\[0\]\.version: 1\.2-3 is not one of builds/,
    ],
  ])('refused: %s', (text, reason) => {
    expect(refusal(text).join('\n')).toMatch(reason);
  });
});

describe("the vendor's cap: at most 10,000 Collectors per organization", () => {
  it('is 10,000', () => expect(MAX_ORG_COLLECTORS).toBe(10_000));

  it('10,000 (explicit + generated) is accepted', () => {
    const collectors = Array.from({ length: 3 }, (_, i) => ({ id: i + 1 }));
    expect(() => parseFleet({ builds: ['19.400-5'], collectors, generate: { count: 9_997 } })).not.toThrow();
  });

  it('one more, in a file without orgs: refused at generate.count, naming the limit', () => {
    const issues = refusal(
      yaml('builds: ["19.400-5"]', 'collectors: [{ id: 1 }, { id: 2 }]', 'generate:', '  count: 9999'),
    );
    expect(issues).toEqual([
      "fleet.yaml:4: generate.count: an organization holds at most 10,000 Collectors (the vendor's limit); this one would hold 10,001 (2 explicit + 9,999 generated): split the fleet into several organizations (orgs:)",
    ]);
  });

  it('in an organization of orgs: refused at that organization', () => {
    const issues = refusal(
      yaml(
        'orgs:',
        '  - { name: a, builds: ["19.400-5"], generate: { count: 10000 } }',
        '  - name: b',
        '    builds: ["19.400-5"]',
        '    users: [{ accessId: b, accessKey: b-secret }]',
        '    generate: { count: 10001 }',
      ),
    );
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatch(
      /^fleet\.yaml:6: orgs\[1\]\.generate\.count: an organization holds at most 10,000 Collectors/,
    );
  });

  it('explicit Collectors only: refused at collectors', () => {
    const collectors = Array.from({ length: MAX_ORG_COLLECTORS + 1 }, (_, i) => ({ id: i + 1 }));
    const r = FleetFile.safeParse({ builds: ['19.400-5'], collectors });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join('.'))).toEqual(['collectors']);
  });
});

describe('faults.schedule and upgradeSeconds.byOs', () => {
  it('a schedule of each kind, with its defaults', () => {
    const [org] = parseFleet({
      builds: ['19.400-5'],
      faults: {
        schedule: [
          { kind: 'outage', from: 0 },
          { kind: 'unauthorized', from: 10, for: 5 },
          { kind: 'rateLimitStorm', from: 20 },
          { kind: 'slow', from: 30 },
          { kind: 'malformed', from: 40, shape: 'html' },
        ],
      },
    });
    expect(org?.faults.schedule).toEqual([
      { kind: 'outage', mode: 'unavailable', from: 0 },
      { kind: 'unauthorized', from: 10, for: 5 },
      { kind: 'rateLimitStorm', ratio: 0.9, from: 20 },
      { kind: 'slow', latencyMs: 5000, from: 30 },
      { kind: 'malformed', ratio: 0.5, shape: 'html', from: 40 },
    ]);
  });

  it.each([
    [
      { faults: { schedule: [{ kind: 'flood', from: 0 }] } },
      /faults\.schedule\[0\]\.kind: kind must be one of/,
    ],
    [{ faults: { schedule: [{ kind: 'outage' }] } }, /faults\.schedule\[0\]\.from/],
    [{ faults: { schedule: [{ kind: 'outage', from: 0, for: 0 }] } }, /faults\.schedule\[0\]\.for/],
    [
      { faults: { schedule: [{ kind: 'unauthorized', from: 0, ratio: 1 }] } },
      /faults\.schedule\[0\]\.ratio: unknown field/,
    ],
    [
      { behaviour: { upgradeSeconds: { median: 60, p95: 90, byOs: { Linux: { median: 60, p95: 30 } } } } },
      /behaviour\.upgradeSeconds\.byOs\.Linux: p95 must not be below median/,
    ],
    [
      { behaviour: { upgradeSeconds: { median: 60, p95: 90, byWindows: {} } } },
      /behaviour\.upgradeSeconds\.byWindows: unknown field/,
    ],
  ])('refused: %j', (fleet, reason) => {
    expect(refusal(JSON.stringify({ builds: ['19.400-5'], ...fleet })).join('\n')).toMatch(reason);
  });

  it('without byOs, upgradeSeconds parses as it always did', () => {
    expect(FleetFile.parse({ builds: ['19.400-5'] }).behaviour.upgradeSeconds).toEqual({
      median: 180,
      p95: 600,
    });
  });
});
