/**
 * A step of a rollout's tick: Collectors' final failures, aggregated into one `collectors.failed`
 * event at most every few minutes while they grow (chat is told, not flooded). The event counts
 * them by end state and by failure class (the records' `failureClass`, read when an event is
 * due: one pass over the rollout's records at most every FAILURE_REPORT_EVERY_MS).
 */
import { COLLECTOR_STATES, type CollectorStore, gateClass, type StateCounts } from '../collector/index.js';
import type { RolloutDraft } from '../life/index.js';
import type { TickContext } from './tick-context.js';

/** Clock ms between two `collectors.failed` events of a rollout. */
export const FAILURE_REPORT_EVERY_MS = 5 * 60_000;

/** Failure classes an event names at most (the most frequent; patterns may add up to 50). */
export const FAILURE_CLASSES_KEPT = 10;

const BAD_STATES = COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad');
const isBad = new Set<string>(BAD_STATES);

export async function reportFailures(
  deps: Pick<TickContext, 'rollouts' | 'memory' | 'store'>,
  draft: RolloutDraft,
  counts: StateCounts,
  now: number,
): Promise<void> {
  const id = draft.view.id;
  const bad = BAD_STATES.reduce((n, s) => n + (counts[s] ?? 0), 0);
  const last = deps.memory.failuresReported.get(id);
  if (!last) {
    deps.memory.failuresReported.set(id, { bad, at: now });
    return;
  }
  if (bad <= last.bad || now - last.at < FAILURE_REPORT_EVERY_MS) return;
  deps.memory.failuresReported.set(id, { bad, at: now });
  const byState: Record<string, number> = Object.fromEntries(
    BAD_STATES.filter((s) => (counts[s] ?? 0) > 0).map((s) => [s, counts[s] ?? 0]),
  );
  const byClass = await failureClasses(deps.store, id);
  const news = { type: 'collectors.failed' as const, source: 'scheduler' as const };
  const written = await deps.rollouts.write(
    draft.view,
    { news: [{ ...news, new: bad - last.bad, total: bad, byState, byClass }] },
    now,
  );
  if (written) draft.took(written.rollout);
}

/**
 * The rollout's Collectors in a bad end state by failure class (`failureClass`, else the state:
 * a timeout or an error has no class), the most frequent first (ties by name), at most
 * FAILURE_CLASSES_KEPT.
 */
export async function failureClasses(
  store: CollectorStore,
  rolloutId: string,
): Promise<Record<string, number>> {
  const tally = new Map<string, number>();
  for await (const r of store.all(rolloutId)) {
    if (!isBad.has(r.state)) continue;
    const cls = r.failureClass ?? r.state;
    tally.set(cls, (tally.get(cls) ?? 0) + 1);
  }
  const top = [...tally.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, FAILURE_CLASSES_KEPT);
  return Object.fromEntries(top);
}
