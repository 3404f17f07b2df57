/** The fleet file fields of issue #10: their defaults, and the values refused with the field named. */
import { describe, expect, it } from 'vitest';
import { FleetFile } from '../../../src/simulator/schema.js';

const BUILDS = ['19.400-5', '19.470-4'];

function issuesOf(input: Record<string, unknown>): string[] {
  const r = FleetFile.safeParse({ builds: BUILDS, ...input });
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
}

describe('defaults keep the fleet file of before', () => {
  it('behaviour: offlineAfterSeconds 1800, stopAfterUpgrade off, no cohort ratios, no cause weights', () => {
    const { behaviour, collectors } = FleetFile.parse({ builds: BUILDS, collectors: [{ id: 1 }] });
    expect(behaviour.offlineAfterSeconds).toBe(1800);
    expect(behaviour.stopAfterUpgrade).toEqual({ ratio: 0, afterSeconds: { median: 120, p95: 600 } });
    expect(behaviour.failureRatioBy).toBeUndefined();
    expect(behaviour.failureCauses).toBeUndefined();
    expect(collectors[0]?.stopsAfterUpgrade).toBeUndefined();
    expect(collectors[0]?.failureCause).toBeUndefined();
  });

  it('accepts the documented example', () => {
    const r = FleetFile.safeParse({
      builds: BUILDS,
      collectors: [{ id: 1, stopsAfterUpgrade: true, failureCause: 'network' }],
      behaviour: {
        offlineAfterSeconds: 900,
        stopAfterUpgrade: {
          ratio: 0.02,
          byOs: { 'Mac OS X': 0.8 },
          afterSeconds: 300,
          restartAfterSeconds: { median: 3600, p95: 14400 },
        },
        failureRatioBy: {
          osName: { 'Windows Server 2019': 0.4 },
          osArch: { aarch64: 0.3 },
          builds: ['19.470-4'],
        },
        failureCauses: {
          disk_space: 0.4,
          upgrades_disabled: 0.2,
          permission: 0.1,
          network: 0.2,
          unknown: 0.1,
        },
      },
    });
    expect(r.success, JSON.stringify(r.error?.issues)).toBe(true);
  });
});

describe('refused values name their field', () => {
  it.each([
    [{ behaviour: { offlineAfterSeconds: 0 } }, 'behaviour.offlineAfterSeconds'],
    [{ behaviour: { stopAfterUpgrade: { ratio: 1.5 } } }, 'behaviour.stopAfterUpgrade.ratio'],
    [
      { behaviour: { stopAfterUpgrade: { byOs: { 'Mac OS X': -0.1 } } } },
      'behaviour.stopAfterUpgrade.byOs.Mac OS X',
    ],
    [{ behaviour: { stopAfterUpgrade: { afterSeconds: -1 } } }, 'behaviour.stopAfterUpgrade.afterSeconds'],
    [
      { behaviour: { stopAfterUpgrade: { afterSeconds: { median: 60, p95: 30 } } } },
      'behaviour.stopAfterUpgrade.afterSeconds',
    ],
    [{ behaviour: { stopAfterUpgrade: { after: 60 } } }, 'behaviour.stopAfterUpgrade'],
    [{ behaviour: { failureRatioBy: { osName: { Linux: 2 } } } }, 'behaviour.failureRatioBy.osName.Linux'],
    [{ behaviour: { failureRatioBy: { osVersion: {} } } }, 'behaviour.failureRatioBy'],
    [{ behaviour: { failureRatioBy: { builds: ['latest'] } } }, 'behaviour.failureRatioBy.builds.0'],
    [{ behaviour: { failureCauses: { disk_space: 0, network: 0 } } }, 'behaviour.failureCauses'],
    [{ behaviour: { failureCauses: { cosmic_rays: 1 } } }, 'behaviour.failureCauses'],
    [{ behaviour: { failureCauses: { network: -1 } } }, 'behaviour.failureCauses.network'],
    [{ collectors: [{ id: 1, failureCause: 'gremlins' }] }, 'collectors.0.failureCause'],
    [{ collectors: [{ id: 1, stopsAfterUpgrade: 'yes' }] }, 'collectors.0.stopsAfterUpgrade'],
  ])('%j → %s', (input, field) => {
    const issues = issuesOf(input);
    expect(issues.length, 'expected the file to be refused').toBeGreaterThan(0);
    expect(
      issues.some((i) => i.startsWith(`${field}:`)),
      issues.join('\n'),
    ).toBe(true);
  });
});
