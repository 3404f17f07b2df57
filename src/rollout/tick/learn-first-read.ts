/**
 * What the scheduler learns from a rollout's upgrade durations (its median, its 95th percentile
 * for the window fit) for its workers' poll schedule
 * (src/worker/poll-schedule.ts): the first status read of a task comes after `poll.initial`, or,
 * once a few upgrades finished, not before the time by which the quickest tenth of them had.
 */
import { quantile } from '../../lib/quantile.js';
import type { StateCounts } from '../collector/index.js';
import type { RolloutDraft } from '../life/index.js';
import type { TickContext } from './tick-context.js';

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

/**
 * A step of a rollout's tick: from its durations, the first status read of a task (after each
 * success while few are known, then after every tenth: the 10th percentile hardly moves by
 * then), the median (what a watching pass costs) and, once 20 are known, the 95th percentile
 * that the window fit expects an upgrade to take.
 */
export async function learnDurations(
  deps: Pick<TickContext, 'rollouts' | 'memory'>,
  draft: RolloutDraft,
  counts: StateCounts,
): Promise<void> {
  const rollout = draft.view;
  const succeeded = counts.succeeded ?? 0;
  const last = deps.memory.learnedAt.get(rollout.id);
  if (last === succeeded || (last !== undefined && succeeded >= 50 && succeeded - last < 10)) return;
  deps.memory.learnedAt.set(rollout.id, succeeded);
  const sorted = (await deps.rollouts.durations(rollout.id)).sort((a, b) => a - b);
  if (sorted.length >= 5) deps.memory.medianMs.set(rollout.id, quantile(sorted, 0.5));
  const firstRead = learnFirstRead(sorted, rollout.settings);
  if (firstRead !== rollout.firstPollMs) draft.set({ firstPollMs: Math.round(firstRead) });
  if (sorted.length >= 20) {
    const p95 = Math.round(quantile(sorted, 0.95));
    if (p95 !== rollout.expectedMs) draft.set({ expectedMs: p95 });
  }
}
