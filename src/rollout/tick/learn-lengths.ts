/**
 * A step of a rollout's tick: what the rollout has learned of its upgrades' lengths per kind
 * (admit/upgrade-length.ts), read from Redis when the number of successes changed, kept in the
 * tick's memory for the scan (which gives each Collector found its place in the admission order)
 * and the admitter (whose window fit asks for the 95th percentile of the Collector's kind).
 *
 * When the model has learned markedly more (3, 10, 30, 100, ... durations) the queued Collectors
 * are given their places again: what was a guess from the build distance alone becomes the
 * rollout's own measure, and the longest expected still start first.
 */
import { admissionBase, type LengthModel, lengthModel } from '../admit/index.js';
import type { StateCounts } from '../collector/index.js';
import type { TickContext } from './tick-context.js';

/** The numbers of durations at which the queue is ordered again. */
const REORDER_AT = [3, 10, 30, 100, 300, 1000, 3000, 10_000];

export async function learnLengths(
  ctx: Pick<TickContext, 'store' | 'memory' | 'logger'>,
  rolloutId: string,
  counts: StateCounts,
): Promise<LengthModel> {
  const { memory } = ctx;
  const succeeded = (counts.succeeded ?? 0) + (counts.verifying ?? 0);
  const known = memory.lengths.get(rolloutId);
  if (known && known.at === succeeded) return known.model;
  const model = lengthModel(await ctx.store.kindDurations(rolloutId));
  const step = (n: number) => REORDER_AT.filter((t) => n >= t).length;
  memory.lengths.set(rolloutId, { at: succeeded, model });
  // After a restart the queue's places are those the last process gave: no reorder then.
  if (known && step(model.samples) > step(known.model.samples) && (counts.queued ?? 0) > 0) {
    const moved = await ctx.store.reorderQueued(rolloutId, (r) => admissionBase(model, r));
    if (moved)
      ctx.logger.info(
        { rollout: rolloutId, moved, durations: model.samples },
        'admission order updated from the learned upgrade lengths',
      );
  }
  return model;
}
