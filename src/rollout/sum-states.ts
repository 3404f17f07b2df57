/**
 * Counting Collectors by state, shared by the scheduler and its admission step (kept apart from
 * both so that neither has to import the other).
 */
import { ACTIVE_STATES, type CollectorState } from './result-store.js';

/** Active states past `queued`: the Collector was admitted at least once and has no outcome yet. */
export const IN_PROGRESS: readonly CollectorState[] = ACTIVE_STATES.filter((s) => s !== 'queued');

export function sumStates(
  counts: Partial<Record<CollectorState, number>>,
  states: readonly CollectorState[],
): number {
  return states.reduce((n, s) => n + (counts[s] ?? 0), 0);
}
