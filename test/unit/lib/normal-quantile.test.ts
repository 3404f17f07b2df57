/** Φ⁻¹ (src/lib/normal-quantile.ts) against published values of the standard normal table. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { normalQuantile } from '../../../src/lib/normal-quantile.js';

describe('normalQuantile', () => {
  it('matches the table to 8 digits, in the centre and in both tails', () => {
    const table: [number, number][] = [
      [0.5, 0],
      [0.75, 0.6744897501960817],
      [0.95, 1.6448536269514722],
      [0.975, 1.959963984540054],
      [0.995, 2.5758293035489004],
      [0.9995, 3.2905267314918945],
      [0.001, -3.090232306167813],
      [0.025, -1.959963984540054],
    ];
    for (const [p, z] of table) expect(normalQuantile(p)).toBeCloseTo(z, 8);
  });

  it('is increasing and symmetric', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-9, max: 0.5, noNaN: true }),
        fc.double({ min: 1e-9, max: 0.5 }),
        (p, d) => {
          expect(normalQuantile(p)).toBeCloseTo(-normalQuantile(1 - p), 6);
          if (p + d < 1) expect(normalQuantile(p + d)).toBeGreaterThanOrEqual(normalQuantile(p));
        },
      ),
    );
  });

  it('refuses p outside (0, 1)', () => {
    for (const p of [0, 1, -0.1, 1.5, Number.NaN]) expect(() => normalQuantile(p)).toThrow(RangeError);
  });
});
