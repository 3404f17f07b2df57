/**
 * GET /_sim/stats of a process with several organizations: every counter summed over them (and
 * over the requests whose credentials named none), `maxConcurrentTasks` the most unfinished tasks
 * across them at any instant, and each organization's own under `orgs`.
 */
import type { TaskGauge } from './fleet-model.js';
import { newModelCounters } from './fleet-model.js';
import type { Organization } from './organization.js';
import type { SimulatorStats } from './simulator-stats.js';

type StatsSnapshot = ReturnType<Organization['snapshot']>;

type Tree = Record<string, unknown>;

/** Keys that are not counters: the same in every part, or not to be summed. */
const NOT_SUMMED = new Set(['now', 'timeScale', 'org', 'maxConcurrentTasks']);

function addInto(total: Tree, part: Tree): void {
  for (const [key, value] of Object.entries(part)) {
    if (NOT_SUMMED.has(key)) continue;
    if (typeof value === 'number') total[key] = ((total[key] as number | undefined) ?? 0) + value;
    else if (typeof value === 'object' && value !== null) {
      const into = (total[key] ?? {}) as Tree;
      total[key] = into;
      addInto(into, value as Tree);
    }
  }
}

export function statsTotals(
  each: readonly StatsSnapshot[],
  view: { now: number; timeScale: number; gauge: TaskGauge; unattributed: SimulatorStats },
) {
  const outside = view.unattributed.snapshot(newModelCounters(), view.now, {});
  const total: Tree = {};
  for (const part of [...each, outside]) addInto(total, part as unknown as Tree);
  return {
    ...total,
    maxConcurrentTasks: view.gauge.maxConcurrentTasks,
    now: view.now,
    timeScale: view.timeScale,
    /** Requests whose credentials named no organization (counted in the totals above too). */
    unattributed: outside.requests,
    orgs: Object.fromEntries(each.map((s) => [s.org, s])),
  };
}
