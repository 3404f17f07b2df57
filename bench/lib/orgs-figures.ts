/**
 * The figures of a rollout across organizations, from each organization's simulator records
 * (/_sim/stats and /_sim/collectors with ?org=) and the daemon's records read from Redis:
 * - per organization, measureRun's figures on its own limit (maxInFlightPerOrg): makespan, its
 *   bound, the ideal (the same durations longest first, lptMakespan), slot-time and refills;
 * - overall: the makespan from the first create of any organization to the last end, against the
 *   largest organization's bound and ideal (the organizations run side by side, each on its own
 *   limit and budget, so nothing can end before the slowest of them); slot-time on the sum of the
 *   limits; the refills of every organization pooled (an end is refilled within its organization);
 *   calls by endpoint per upgraded Collector and the aggregate request rate.
 *
 * Task ids and Collector ids repeat across organizations (each counts from the same start, as two
 * deployments would): everything is keyed by organization first.
 */
import type { CollectorRecord } from '../../src/rollout/index.js';
import { percentile } from './ideal-makespan.js';
import { measureRun, type SimCollectorView, type SimStatsView } from './measure-run.js';
import { type IdleSplit, type RunTask, refillPairs, slotTime, type TaskTimings } from './slot-time.js';

export interface OrgTimings {
  /** Task id → simulator-clock time at which the daemon recorded the task's end. */
  noticed: Map<string, number>;
  /** Task id → what the daemon recorded of it, on the simulator's clock. */
  timings: Map<string, TaskTimings>;
}

/** As bench/lib/run-fleet-upgrade.ts reads them: when the daemon learned of each task's end. */
function noticedTimes(r: CollectorRecord): [string, number][] {
  const out: [string, number][] = [];
  if (r.taskId !== undefined) {
    const at = r.succeededAt ?? r.finishedAt;
    if (at !== undefined) out.push([String(r.taskId), at]);
  }
  for (const a of r.attemptLog ?? [])
    if (a.taskId !== undefined && a.endedAt !== undefined && String(a.taskId) !== String(r.taskId))
      out.push([String(a.taskId), a.endedAt]);
  return out;
}

/** The daemon's records by organization, its times moved onto the simulator's clock (+ offsetMs). */
export function orgTimings(records: Iterable<CollectorRecord>, offsetMs: number): Map<string, OrgTimings> {
  const out = new Map<string, OrgTimings>();
  const of = (org: string) => {
    let t = out.get(org);
    if (!t) {
      t = { noticed: new Map(), timings: new Map() };
      out.set(org, t);
    }
    return t;
  };
  for (const r of records) {
    const t = of(r.org ?? 'default');
    for (const [task, at] of noticedTimes(r)) if (!t.noticed.has(task)) t.noticed.set(task, at + offsetMs);
    if (r.taskId !== undefined) {
      const x: TaskTimings = {};
      if (r.admittedAt !== undefined) x.admittedAt = r.admittedAt + offsetMs;
      if (r.pickedAt !== undefined) x.pickedAt = r.pickedAt + offsetMs;
      t.timings.set(String(r.taskId), x);
    }
  }
  for (const t of out.values())
    for (const [task, at] of t.noticed) t.timings.set(task, { ...t.timings.get(task), noticedAt: at });
  return out;
}

export interface OrgRun {
  org: string;
  stats: SimStatsView;
  collectors: SimCollectorView[];
  timings: OrgTimings | undefined;
}

const minutes = (ms: number) => Number((ms / 60_000).toFixed(1));
const round = (n: number, d = 2) => (Number.isFinite(n) ? Number(n.toFixed(d)) : null);

function finishedTasks(c: readonly SimCollectorView[], org: string): RunTask[] {
  return c.flatMap((col) =>
    col.tasks
      .filter((t) => t.finishTime !== null)
      .map((t) => ({
        collectorId: col.id,
        id: `${org}/${t.id}`,
        requestTime: t.requestTime,
        finishTime: t.finishTime as number,
      })),
  );
}

function perMinute(times: readonly number[], from: number): number[] {
  const out: number[] = [];
  for (const t of times) {
    const m = Math.floor((t - from) / 60_000);
    while (out.length <= m) out.push(0);
    out[m] = (out[m] ?? 0) + 1;
  }
  return out;
}

export function orgsFigures(
  runs: readonly OrgRun[],
  o: {
    perOrgInFlight: number;
    target: string;
    perSecond: number;
    share?: number;
    /** Each organization's busiest minute, requests a simulated second (budget-use.ts). */
    budgetRates?: ReadonlyMap<string, number>;
  },
) {
  const start = Math.min(
    ...runs.flatMap((r) => r.collectors.flatMap((c) => c.tasks.map((t) => t.requestTime))),
  );
  const byOrg = runs.map((r) => {
    const { firstTaskMs: _, ...f } = measureRun({
      stats: r.stats,
      collectors: r.collectors,
      inFlight: o.perOrgInFlight,
      target: o.target,
      noticed: r.timings?.noticed ?? new Map(),
      perSecond: o.perSecond,
      ...(o.share === undefined ? {} : { share: o.share }),
      ...(o.budgetRates?.get(r.org) ? { budgetRate: o.budgetRates.get(r.org) } : {}),
      timings: r.timings?.timings ?? new Map(),
    });
    const first = Math.min(...r.collectors.flatMap((c) => c.tasks.map((t) => t.requestTime)));
    return {
      org: r.org,
      collectors: r.collectors.length,
      /** The service's 429s by limit: `rate` (requests per second) or `concurrency` (at once per key). */
      rateLimitedBy: (r.stats as { rateLimitedBy?: Record<string, number> }).rateLimitedBy ?? {},
      firstRequest: first,
      /** Creates answered per simulated minute, from the first create of any organization. */
      createsPerMinute: perMinute(
        r.collectors.flatMap((c) => c.tasks.map((t) => t.requestTime)),
        start,
      ),
      /** Requests per simulated second over the organization's own makespan. */
      requestRate: round(f.calls / (f.makespanMin * 60), 2),
      ...f,
    };
  });

  const tasks = runs.flatMap((r) => finishedTasks(r.collectors, r.org));
  const allRequests = runs.flatMap((r) => r.collectors.flatMap((c) => c.tasks.map((t) => t.requestTime)));
  const first = Math.min(...allRequests);
  const last = Math.max(...tasks.map((t) => t.finishTime));
  const makespan = last - first;
  const largestIdeal = byOrg.reduce((a, b) => (b.idealMin > a.idealMin ? b : a));
  const largestBound = byOrg.reduce((a, b) => (b.lowerBound.min > a.lowerBound.min ? b : a));

  // Refills within each organization, pooled.
  const gaps: number[] = [];
  const parts = { noticing: 0, tickAndAdmission: 0, queue: 0, budgetAndCall: 0 };
  let timed = 0;
  for (const r of runs) {
    const own = finishedTasks(r.collectors, r.org).map((t) => ({ ...t, id: t.id.slice(r.org.length + 1) }));
    for (const { ended: e, next } of refillPairs(own, o.perOrgInFlight)) {
      gaps.push(next.requestTime - e.finishTime);
      const noticed = r.timings?.timings.get(e.id)?.noticedAt;
      const t = r.timings?.timings.get(next.id);
      if (noticed === undefined || t?.admittedAt === undefined) continue;
      timed++;
      const clamp = (x: number, lo: number) => Math.min(next.requestTime, Math.max(lo, x));
      const n = clamp(noticed, e.finishTime);
      const a = clamp(t.admittedAt, n);
      const p = clamp(t.pickedAt ?? a, a);
      parts.noticing += n - e.finishTime;
      parts.tickAndAdmission += a - n;
      parts.queue += p - a;
      parts.budgetAndCall += next.requestTime - p;
    }
  }
  const s = (ms: number) => round(ms / 1000, 1);
  const total = Object.values(parts).reduce((x, y) => x + y, 0);

  const calls = runs.reduce((a, r) => a + r.stats.requests.total, 0);
  const byEndpoint: Record<string, number> = {};
  for (const r of runs)
    for (const [e, n] of Object.entries(r.stats.requests.byEndpoint))
      byEndpoint[e] = (byEndpoint[e] ?? 0) + n;
  const upgraded = byOrg.reduce((a, b) => a + b.upgraded, 0);
  const tasksByOutcome: Record<string, number> = {};
  for (const r of runs)
    for (const [k, n] of Object.entries(r.stats.tasksByOutcome))
      tasksByOutcome[k] = (tasksByOutcome[k] ?? 0) + n;
  const ratio = (x: number, y: number) => round(x / y, 3);
  return {
    byOrg,
    overall: {
      collectors: runs.reduce((a, r) => a + r.collectors.length, 0),
      upgraded,
      tasks: allRequests.length,
      tasksByOutcome,
      makespanMin: minutes(makespan),
      largestIdeal: { org: largestIdeal.org, min: largestIdeal.idealMin },
      overLargestIdeal: round(makespan / (largestIdeal.idealMin * 60_000)),
      largestBound: { org: largestBound.org, min: largestBound.lowerBound.min },
      overLargestBound: round(makespan / (largestBound.lowerBound.min * 60_000)),
      /** When each organization's first create came, simulated seconds after the first of all. */
      startSpreadS: round((Math.max(...byOrg.map((b) => b.firstRequest)) - first) / 1000, 1),
      slotTime: slotTime(tasks, o.perOrgInFlight * runs.length),
      idle: pooledIdle(byOrg.map((b) => b.idle)),
      /** Each organization's running share per 5 simulated minutes from its own first create, averaged. */
      runningBy5Min: Array.from(
        { length: Math.max(...byOrg.map((b) => b.runningBy5Min.length)) },
        (_, i) => round(byOrg.reduce((a, b) => a + (b.runningBy5Min[i] ?? 0), 0) / byOrg.length, 3) ?? 0,
      ),
      refill: {
        refills: gaps.length,
        timed,
        gapS: {
          p50: s(percentile(gaps, 0.5)),
          p90: s(percentile(gaps, 0.9)),
          mean: s(gaps.reduce((a, b) => a + b, 0) / gaps.length),
        },
        meanS: Object.fromEntries(
          Object.entries(parts).map(([k, v]) => [k, s(timed ? v / timed : Number.NaN)]),
        ),
        share: Object.fromEntries(
          Object.entries(parts).map(([k, v]) => [k, total > 0 ? round(v / total, 3) : 0]),
        ),
      },
      calls,
      callsByEndpoint: byEndpoint,
      callsPerUpgraded: ratio(calls, upgraded),
      callsPerUpgradedByEndpoint: Object.fromEntries(
        ['create', 'status', 'list', 'targets', 'inventory', 'other'].map((e) => [
          e,
          ratio(byEndpoint[e] ?? 0, upgraded),
        ]),
      ),
      rateLimited: runs.reduce((a, r) => a + r.stats.rateLimited, 0),
      /** Requests per simulated second over the whole makespan, against the sum of the budgets. */
      requestRate: round(calls / (makespan / 1000), 2),
      budgetRate: o.perSecond * runs.length,
    },
  };
}

export type OrgsFigures = ReturnType<typeof orgsFigures>;

/** The organizations' idle splits as one: each part weighted by its organization's slot-time. */
function pooledIdle(splits: readonly IdleSplit[]): IdleSplit {
  const minutes = splits.reduce((a, b) => a + b.slotMinutes, 0);
  const ends = splits.reduce((a, b) => a + b.ends, 0);
  const parts = ['idle', 'noticing', 'queue', 'budgetAndCall', 'other'] as const;
  type Part = (typeof parts)[number];
  const slotMs = (k: Part) => splits.reduce((a, b) => a + b[k] * b.slotMinutes * 60_000, 0);
  const each = (value: (k: Part) => number) =>
    Object.fromEntries(parts.map((k) => [k, value(k)])) as Record<Part, number>;
  return {
    slotMinutes: round(minutes, 1) ?? 0,
    ...each((k) => round(slotMs(k) / (minutes * 60_000), 3) ?? 0),
    ends,
    perEndS: each((k) => round(slotMs(k) / ends / 1000, 1) ?? 0),
  };
}
