/** The figures of one run that set its makespan against the ideals (bench/lib/measure-run.ts). */
import { describe, expect, it } from 'vitest';
import { measureRun, type SimCollectorView, type SimStatsView } from '../../../bench/lib/measure-run.js';

const MIN = 60_000;
// Five Collectors on 4 slots, upgraded in 4, 1, 1, 1 and 1 minutes, all asked for at once: the
// ideal is 4 minutes; at one create a minute the fifth starts at 4 and ends at 5.
const collectors: SimCollectorView[] = [4, 1, 1, 1, 1].map((m, i) => ({
  id: i + 1,
  version: 'B',
  tasks: [{ id: i + 1, requestTime: 0, finishTime: m * MIN, result: 'succeeded' }],
}));
const stats: SimStatsView = {
  now: 5 * MIN,
  tasksCreated: 5,
  tasksByOutcome: { succeeded: 5 },
  rateLimited: 0,
  maxConcurrentTasks: 5,
  requests: { total: 5, byEndpoint: { create: 5 }, byStatus: { '202': 5 } },
  rejected: {},
};
const input = { stats, collectors, inFlight: 4, target: 'B', noticed: new Map(), perSecond: 4 };

describe('measureRun', () => {
  it('sets the makespan against the ideal at the rate the budget gave, when it is known', () => {
    const m = measureRun({ ...input, budgetRate: 1 / 60 });
    expect(m.idealMin).toBe(4);
    expect(m.idealAtBudgetMin).toBe(5);
    expect(m.overIdealAtBudget).toBe(0.8);
    // Not measured: not printed.
    expect(measureRun(input)).not.toHaveProperty('idealAtBudgetMin');
  });
});
