/**
 * The figures of one run of the comparison, read from the simulator's side (/_sim/stats and
 * /_sim/collectors): API calls by endpoint, tasks with their request and finish times, Collectors
 * on the target build, and from those the makespan, its lower bound, the ideal orchestrator's
 * makespan and how late completions were noticed (`noticed`: task id → time on the simulator's
 * clock at which the orchestrator knew the task had finished).
 */
import { idealMakespan, percentile } from './ideal-makespan.js';
import {
  idleSplit,
  lptMakespan,
  lptMakespanAtRate,
  type RunTask,
  refillSplit,
  runningProfile,
  slotTime,
  type TaskTimings,
} from './slot-time.js';

export interface SimTaskView {
  id: number;
  requestTime: number;
  finishTime: number | null;
  result: string | null;
}

export interface SimCollectorView {
  id: number;
  version: string;
  tasks: SimTaskView[];
}

export interface SimStatsView {
  now: number;
  tasksCreated: number;
  tasksByOutcome: Record<string, number>;
  rateLimited: number;
  maxConcurrentTasks: number;
  requests: { total: number; byEndpoint: Record<string, number>; byStatus: Record<string, number> };
  rejected: Record<string, number>;
}

export async function readSimulation(
  url: string,
): Promise<{ stats: SimStatsView; collectors: SimCollectorView[] }> {
  const stats = (await (await fetch(`${url}/_sim/stats`)).json()) as SimStatsView;
  const all = (await (await fetch(`${url}/_sim/collectors`)).json()) as { collectors: SimCollectorView[] };
  return { stats, collectors: all.collectors };
}

const minutes = (ms: number) => Number((ms / 60_000).toFixed(1));
const round = (n: number, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

export interface MeasureInput {
  stats: SimStatsView;
  collectors: SimCollectorView[];
  inFlight: number;
  target: string;
  noticed: ReadonlyMap<string, number>;
  /** The service's budget, requests per simulated second. */
  perSecond: number;
  /** What the orchestrator recorded of each task (task id → times on the simulator's clock). */
  timings?: ReadonlyMap<string, TaskTimings>;
  /** The share of `perSecond` the deployment spends (`apiBudget.share`): the rate of `idealAtShareMin`. */
  share?: number;
  /**
   * Requests a simulated second the budget gave at most (the busiest simulated minute's): the rate
   * of `idealAtBudgetMin`. At a scaled clock the budget's real milliseconds (a Redis round trip, the
   * timer) are multiplied by the scale, and it gives less than the share.
   */
  budgetRate?: number;
}

export function measureRun(input: MeasureInput) {
  const { stats, collectors, inFlight } = input;
  const tasks = collectors.flatMap((c) => c.tasks.map((t) => ({ ...t, collectorId: c.id })));
  const finished = tasks.filter((t) => t.finishTime !== null) as (SimTaskView & {
    collectorId: number;
    finishTime: number;
  })[];
  const durations = finished.map((t) => t.finishTime - t.requestTime);
  const busy = durations.reduce((a, b) => a + b, 0);
  const first = Math.min(...tasks.map((t) => t.requestTime));
  const last = Math.max(...finished.map((t) => t.finishTime));
  const makespan = last - first;
  const calls = stats.requests.total;
  const parts = {
    sumOverLimitMin: minutes(busy / inFlight),
    longestTaskMin: minutes(Math.max(...durations)),
    callsAtBudgetMin: minutes((calls / input.perSecond) * 1000),
  };
  const bound = Math.max(busy / inFlight, ...durations, (calls / input.perSecond) * 1000);
  const runTasks: RunTask[] = finished.map((t) => ({
    collectorId: t.collectorId,
    id: String(t.id),
    requestTime: t.requestTime,
    finishTime: t.finishTime,
  }));
  const lpt = lptMakespan(runTasks, inFlight);
  const lptAtShare = lptMakespanAtRate(runTasks, inFlight, input.perSecond * (input.share ?? 1));
  const lptAtBudget = input.budgetRate ? lptMakespanAtRate(runTasks, inFlight, input.budgetRate) : undefined;
  const inOrder = idealMakespan(
    finished.map((t) => ({
      collectorId: t.collectorId,
      requestTime: t.requestTime,
      durationMs: t.finishTime - t.requestTime,
    })),
    inFlight,
  );
  const lateS: number[] = [];
  const lateShare: number[] = [];
  let unnoticed = 0;
  for (const t of finished) {
    const at = input.noticed.get(String(t.id));
    if (at === undefined) {
      unnoticed++;
      continue;
    }
    lateS.push((at - t.finishTime) / 1000);
    lateShare.push((at - t.finishTime) / Math.max(1, t.finishTime - t.requestTime));
  }
  const upgraded = collectors.filter((c) => c.version === input.target).length;
  const by = stats.requests.byEndpoint;
  return {
    calls,
    callsByEndpoint: {
      create: by.create ?? 0,
      status: by.status ?? 0,
      list: by.list ?? 0,
      targets: by.targets ?? 0,
      other: by.other ?? 0,
    },
    upgraded,
    callsPerUpgraded: round(calls / upgraded),
    callsPerUpgradedByEndpoint: Object.fromEntries(
      ['create', 'status', 'list', 'targets'].map((e) => [e, round((by[e] ?? 0) / upgraded, 3)]),
    ),
    tasks: tasks.length,
    tasksUnfinished: tasks.length - finished.length,
    tasksByOutcome: stats.tasksByOutcome,
    rejected: stats.rejected,
    statusReadsPerTask: round((by.status ?? 0) / tasks.length),
    rateLimited: stats.rateLimited,
    maxConcurrentTasks: stats.maxConcurrentTasks,
    makespanMin: minutes(makespan),
    lowerBound: { min: minutes(bound), ...parts },
    /** The same durations scheduled longest first on the same limit (issue #18's ideal). */
    idealMin: minutes(lpt),
    overIdeal: round(makespan / lpt),
    /** The ideal with creates no faster than the deployment's share of the rate, and nothing else spent. */
    idealAtShareMin: minutes(lptAtShare),
    overIdealAtShare: round(makespan / lptAtShare),
    /** The ideal with creates no faster than the budget gave in its busiest minute, nothing else spent. */
    ...(lptAtBudget === undefined
      ? {}
      : { idealAtBudgetMin: minutes(lptAtBudget), overIdealAtBudget: round(makespan / lptAtBudget) }),
    /** The same durations started in the run's own order, greedily, with nothing lost in between. */
    idealInRunOrderMin: minutes(inOrder),
    overIdealInRunOrder: round(makespan / inOrder),
    overBound: round(makespan / bound),
    slotTime: slotTime(runTasks, inFlight),
    refill: refillSplit(runTasks, inFlight, input.timings ?? new Map()),
    /** The idle slot-time before the last create, split at each record's own marks (no pairing). */
    idle: idleSplit(runTasks, inFlight, input.timings ?? new Map()),
    /** Share of the slots running a task in each 5 simulated minutes from the first create. */
    runningBy5Min: runningProfile(runTasks, inFlight, 5 * 60_000),
    noticedLate: {
      tasks: lateS.length,
      unnoticed,
      p50s: round(percentile(lateS, 0.5), 1),
      p90s: round(percentile(lateS, 0.9), 1),
      maxS: round(Math.max(...lateS), 1),
      /** Below 0 would mean a clock mapping error: nothing can be noticed before it happened. */
      minS: round(Math.min(...lateS), 1),
      p50ShareOfTask: round(percentile(lateShare, 0.5), 3),
      p90ShareOfTask: round(percentile(lateShare, 0.9), 3),
    },
    /** Per task, for comparing runs: Collector id → duration ms of its first task. */
    firstTaskMs: Object.fromEntries(
      collectors
        .filter((c) => c.tasks[0]?.finishTime != null)
        .map((c) => [c.id, (c.tasks[0]?.finishTime as number) - (c.tasks[0]?.requestTime as number)]),
    ) as Record<string, number>,
  };
}

export type RunFigures = ReturnType<typeof measureRun>;
