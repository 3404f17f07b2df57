/**
 * Retention: a finished rollout (converged, aborted, superseded, or orphaned by its policy's
 * removal) is removed with its records, counts, indexes and history `retention` after it finished
 * (daemon setting `retention`, default 30 days), as `forget` removes one at once. Its metric series
 * go with it at the next scrape. A rollout whose Collectors still hold slots is left for later.
 */
import type { Logger } from '../../lib/logger.js';
import { type ControlDeps, ControlError } from './control.js';
import { forget, forgettable } from './forget.js';

/** When a rollout finished: its convergence, or its last change of phase. */
export function finishedAt(r: { convergedAt?: number; updatedAt: number }): number {
  return Math.max(r.convergedAt ?? 0, r.updatedAt);
}

/** Removes the rollouts finished more than `retentionMs` ago; returns their ids. */
export async function expireRollouts(
  deps: ControlDeps & { logger: Logger },
  retentionMs: number,
  now: number,
): Promise<string[]> {
  const expired: string[] = [];
  for (const r of await deps.rollouts.list()) {
    if (!forgettable(r) || now - finishedAt(r) < retentionMs) continue;
    try {
      await forget(deps, r.id);
      expired.push(r.id);
      deps.logger.info(
        { rollout: r.id, finishedAt: new Date(finishedAt(r)).toISOString() },
        'rollout expired',
      );
    } catch (err) {
      // A slot still held (a task of unknown id): the next round tries again.
      if (!(err instanceof ControlError)) throw err;
    }
  }
  return expired;
}
