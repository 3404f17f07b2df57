/**
 * The cohort gate (src/rollout/gates/judge-cohorts.ts): the Wilson lower bound against published values
 * and against a reference computed here another way (the root of the score test's quadratic, by
 * bisection), its monotonicity (fast-check), judgeCohorts on counts, and the gate's behaviour on
 * simulated cohorts over many seeds: good cohorts (2 % failures) are almost never quarantined,
 * bad ones (40 %) are caught after a small sample. The measured rates are attached to the tests
 * as annotations (shown by `vitest --reporter=verbose` and in the JSON report).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRandom } from '../../../src/lib/random.js';
import { Cohorts } from '../../../src/policy/cohorts.js';
import { type CohortStats, judgeCohorts, wilsonLowerBound } from '../../../src/rollout/gates/index.js';

/** Two-sided z of the standard normal table, independent of src/lib/normal-quantile.ts. */
const Z = {
  0.9: 1.6448536269514722,
  0.95: 1.959963984540054,
  0.99: 2.5758293035489004,
};

/**
 * The Wilson lower bound as Wilson defined it: the smallest p that the score test does not
 * reject, i.e. the lower root of (p̂ − p)² = z² p (1 − p) / n, found by bisection.
 */
function referenceLowerBound(failures: number, n: number, z: number): number {
  if (n === 0 || failures === 0) return 0;
  const observed = failures / n;
  const f = (p: number) => (observed - p) ** 2 - (z * z * p * (1 - p)) / n;
  let [lo, hi] = [0, observed];
  for (let i = 0; i < 200; i++) {
    const mid = (lo + hi) / 2;
    if (f(mid) > 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

describe('wilsonLowerBound', () => {
  it('matches known values at 95%: 0 of 10, 5 of 10, 10 of 10', () => {
    expect(wilsonLowerBound(0, 10, 0.95)).toBe(0);
    expect(wilsonLowerBound(5, 10, 0.95)).toBeCloseTo(0.2366, 4);
    expect(wilsonLowerBound(10, 10, 0.95)).toBeCloseTo(10 / (10 + Z[0.95] ** 2), 9); // 0.7225
    expect(wilsonLowerBound(10, 10, 0.95)).toBeCloseTo(0.7225, 4);
  });

  it('matches the published examples of Newcombe (1998), Table I, method 3', () => {
    // R. G. Newcombe, "Two-sided confidence intervals for the single proportion: comparison of
    // seven methods", Statistics in Medicine 17 (1998), 857–872.
    expect(wilsonLowerBound(81, 263, 0.95)).toBeCloseTo(0.2553, 4);
    expect(wilsonLowerBound(15, 148, 0.95)).toBeCloseTo(0.0624, 4);
    expect(wilsonLowerBound(0, 20, 0.95)).toBe(0);
    expect(wilsonLowerBound(1, 29, 0.95)).toBeCloseTo(0.0061, 4);
  });

  it('matches the reference computed by bisection for every count up to 60, at 90, 95 and 99%', () => {
    for (const confidence of [0.9, 0.95, 0.99]) {
      for (let n = 0; n <= 60; n++) {
        for (let k = 0; k <= n; k++) {
          expect(wilsonLowerBound(k, n, confidence)).toBeCloseTo(
            referenceLowerBound(k, n, Z[confidence as keyof typeof Z]),
            7,
          );
        }
      }
    }
  });

  it('is 0 without outcomes, and refuses counts that cannot be', () => {
    expect(wilsonLowerBound(0, 0, 0.95)).toBe(0);
    expect(() => wilsonLowerBound(3, 2, 0.95)).toThrow(RangeError);
    expect(() => wilsonLowerBound(-1, 2, 0.95)).toThrow(RangeError);
    expect(() => wilsonLowerBound(1, 2.5, 0.95)).toThrow(RangeError);
    expect(() => wilsonLowerBound(1, 2, 1)).toThrow(RangeError);
  });

  const counts = fc
    .integer({ min: 0, max: 2000 })
    .chain((n) => fc.tuple(fc.integer({ min: 0, max: n }), fc.constant(n)));
  const confidence = fc.double({ min: 0.5, max: 0.999, noNaN: true });

  it('lies within [0, observed rate]', () => {
    fc.assert(
      fc.property(counts, confidence, ([k, n], c) => {
        const lb = wilsonLowerBound(k, n, c);
        expect(lb).toBeGreaterThanOrEqual(0);
        expect(lb).toBeLessThanOrEqual(n === 0 ? 0 : k / n + 1e-12);
      }),
    );
  });

  it('rises with failures and falls with successes', () => {
    fc.assert(
      fc.property(counts, confidence, fc.integer({ min: 1, max: 50 }), ([k, n], c, more) => {
        const lb = wilsonLowerBound(k, n, c);
        // One more failure, or one more outcome that is a failure: the bound does not fall.
        if (k < n) expect(wilsonLowerBound(k + 1, n, c)).toBeGreaterThanOrEqual(lb);
        expect(wilsonLowerBound(k + 1, n + 1, c)).toBeGreaterThanOrEqual(lb - 1e-12);
        // More successes: the bound does not rise.
        expect(wilsonLowerBound(k, n + more, c)).toBeLessThanOrEqual(lb + 1e-12);
      }),
    );
  });

  it('rises with the sample at the same observed rate, and falls with the confidence', () => {
    fc.assert(
      fc.property(counts, confidence, confidence, fc.integer({ min: 2, max: 20 }), ([k, n], c1, c2, m) => {
        expect(wilsonLowerBound(k * m, n * m, c1)).toBeGreaterThanOrEqual(wilsonLowerBound(k, n, c1) - 1e-12);
        const [low, high] = c1 <= c2 ? [c1, c2] : [c2, c1];
        expect(wilsonLowerBound(k, n, high)).toBeLessThanOrEqual(wilsonLowerBound(k, n, low) + 1e-12);
      }),
    );
  });
});

describe('judgeCohorts', () => {
  const gate = Cohorts.parse({ by: ['osName'], maxFailureRatio: 0.1 });

  it('quarantines a cohort whose lower bound is above the ratio, with a sentence, sorted by key', () => {
    const stats = new Map<string, CohortStats>([
      ['osName=Windows', { failures: 2, outcomes: 5 }],
      ['osName=Linux', { failures: 1, outcomes: 5 }],
      ['osName=Mac OS X', { failures: 7, outcomes: 30 }],
      ['osName=AIX', { failures: 6, outcomes: 30 }],
      ['osName=unknown', { failures: 3, outcomes: 4 }],
    ]);
    const { quarantined } = judgeCohorts(stats, gate);
    expect(quarantined.map((q) => q.key)).toEqual(['osName=Mac OS X', 'osName=Windows']);
    expect(quarantined[1]).toEqual({
      key: 'osName=Windows',
      failures: 2,
      outcomes: 5,
      lowerBound: expect.closeTo(0.1176, 4),
      reason:
        '2 of 5 upgrades failed (40%); at 95% confidence the failure rate is at least 11.8%, above the cohort limit of 10%',
    });
    expect(quarantined[0]?.reason).toBe(
      '7 of 30 upgrades failed (23.3%); at 95% confidence the failure rate is at least 11.8%, above the cohort limit of 10%',
    );
  });

  it('waits for minSample outcomes, and holds at exactly the ratio', () => {
    const strict = Cohorts.parse({ by: 'osArch', maxFailureRatio: 0.1, minSample: 10 });
    expect(
      judgeCohorts(new Map([['osArch=amd64', { failures: 9, outcomes: 9 }]]), strict).quarantined,
    ).toEqual([]);
    expect(
      judgeCohorts(new Map([['osArch=amd64', { failures: 9, outcomes: 10 }]]), strict).quarantined,
    ).toHaveLength(1);
    const all = Cohorts.parse({ by: 'osArch', maxFailureRatio: 1, minSample: 1 });
    expect(judgeCohorts(new Map([['k', { failures: 1000, outcomes: 1000 }]]), all).quarantined).toEqual([]);
    const none = Cohorts.parse({ by: 'osArch', maxFailureRatio: 0, minSample: 1 });
    expect(judgeCohorts(new Map([['k', { failures: 0, outcomes: 1000 }]]), none).quarantined).toEqual([]);
    expect(judgeCohorts(new Map([['k', { failures: 1, outcomes: 1000 }]]), none).quarantined).toHaveLength(1);
  });

  it('clamps counts read mid-update instead of throwing', () => {
    const stats = new Map<string, CohortStats>([
      ['a', { failures: 12, outcomes: 10 }],
      ['b', { failures: -1, outcomes: 10 }],
      ['c', { failures: Number.NaN, outcomes: 10 }],
      ['d', { failures: 5, outcomes: Number.POSITIVE_INFINITY }],
    ]);
    expect(judgeCohorts(stats, gate).quarantined.map((q) => [q.key, q.failures, q.outcomes])).toEqual([
      ['a', 10, 10],
    ]);
  });
});

/** Outcomes of one cohort, judged after each: the sample at which it was quarantined, or undefined. */
function sampleAtQuarantine(seed: number, rate: number, size: number, cohorts: Cohorts): number | undefined {
  const random = createRandom(seed);
  let failures = 0;
  for (let outcomes = 1; outcomes <= size; outcomes++) {
    if (random.chance(rate)) failures++;
    const stats = new Map([['osName=Linux', { failures, outcomes }]]);
    if (judgeCohorts(stats, cohorts).quarantined.length > 0) return outcomes;
  }
  return undefined;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] as number;
};

describe('the cohort gate on simulated cohorts (1,000 seeds each)', () => {
  const SEEDS = Array.from({ length: 1000 }, (_, i) => 1 + i * 7919);

  for (const maxFailureRatio of [0.1, 0.05]) {
    it(`quarantines fewer than 1 − confidence of good cohorts (2%, 30 Collectors) against a ${maxFailureRatio * 100}% gate`, async ({
      annotate,
    }) => {
      const cohorts = Cohorts.parse({ by: 'osName', maxFailureRatio });
      const falseQuarantines = SEEDS.filter(
        (seed) => sampleAtQuarantine(seed, 0.02, 30, cohorts) !== undefined,
      );
      const rate = falseQuarantines.length / SEEDS.length;
      await annotate(`false quarantines: ${falseQuarantines.length} of ${SEEDS.length} (${rate})`);
      expect(rate).toBeLessThan(1 - cohorts.confidence);
    });
  }

  it('quarantines fewer than 1 − confidence of good cohorts of 300 Collectors, judged after each outcome', async ({
    annotate,
  }) => {
    const cohorts = Cohorts.parse({ by: 'osName', maxFailureRatio: 0.1 });
    const falseQuarantines = SEEDS.filter(
      (seed) => sampleAtQuarantine(seed, 0.02, 300, cohorts) !== undefined,
    );
    await annotate(`false quarantines: ${falseQuarantines.length} of ${SEEDS.length}`);
    expect(falseQuarantines.length / SEEDS.length).toBeLessThan(0.05);
  });

  for (const [maxFailureRatio, medianAtMost] of [
    [0.1, 10],
    [0.2, 15],
  ] as const) {
    it(`catches a bad cohort (40%) after a small sample against a ${maxFailureRatio * 100}% gate`, async ({
      annotate,
    }) => {
      const cohorts = Cohorts.parse({ by: 'osName', maxFailureRatio });
      const samples = SEEDS.map(
        (seed) => sampleAtQuarantine(seed + 1, 0.4, 200, cohorts) ?? Number.POSITIVE_INFINITY,
      );
      const within20 = samples.filter((n) => n <= 20).length / samples.length;
      await annotate(
        `median sample ${median(samples)}, caught within 20 outcomes in ${(within20 * 100).toFixed(1)}% of seeds`,
      );
      expect(samples.every(Number.isFinite)).toBe(true);
      expect(median(samples)).toBeLessThanOrEqual(medianAtMost);
      expect(within20).toBeGreaterThan(maxFailureRatio === 0.1 ? 0.95 : 0.65);
    });
  }

  it('in a fleet of three cohorts (2%, 40%, 2%), holds the bad one in every seed and a good one rarely', async ({
    annotate,
  }) => {
    const cohorts = Cohorts.parse({ by: ['osName'], maxFailureRatio: 0.1 });
    const rates: Record<string, number> = {
      'osName=Linux': 0.02,
      'osName=Windows': 0.4,
      'osName=Mac OS X': 0.02,
    };
    let goodHeld = 0;
    let badCaught = 0;
    for (const seed of SEEDS.slice(0, 200)) {
      const random = createRandom(seed);
      const stats = new Map(Object.keys(rates).map((key) => [key, { failures: 0, outcomes: 0 }]));
      const held = new Set<string>();
      for (let i = 0; i < 300; i++) {
        const key = random.pick(Object.keys(rates).filter((k) => !held.has(k)));
        const s = stats.get(key) as CohortStats;
        s.outcomes++;
        if (random.chance(rates[key] as number)) s.failures++;
        for (const q of judgeCohorts(stats, cohorts).quarantined) held.add(q.key);
      }
      if (held.has('osName=Windows')) badCaught++;
      goodHeld += [...held].filter((k) => k !== 'osName=Windows').length;
    }
    await annotate(`bad cohort held in ${badCaught} of 200 fleets; good cohorts held: ${goodHeld} of 400`);
    expect(badCaught).toBe(200);
    expect(goodHeld / 400).toBeLessThan(0.05);
  });
});
