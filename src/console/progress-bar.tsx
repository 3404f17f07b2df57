/**
 * A rollout's (or one organization's part's) Collectors as one bar: succeeded, failed, under way,
 * waiting, on the worklist; the same numbers in words for a screen reader and on hover.
 */
import type { Counts } from './types.js';

const sum = (c: Counts, states: readonly string[]) => states.reduce((a, s) => a + (c[s] ?? 0), 0);

export const FAILED = ['failed', 'timed_out', 'unhealthy', 'error', 'rejected'];
/** `report --worklist`: the Collectors that need a person. */
export const WORKLIST = ['manual', 'unknown'];
const UNDER_WAY = ['admitted', 'creating', 'pending', 'progressing', 'reconciling', 'verifying'];

export function segments(counts: Counts, total: number) {
  const succeeded = counts.succeeded ?? 0;
  const failed = sum(counts, FAILED);
  const underWay = sum(counts, UNDER_WAY);
  const worklist = sum(counts, WORKLIST);
  const waiting = Math.max(0, total - succeeded - failed - underWay - worklist);
  return { succeeded, failed, underWay, waiting, worklist };
}

export function ProgressBar({ counts, total }: { counts: Counts; total: number }) {
  const s = segments(counts, total);
  const label = `${s.succeeded} succeeded, ${s.failed} failed, ${s.underWay} under way, ${s.waiting} waiting, ${s.worklist} on the worklist, of ${total}`;
  const pct = (n: number) => `${total ? (100 * n) / total : 0}%`;
  return (
    <div class="bar" role="img" aria-label={label} title={label}>
      <span class="seg ok" style={{ width: pct(s.succeeded) }} />
      <span class="seg bad" style={{ width: pct(s.failed) }} />
      <span class="seg run" style={{ width: pct(s.underWay) }} />
      <span class="seg work" style={{ width: pct(s.worklist) }} />
    </div>
  );
}
