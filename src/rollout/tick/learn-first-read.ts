/**
 * What the scheduler learns from a rollout's upgrade durations for its workers' poll schedule
 * (src/worker/poll-schedule.ts): the first status read of a task comes after `poll.initial`, or,
 * once a few upgrades finished, not before the time by which the quickest tenth of them had.
 */
import { quantile } from '../../lib/quantile.js';

/** Observed durations this many or more make the schedule learn from them. */
export const MIN_SAMPLES = 5;

/**
 * The first read's time after the request, learned from `observedMs` (durations of this
 * rollout's upgrades): `poll.initial` until MIN_SAMPLES finished, then the 10th percentile,
 * never before `poll.initial` nor after 4 × `poll.max`.
 */
export function learnFirstRead(
  observedMs: readonly number[],
  settings: { pollInitialMs: number; pollMaxMs: number },
): number {
  if (observedMs.length < MIN_SAMPLES) return settings.pollInitialMs;
  const sorted = [...observedMs].sort((a, b) => a - b);
  return Math.max(settings.pollInitialMs, Math.min(quantile(sorted, 0.1), settings.pollMaxMs * 4));
}
