/** The `q` quantile (0 to 1) of numbers sorted ascending, by the nearest rank below; NaN when there are none. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.floor(q * sorted.length)));
  return sorted[i] as number;
}
