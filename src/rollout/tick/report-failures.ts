/**
 * A step of a rollout's tick: Collectors' final failures, aggregated into one `collectors.failed`
 * event at most every few minutes while they grow (chat is told, not flooded).
 */
import { COLLECTOR_STATES, gateClass, type StateCounts } from '../collector/index.js';
import type { RolloutDraft } from '../life/index.js';
import type { TickContext } from './tick-context.js';

/** Clock ms between two `collectors.failed` events of a rollout. */
export const FAILURE_REPORT_EVERY_MS = 5 * 60_000;

const BAD_STATES = COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad');

export async function reportFailures(
  deps: Pick<TickContext, 'rollouts' | 'memory'>,
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
  const written = await deps.rollouts.write(
    draft.view,
    { news: [{ type: 'collectors.failed', source: 'scheduler', new: bad - last.bad, total: bad, byState }] },
    now,
  );
  if (written) draft.took(written.rollout);
}
