/**
 * Policies whose newest build waits to start (`minAge`, the ring of `after`), as `status` shows
 * them above its table: one sentence each, `policy canary: 19.480-2 soaks in staging until
 * 2026-11-27 10:00 (UTC); runs 19.470-4 meanwhile`. The sentence is the scheduler's
 * (rollout/tick/choose-build.ts, ring-gate.ts), kept in Redis with the wait (life/target-waits.ts).
 */
import type { TargetWait } from '../../rollout/index.js';
import { formatWhen, oneLine } from './explain-rollout.js';

/** The sentence of one policy's wait. */
export function describeTargetWait(w: TargetWait, now: number): string {
  const meanwhile = w.running === undefined ? '' : `; runs ${oneLine(w.running)} meanwhile`;
  return `policy ${oneLine(w.policy)}: ${oneLine(w.text)}${meanwhile} (since ${formatWhen(w.since, now)})`;
}

/** A sentence per wait, by policy name, each broken into lines by `wrap`. */
export function targetWaitLines(
  waits: readonly TargetWait[],
  now: number,
  wrap: (text: string) => string[],
): string[] {
  return [...waits]
    .sort((a, b) => a.policy.localeCompare(b.policy))
    .flatMap((w) => wrap(describeTargetWait(w, now)));
}
