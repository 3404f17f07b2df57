/**
 * A step of a rollout's tick: what the rollout has learned of its upgrades' lengths per kind
 * (admit/upgrade-length.ts), read from Redis when the number of successes changed, kept in the
 * tick's memory for the scan (which gives each Collector found its place in the admission order)
 * and the admitter (whose window fit asks for the 95th percentile of the Collector's kind).
 *
 * When the model has learned markedly more (3, 10, 30, 100, ... durations) the queued Collectors
 * are given their places again: what was a guess from the build distance alone becomes the
 * rollout's own measure, and the longest expected still start first.
 *
 * Longest first holds only where the order does not choose a sample (`longestFirst`): the waves
 * before the last one, and every wave under a cohort gate, are samples the gates judge, and a
 * sample drawn longest first is drawn from the farthest builds, not from the fleet. There the
 * queue keeps the discovery order; when the last wave starts it is ordered longest first once.
 */
import type { Policy } from '../../policy/schema.js';
import { wavePlan } from '../../policy/wave-limits.js';
import { admissionBase, type LengthModel, lengthModel } from '../admit/index.js';
import { COLLECTOR_STATES, type StateCounts, sumStates } from '../collector/index.js';
import type { RolloutRecord } from '../life/index.js';
import type { TickContext } from './tick-context.js';

/**
 * Whether the rollout's queue goes longest first now: in its last wave (the one that takes every
 * Collector left), and only without a cohort gate, whose early outcomes per cohort are its sample.
 */
export function longestFirst(
  policy: Pick<Policy, 'waves' | 'analysis' | 'cohorts'>,
  rollout: Pick<RolloutRecord, 'wave' | 'canaries'>,
  counts: StateCounts,
): boolean {
  if (policy.cohorts) return false;
  // Before the first scan the fleet's size is unknown: a wave of a fixed count is then not the last.
  const total = sumStates(counts, COLLECTOR_STATES) || 1e12;
  const plan = wavePlan(policy.waves, total, rollout.canaries ?? 0, policy.analysis);
  const wave = plan[Math.min(rollout.wave.index, plan.length - 1)];
  return wave === undefined || wave.cap >= total;
}

/** The numbers of durations at which the queue is ordered again. */
const REORDER_AT = [3, 10, 30, 100, 300, 1000, 3000, 10_000];

export async function learnLengths(
  ctx: Pick<TickContext, 'store' | 'memory' | 'logger'>,
  rolloutId: string,
  counts: StateCounts,
  /** The queue goes longest first now (`longestFirst`); else it keeps the discovery order. */
  longest = true,
): Promise<LengthModel> {
  const { memory } = ctx;
  const succeeded = (counts.succeeded ?? 0) + (counts.verifying ?? 0);
  const known = memory.lengths.get(rolloutId);
  if (known && known.at === succeeded && known.longest === longest) return known.model;
  const model = known?.at === succeeded ? known.model : lengthModel(await ctx.store.kindDurations(rolloutId));
  const step = (n: number) => REORDER_AT.filter((t) => n >= t).length;
  memory.lengths.set(rolloutId, { at: succeeded, model, longest });
  if (!longest || (counts.queued ?? 0) === 0) return model;
  // The last wave starts (or a process restarts in it): the queue is ordered longest first once;
  // then again when the model has learned markedly more.
  const starts =
    known === undefined ? (counts.queued ?? 0) < sumStates(counts, COLLECTOR_STATES) : !known.longest;
  if (starts || (known && step(model.samples) > step(known.model.samples))) {
    const moved = await ctx.store.reorderQueued(rolloutId, (r) => admissionBase(model, r));
    if (moved)
      ctx.logger.info(
        { rollout: rolloutId, moved, durations: model.samples },
        'admission order updated from the learned upgrade lengths',
      );
  }
  return model;
}
