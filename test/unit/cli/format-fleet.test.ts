/**
 * `fleet-upgrade fleet`'s renderings from one view of the inventory: the table fits 80 columns
 * whatever the organizations and policy names (those that do not fit are summed in one column
 * and named below; a long policy name is cut), `--wide` gives each organization its column, the
 * counts add up (by build, organization, offline), the oldest builds are named, each policy's
 * shares and its alert's state are said, an organization whose passes fail is named with the
 * service's words; the CSV's rows sum to the same counts.
 */
import { describe, expect, it } from 'vitest';
import { fleetView } from '../../../src/cli/render/fleet-view.js';
import { FLEET_CSV_COLUMNS, fleetCsv, formatFleet } from '../../../src/cli/render/format-fleet.js';
import type { FleetGroup, OrgInventory, PolicyCompliance } from '../../../src/inventory/index.js';

const NOW = Date.UTC(2026, 10, 23, 10, 5);
const g = (build: string, os: string, alive: boolean, count: number): FleetGroup => ({
  build,
  os,
  alive,
  count,
});

function inventory(
  org: string,
  groups: FleetGroup[],
  extra: Partial<Pick<OrgInventory, 'compliance' | 'schedule'>> & {
    policies?: Record<string, Record<string, [number, number]>>;
  } = {},
): OrgInventory {
  const alive = groups.filter((x) => x.alive).reduce((n, x) => n + x.count, 0);
  const policies = Object.fromEntries(
    Object.entries(extra.policies ?? {}).map(([name, builds]) => [name, { selection: 'x', builds }]),
  );
  return {
    org,
    pass: {
      collectors: groups.reduce((n, x) => n + x.count, 0),
      alive,
      groups,
      policies,
      startedAt: NOW - 300_000,
      at: NOW - 240_000,
      pages: 1,
    },
    schedule: extra.schedule ?? { nextAt: NOW + 600_000, failures: 0 },
    ...(extra.compliance ? { compliance: extra.compliance } : {}),
  };
}

const judged = (
  target: string | null,
  selected: number,
  compliant: number,
  extra: Partial<PolicyCompliance> = {},
) =>
  ({
    targetText: 'latest',
    target,
    targetFrom: target ? 'rollout' : null,
    counts: {
      selected,
      compliant,
      behind: target ? selected - compliant : 0,
      unknown: target ? 0 : selected,
    },
    ...extra,
  }) as PolicyCompliance;

const us = inventory(
  'us',
  [
    g('19.480-2', 'Linux', true, 4210),
    g('19.470-4', 'Linux', true, 3000),
    g('19.470-4', 'Windows', false, 120),
    g('19.115-37', 'Linux', true, 3),
  ],
  {
    policies: { web: { '19.480-2': [4000, 0], '19.470-4': [300, 20], unknown: [0, 0] } },
    compliance: {
      at: NOW,
      passAt: NOW,
      policies: {
        web: judged('19.480-2', 4320, 4000, {
          minimumBuild: '19.400-5',
          counts: { selected: 4320, compliant: 4000, behind: 320, unknown: 0, minimum: 4320 },
          alert: { below: 0.95, forMs: 7 * 86_400_000 },
          belowSince: NOW - 8 * 86_400_000,
        }),
        'a-policy-with-a-rather-long-name-for-the-eu-windows-servers': judged(null, 120, 0),
      },
    },
  },
);
const emea = inventory('emea', [g('19.470-4', 'Linux', true, 1002), g('19.245-6', 'Mac OS X', false, 10)]);
const failing = inventory('canada-central', [g('19.470-4', 'Linux', true, 40)], {
  schedule: {
    nextAt: NOW + 60_000,
    failures: 2,
    lastError: { at: NOW - 60_000, message: 'GET collectors answered 403 forbidden\u001b[2J: no capability' },
  },
});
const many = Array.from({ length: 9 }, (_, i) =>
  inventory(`region-${i + 1}`, [g('19.470-4', 'Linux', true, 100 * (i + 1))]),
);

describe('formatFleet', () => {
  it('fits 80 columns with many organizations and long names; the rest summed in one column and named', () => {
    const view = fleetView([us, emea, failing, ...many]);
    const text = formatFleet(view, NOW);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(text).toMatch(/^BUILD +us +emea +canada-central +\+9 orgs +ALL +SHARE +OFFLINE$/m);
    expect(text).toMatch(/\+9 orgs: region-1, region-2, .*region-9/s);
    expect(text).toMatch(/^19\.470-4 +3,120 +1,002 +40 +4,500 +8,662 +/m);
    expect(text).toMatch(/^total +7,333 +1,012 +40 +4,500 +12,885 +100% +130$/m);
    expect(text).toContain('a-policy-with-a-rather');
    expect(text).toContain('…');
  });

  it('--wide: a column for every organization, names whole', () => {
    const text = formatFleet(fleetView([us, emea, failing, ...many]), NOW, { wide: true });
    expect(text).toMatch(/^BUILD +us +emea +canada-central +region-1 .* region-9 +ALL +SHARE +OFFLINE$/m);
    expect(text).toContain('a-policy-with-a-rather-long-name-for-the-eu-windows-servers');
  });

  it('totals, the oldest builds, each policy with its shares, minimum and alert state; a failing organization in words', () => {
    const text = formatFleet(fleetView([us, emea, failing]), NOW);
    expect(text.split('\n')[0]).toBe('3 organizations, 8,385 installed Collectors: 8,255 alive, 130 offline');
    expect(text).toMatch(/^inventoried 10:01 UTC; next pass 10:06 UTC$/m);
    expect(text).toMatch(
      /org canada-central: inventory failing \(2 passes in a row, last complete 10:01\s+UTC\): GET collectors answered 403 forbidden\?\[2J: no capability/,
    );
    expect(text).toMatch(/^oldest builds: 19\.115-37 \(3: us 3\); 19\.245-6 \(10: emea 10\); 19\.470-4/m);
    expect(text).toMatch(/^web +us +19\.480-2 +4,320 +92\.6% +7\.4% +0\.0% +100\.0%$/m);
    expect(text).toMatch(/^a-policy-with-a-rat\S*… +us +- +120 +- +- +100\.0% +-$/m);
    expect(text).toMatch(
      /web: minimumBuild 19\.400-5; alert below 95% for 7d: below in us since\s+2026-11-15 10:05 UTC \(firing\)/,
    );
    expect(text.replace(/\s+/g, ' ')).toContain(
      'target latest not resolved in us (no rollout of the policy yet)',
    );
  });
});

describe('fleetCsv', () => {
  it("a row per organization and build, then per policy, organization and build with its target's status", () => {
    const view = fleetView([us, emea]);
    const [header, ...rows] = fleetCsv(view).split('\n');
    expect(header).toBe(FLEET_CSV_COLUMNS.join(','));
    const cells = rows.map((r) => r.split(','));
    const fleetRows = cells.filter((c) => c[1] === '');
    expect(fleetRows.reduce((n, c) => n + Number(c[3]), 0)).toBe(8345);
    expect(fleetRows.reduce((n, c) => n + Number(c[5]), 0)).toBe(130);
    expect(rows).toContain('us,,19.470-4,3120,3000,120,,,');
    expect(rows).toContain('us,web,19.480-2,4000,4000,0,19.480-2,compliant,yes');
    expect(rows).toContain('us,web,19.470-4,320,300,20,19.480-2,behind,yes');
    expect(rows).toContain('us,web,unknown,0,0,0,19.480-2,unknown,no');
  });
});

describe('first seen here', () => {
  it('names the newest builds with when this deployment first saw them (the earliest over organizations)', () => {
    const seen = new Map([
      [
        'emea',
        new Map([
          ['19.400-5', NOW - 30 * 86_400_000],
          ['19.470-4', NOW - 3 * 86_400_000],
          ['19.480-2', NOW - 3_600_000],
        ]),
      ],
      [
        'apac',
        new Map([
          ['19.480-2', NOW - 7_200_000],
          ['19.450-12', NOW - 10 * 86_400_000],
          ['bogus', NOW],
        ]),
      ],
    ]);
    const view = fleetView(
      [inventory('emea', [g('19.470-4', 'Linux', true, 3)]), inventory('apac', [])],
      seen,
    );
    expect(view.firstSeen).toEqual([
      { build: '19.480-2', at: NOW - 7_200_000 },
      { build: '19.470-4', at: NOW - 3 * 86_400_000 },
      { build: '19.450-12', at: NOW - 10 * 86_400_000 },
    ]);
    const text = formatFleet(view, NOW);
    expect(text).toContain(
      'first seen here (minAge counts from it): 19.480-2 08:05 UTC; 19.470-4 2026-11-20',
    );
    for (const line of text.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    // Without sightings (--live): no such line.
    expect(formatFleet(fleetView([inventory('emea', [g('19.470-4', 'Linux', true, 3)])]), NOW)).not.toContain(
      'first seen here',
    );
  });
});
