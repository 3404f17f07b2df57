/**
 * The makespan of an ideal orchestrator: the same tasks with their actual durations, started in
 * the same admission order (their request times) by greedy list scheduling at `limit` tasks at
 * once, with no API cost and no delay in noticing a completion. A Collector's later task (a
 * retry) starts no earlier than its previous task's end. Pure.
 */
export interface ReplayTask {
  collectorId: number;
  requestTime: number;
  durationMs: number;
}

export function idealMakespan(tasks: readonly ReplayTask[], limit: number): number {
  if (tasks.length === 0) return 0;
  const order = [...tasks].sort((a, b) => a.requestTime - b.requestTime);
  // Slot end times; a small array scan is fast enough for thousands of tasks at 10..1000 slots.
  const slots: number[] = new Array(Math.max(1, limit)).fill(0);
  const lastEnd = new Map<number, number>();
  let makespan = 0;
  for (const t of order) {
    let best = 0;
    for (let i = 1; i < slots.length; i++) if ((slots[i] as number) < (slots[best] as number)) best = i;
    const start = Math.max(slots[best] as number, lastEnd.get(t.collectorId) ?? 0);
    const end = start + t.durationMs;
    slots[best] = end;
    lastEnd.set(t.collectorId, end);
    if (end > makespan) makespan = end;
  }
  return makespan;
}

/** The q-quantile (0..1) of `values` by the nearest-rank rule; NaN when empty. */
export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil(q * sorted.length)));
  return sorted[rank - 1] as number;
}
