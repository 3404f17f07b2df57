/**
 * What predicts an upgrade's length (admit/upgrade-length.ts): the build distance (the service
 * goes in increments), the OS, and the rollout's own durations per kind once it has them; the
 * admission order it gives (the longest expected first) and the 95th percentile of a kind for the
 * window fit.
 */
import { describe, expect, it } from 'vitest';
import {
  admissionBase,
  buildDistance,
  durationKind,
  KIND_SAMPLES,
  lengthModel,
} from '../../../src/rollout/admit/index.js';

const targets = ['19.400-5', '19.418-9', '19.432-7', '19.450-12', '19.462-3', '19.470-4'].map(
  (version, i, all) => ({
    version,
    latest: i === all.length - 1,
  }),
);
const MIN = 60_000;

describe('buildDistance', () => {
  it('counts the builds between two versions in the service list (at least 1)', () => {
    expect(buildDistance('19.400-5', '19.470-4', targets)).toBe(5);
    expect(buildDistance('19.462-3', '19.470-4', targets)).toBe(1);
    // A downgrade is as far as the upgrade.
    expect(buildDistance('19.470-4', '19.432-7', targets)).toBe(3);
    expect(buildDistance('19.470-4', '19.470-4', targets)).toBe(1);
  });

  it('places a build the service no longer offers among the others by its version', () => {
    expect(buildDistance('19.300-1', '19.470-4', targets)).toBe(6);
    expect(buildDistance('19.300-1', '19.470-4', [])).toBe(1);
  });
});

describe('lengthModel', () => {
  it('orders by distance alone before anything is learned', () => {
    const m = lengthModel(new Map());
    const far = durationKind('Linux', 5);
    const near = durationKind('Windows Server 2019', 1);
    expect(m.predict(far)).toBeGreaterThan(m.predict(near));
    expect(m.samples).toBe(0);
    expect(m.p95(far)).toBeUndefined();
  });

  it("learns an OS's factor from its durations and applies it to kinds not seen yet", () => {
    const learned = new Map([
      [durationKind('Linux', 1), [60_000, 62_000, 58_000, 61_000]],
      [durationKind('Windows Server 2019', 1), [240_000, 250_000, 230_000]],
    ]);
    const m = lengthModel(learned);
    // Windows at distance 2 has no durations of its own: 2 builds × its factor (about 4).
    const winFar = m.predict(durationKind('Windows Server 2019', 2));
    expect(winFar / m.predict(durationKind('Linux', 1))).toBeGreaterThan(6);
    // A Windows Collector one build behind now goes before a Linux one three builds behind.
    expect(admissionBase(m, { kind: durationKind('Windows Server 2019', 1) })).toBeLessThan(
      admissionBase(m, { kind: durationKind('Linux', 3) }),
    );
    // A kind with its own durations uses their median.
    expect(m.predict(durationKind('Windows Server 2019', 1))).toBe(240_000);
  });

  it(`uses a kind's own median from ${KIND_SAMPLES} durations, and its own 95th percentile from 20`, () => {
    const own = Array.from({ length: 20 }, (_, i) => (10 + i) * MIN);
    const other = Array.from({ length: 20 }, () => 2 * MIN);
    const m = lengthModel(
      new Map([
        ['Linux|2', own],
        ['Linux|1', other],
      ]),
    );
    expect(m.predict('Linux|2')).toBeGreaterThanOrEqual(19 * MIN);
    expect(m.predict('Linux|2')).toBeLessThanOrEqual(20 * MIN);
    expect(m.p95('Linux|2')).toBeGreaterThanOrEqual(28 * MIN);
    expect(m.p95('Linux|1')).toBe(2 * MIN);
    // A kind with few durations falls back to every duration's 95th percentile.
    expect(m.p95('Mac OS X|1')).toBeGreaterThan(2 * MIN);
  });

  it("learns a cohort's factor, which comes before its OS's for kinds not seen yet", () => {
    const m = lengthModel(
      new Map([
        ['Linux|1', [60_000, 60_000, 60_000, 60_000]],
        // Slow disks: three times the others per build.
        ['@linux/slow-disk', [180_000, 170_000, 190_000]],
      ]),
    );
    expect(m.predict('Linux|2', 'linux/slow-disk')).toBeCloseTo(2 * 180_000 * (60_000 / 60_000), -4);
    expect(m.predict('Linux|2', 'linux/other')).toBe(m.predict('Linux|2'));
    // Its own kind's durations still win.
    expect(m.predict('Linux|1', 'linux/slow-disk')).toBe(60_000);
  });

  it('gives undefined and unknown systems a kind of their own', () => {
    expect(durationKind(undefined, 2)).toBe('unknown|2');
    expect(durationKind('  ', 1)).toBe('unknown|1');
  });
});
