/**
 * Turns a policy's `waves` into admission caps for a rollout of `total` selected Collectors.
 * Wave sizes are cumulative: `[10, "10%", "100%"]` lets the rollout admit at most 10 Collectors,
 * then at most 10% of them, then all. A percentage rounds up (a wave is never empty), a cap never
 * goes down, and the last cap is always `total`: a list that stops short of 100% gets a final
 * wave of everything, so a rollout always converges.
 */
import type { WaveSize } from './schema.js';

export function waveLimits(waves: readonly WaveSize[], total: number): number[] {
  if (!Number.isInteger(total) || total < 0)
    throw new RangeError(`total must be a whole number >= 0, got ${total}`);
  const limits: number[] = [];
  let previous = 0;
  for (const wave of waves) {
    const size = wave.kind === 'count' ? wave.count : Math.ceil((total * wave.percent) / 100);
    const cap = Math.min(total, Math.max(previous, size));
    // A wave that admits nobody new is dropped, so that the rollout never waits on an empty wave.
    if (cap > previous || limits.length === 0) limits.push(cap);
    previous = cap;
  }
  if (limits.length === 0 || (limits[limits.length - 1] as number) < total) limits.push(total);
  return limits;
}
