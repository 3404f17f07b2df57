/**
 * Cohorts held through a `forget`: lua/forget-rollout-22.lua keeps a forgotten rollout's
 * `quarantined` field under its id, and a rollout started again under that id starts with them
 * held (rollout-store.ts `start`), each saying where it comes from: forgetting never releases a hold.
 */
import type { CohortQuarantine } from './rollout-record.js';

/**
 * The cohorts a forgotten rollout held (lua/forget-rollout-22.lua keeps its `quarantined` field),
 * each saying where it comes from; [] when none or unreadable.
 */
export function heldWhenForgotten(json: string | null): CohortQuarantine[] {
  if (!json) return [];
  try {
    const list = JSON.parse(json) as unknown;
    if (!Array.isArray(list)) return [];
    return list
      .filter((q): q is CohortQuarantine => typeof q?.cohort === 'string')
      .map((q) => ({
        ...q,
        reason: q.reason?.startsWith(KEPT) ? q.reason : `${KEPT}${q.reason ?? ''}`,
      }));
  } catch {
    return [];
  }
}

/** How a hold kept through a `forget` is named. */
const KEPT = 'kept when this rollout was forgotten and started again: ';
