/**
 * A newer rollout of the policy took over: the old one moves to `superseded`, and its Collectors
 * that wait (queued, waiting_retry) are skipped; those under verification stay succeeded,
 * unverified (the newer rollout moves them on). Upgrades under way finish in their jobs; an
 * admitted Collector whose create was not sent is skipped by its job; Collectors whose task of
 * unknown id may still run keep their slots (so maxInFlight holds for the policy's tasks) and the
 * scheduler follows the rollout until the listings resolve them. Reads only the waiting indexes.
 */
import type { Logger } from '../../lib/logger.js';
import type { CollectorStore } from '../collector/index.js';
import { type Move, transition } from '../collector/index.js';
import type { RolloutStore } from '../life/index.js';

const BATCH = 500;

export async function supersedeRollout(
  deps: {
    store: CollectorStore;
    rollouts: RolloutStore;
    logger: Logger;
  },
  rolloutId: string,
  by: string,
  now: number,
): Promise<void> {
  const { store, rollouts } = deps;
  const old = await rollouts.get(rolloutId);
  if (!old) return;
  const news = [{ type: 'rollout.superseded' as const, source: 'scheduler' as const, by }];
  // An aborted rollout stays aborted; its record still tells that a newer build took over.
  if (!(await rollouts.move(old, 'supersede', now, { news }))) await rollouts.write(old, { news }, now);
  for (const index of ['queued', 'retries', 'verifying'] as const) {
    const ids = await store.indexed(rolloutId, index);
    for (let i = 0; i < ids.length; i += BATCH) {
      const records = await store.getMany(rolloutId, ids.slice(i, i + BATCH));
      const moves: Move[] = [];
      for (const r of records.values()) {
        const t = transition(
          r,
          { type: 'supersede', message: 'superseded by a newer rollout' },
          { now, settings: old.settings },
        );
        if (t.ok) moves.push(t.move);
      }
      await store.apply(rolloutId, moves);
    }
  }
  const reconciling = await store.indexed(rolloutId, 'reconciling');
  if (reconciling.length) await rollouts.follow(rolloutId, true);
  deps.logger.info({ rollout: rolloutId, reconciling: reconciling.length }, 'rollout superseded');
}
