/** Text renderings of rollouts for `status`, `run --once` and `status --watch`. */
import { countsByMetricState, METRIC_STATES } from '../rollout/collector-state.js';
import type { RolloutStatus } from '../rollout/read-fleet-status.js';

export { countsByMetricState };

export function progressBar(done: number, total: number, width = 20): string {
  const share = total === 0 ? 1 : done / total;
  const full = Math.round(share * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${(share * 100).toFixed(0).padStart(3)}%`;
}

/** One column per state as metrics show them (collector-state.ts), in that order. */
const COLUMNS = METRIC_STATES;

export function formatRolloutTable(rollouts: readonly RolloutStatus[]): string {
  if (rollouts.length === 0) return 'no rollouts';
  const header = ['ROLLOUT', 'PHASE', 'PROGRESS', 'IN-FLIGHT', ...COLUMNS.map((c) => c.toUpperCase())];
  const rows = rollouts.map((r) => {
    const c = countsByMetricState(r.counts);
    return [
      r.id,
      r.phaseText,
      `${progressBar(r.done, r.total)} ${r.done}/${r.total}`,
      `${r.inflight}/${r.maxInFlight}`,
      ...COLUMNS.map((k) => String(c[k] ?? 0)),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const notes = rollouts
    .filter((r) => r.phase === 'halted' && r.haltReason)
    .map((r) => `${r.id} halted: ${r.haltReason}`);
  return [line(header), ...rows.map(line), ...notes].join('\n');
}
