/**
 * The standard normal distribution's quantile function Φ⁻¹(p): the z below which a share p of a
 * standard normal variable lies (Φ⁻¹(0.975) = 1.959963…). Peter J. Acklam's rational
 * approximation ("An algorithm for computing the inverse normal cumulative distribution
 * function", 2003), relative error below 1.15e-9 over (0, 1): far finer than any confidence an
 * operator writes.
 */

// biome-ignore format: coefficients read best in rows
const A = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
// biome-ignore format: coefficients read best in rows
const B = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
// biome-ignore format: coefficients read best in rows
const C = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
// biome-ignore format: coefficients read best in rows
const D = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];

const P_LOW = 0.02425;

/** Evaluates a polynomial with coefficients from the highest power down (Horner). */
const poly = (coefficients: readonly number[], x: number) => coefficients.reduce((acc, c) => acc * x + c, 0);

/** Φ⁻¹(p) for 0 < p < 1; throws a RangeError outside. */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs 0 < p < 1, got ${p}`);
  if (p < P_LOW) {
    const q = Math.sqrt(-2 * Math.log(p));
    return poly(C, q) / (poly(D, q) * q + 1);
  }
  if (p > 1 - P_LOW) {
    const q = Math.sqrt(-2 * Math.log(1 - p));
    return -poly(C, q) / (poly(D, q) * q + 1);
  }
  const q = p - 0.5;
  const r = q * q;
  return (poly(A, r) * q) / (poly(B, r) * r + 1);
}
