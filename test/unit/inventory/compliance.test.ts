/**
 * The inventory's pure pieces: a pass folded into counts (installed only; by build, OS and
 * alive; each covering policy's selection by build; values from the service bounded), each
 * policy's compliance from those counts (compliant on the target or newer, compared part by part;
 * behind; unknown; on or above minimumBuild), the build the target resolves to (the current
 * rollout's in the organization, else a fixed target, else none), `belowSince` kept while the
 * share stays below `complianceAlert.below`, and when the next pass is due.
 */
import { describe, expect, it } from 'vitest';
import type { InventoryCollector } from '../../../src/api/index.js';
import {
  complianceOf,
  complianceRatios,
  complianceTarget,
  createTally,
  judgeCompliance,
  nextPassAt,
  type OrgInventory,
} from '../../../src/inventory/index.js';
import { MAX_STORED_BUILDS } from '../../../src/inventory/tally-inventory.js';
import { Policy, type PolicyInput } from '../../../src/policy/schema.js';

const policy = (input: PolicyInput) => Policy.parse(input);

let nextId = 1;
function collector(version: string | null, extra: Partial<InventoryCollector> = {}): InventoryCollector {
  return {
    id: nextId++,
    name: `c-${nextId}`,
    collectorType: 'Installable',
    collectorVersion: version,
    alive: true,
    osName: 'Linux',
    ...extra,
  };
}

describe('createTally', () => {
  it('counts installed Collectors by build, OS and alive; a version that is no build is unknown', () => {
    const t = createTally('us', []);
    t.add([
      collector('19.470-4'),
      collector('19.470-4', { alive: false }),
      collector('19.9-1', { osName: 'Windows' }),
      collector(''),
      collector(null, { osName: '' }),
      collector('19.470-4', { collectorType: 'Hosted' }),
    ]);
    const r = t.result();
    expect(r.collectors).toBe(5);
    expect(r.alive).toBe(4);
    expect(r.groups).toEqual(
      expect.arrayContaining([
        { build: '19.470-4', os: 'Linux', alive: true, count: 1 },
        { build: '19.470-4', os: 'Linux', alive: false, count: 1 },
        { build: '19.9-1', os: 'Windows', alive: true, count: 1 },
        { build: 'unknown', os: 'Linux', alive: true, count: 1 },
        { build: 'unknown', os: 'unknown', alive: true, count: 1 },
      ]),
    );
    expect(r.groups).toHaveLength(5);
  });

  it("counts each covering policy's selection by build, alive and offline apart; a policy of other organizations is left out", () => {
    const linux = policy({ name: 'linux', select: { osName: 'Linux' }, exclude: { hostName: 'db-*' } });
    const emea = policy({ name: 'emea-only', orgs: ['emea'] });
    const t = createTally('us', [linux, emea]);
    t.add([
      collector('19.470-4'),
      collector('19.450-12', { alive: false }),
      collector('19.450-12', { hostName: 'db-1' }),
      collector('19.450-12', { osName: 'Windows' }),
    ]);
    const r = t.result();
    expect(Object.keys(r.policies)).toEqual(['linux']);
    expect(r.policies.linux?.builds).toEqual({ '19.470-4': [1, 0], '19.450-12': [0, 1] });
    expect(r.policies.linux?.selection).toMatch(/^[0-9a-f]{12}$/);
  });

  it('bounds the builds kept: past the bound they are summed as other', () => {
    const t = createTally('us', []);
    t.add(Array.from({ length: MAX_STORED_BUILDS + 5 }, (_, i) => collector(`19.${i}-1`)));
    const builds = new Set(t.result().groups.map((g) => g.build));
    expect(builds.size).toBe(MAX_STORED_BUILDS + 1);
    expect(t.result().groups.find((g) => g.build === 'other')?.count).toBe(5);
  });
});

describe('complianceOf', () => {
  const builds = {
    '19.470-4': [5, 1],
    '19.1000-1': [2, 0],
    '19.450-12': [3, 2],
    '19.99-3': [1, 0],
    unknown: [1, 1],
    other: [0, 1],
  } as Record<string, [number, number]>;

  it('on the target or newer (numerically, part by part) is compliant, older is behind, the rest unknown', () => {
    expect(complianceOf(builds, '19.470-4')).toEqual({
      selected: 17,
      compliant: 8,
      behind: 6,
      unknown: 3,
    });
  });

  it('minimumBuild: on it or newer', () => {
    expect(complianceOf(builds, '19.470-4', '19.450-12').minimum).toBe(13);
  });

  it('a target not resolved: every Collector unknown, the minimum still counted', () => {
    expect(complianceOf(builds, undefined, '19.470-4')).toEqual({
      selected: 17,
      compliant: 0,
      behind: 0,
      unknown: 17,
      minimum: 8,
    });
  });

  it('shares of the selected; none selected, no shares', () => {
    expect(complianceRatios({ selected: 4, compliant: 3, behind: 1, unknown: 0, minimum: 2 })).toEqual({
      compliant: 0.75,
      behind: 0.25,
      unknown: 0,
      minimum: 0.5,
    });
    expect(complianceRatios({ selected: 0, compliant: 0, behind: 0, unknown: 0 })).toBeUndefined();
  });
});

describe('complianceTarget', () => {
  const rollout = { build: '19.480-2', builds: { us: '19.480-2', emea: '19.470-4' }, orgs: ['us', 'emea'] };

  it("the current rollout's build in the organization", () => {
    expect(complianceTarget({ target: 'latest' }, rollout, 'emea')).toEqual({
      target: '19.470-4',
      targetFrom: 'rollout',
    });
  });

  it('without a rollout there (or at all): a fixed target, else none', () => {
    expect(complianceTarget({ target: '19.400-1' }, rollout, 'apac')).toEqual({
      target: '19.400-1',
      targetFrom: 'policy',
    });
    expect(complianceTarget({ target: 'latest-1' }, undefined, 'us')).toEqual({
      target: null,
      targetFrom: null,
    });
  });
});

function inventoryOf(
  builds: Record<string, [number, number]>,
  compliance?: OrgInventory['compliance'],
): OrgInventory {
  return {
    org: 'us',
    pass: {
      collectors: 0,
      alive: 0,
      groups: [],
      policies: { web: { selection: 'x', builds } },
      startedAt: 0,
      at: 1000,
      pages: 1,
    },
    ...(compliance ? { compliance } : {}),
  };
}

describe('judgeCompliance', () => {
  const web = policy({
    name: 'web',
    target: 'latest',
    minimumBuild: '19.400-1',
    complianceAlert: { below: 0.95, for: '7d' },
  });
  const current = new Map([['web', { build: '19.470-4', builds: { us: '19.470-4' }, orgs: ['us'] }]]);

  it("judges each policy the pass counted against its rollout's build, with its minimum and alert", () => {
    const judged = judgeCompliance({
      inventory: inventoryOf({ '19.470-4': [9, 0], '19.300-1': [1, 0] }),
      policies: [web, policy({ name: 'not-counted' })],
      current,
      now: 5000,
    });
    expect(judged).toEqual({
      at: 5000,
      passAt: 1000,
      policies: {
        web: {
          targetText: 'latest',
          target: '19.470-4',
          targetFrom: 'rollout',
          minimumBuild: '19.400-1',
          alert: { below: 0.95, forMs: 7 * 86_400_000 },
          counts: { selected: 10, compliant: 9, behind: 1, unknown: 0, minimum: 9 },
          belowSince: 5000,
        },
      },
    });
  });

  it('belowSince is kept while the share stays below, and goes once it is not', () => {
    const below = inventoryOf({ '19.470-4': [9, 0], '19.300-1': [1, 0] });
    const first = judgeCompliance({ inventory: below, policies: [web], current, now: 5000 });
    const later = judgeCompliance({
      inventory: { ...below, ...(first ? { compliance: first } : {}) },
      policies: [web],
      current,
      now: 9000,
    });
    expect(later?.policies.web?.belowSince).toBe(5000);
    const fixed = inventoryOf({ '19.470-4': [10, 0] }, later);
    expect(
      judgeCompliance({ inventory: fixed, policies: [web], current, now: 9500 })?.policies.web,
    ).not.toHaveProperty('belowSince');
  });

  it('a target not resolved is never below (nothing to alert on)', () => {
    const judged = judgeCompliance({
      inventory: inventoryOf({ '19.300-1': [1, 0] }),
      policies: [web],
      current: new Map(),
      now: 1,
    });
    expect(judged?.policies.web).toMatchObject({ target: null, counts: { unknown: 1 } });
    expect(judged?.policies.web).not.toHaveProperty('belowSince');
  });

  it('nothing before the first complete pass', () => {
    expect(judgeCompliance({ inventory: { org: 'us' }, policies: [web], current, now: 1 })).toBeUndefined();
  });
});

describe('nextPassAt', () => {
  const web = policy({ name: 'web' });
  const counted = createTally('us', [web]).result();
  const inventory: OrgInventory = {
    org: 'us',
    pass: { ...counted, startedAt: 1_000_000, at: 1_010_000, pages: 1 },
    schedule: { nextAt: 1_900_000, failures: 0 },
  };

  it('no inventory yet: now', () => {
    expect(nextPassAt({ org: 'us' }, [web], 42)).toBe(42);
  });

  it('the schedule, while the policies select as when the pass counted', () => {
    expect(nextPassAt(inventory, [web], 1_500_000)).toBe(1_900_000);
  });

  it('a new policy, or one that selects otherwise: a minute after the last pass began', () => {
    expect(nextPassAt(inventory, [web, policy({ name: 'new' })], 1_500_000)).toBe(1_060_000);
    expect(nextPassAt(inventory, [policy({ name: 'web', select: { osName: 'Linux' } })], 1_500_000)).toBe(
      1_060_000,
    );
    expect(nextPassAt(inventory, [policy({ name: 'elsewhere', orgs: ['emea'] })], 1_500_000)).toBe(1_900_000);
  });
});
