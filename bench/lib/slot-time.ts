/**
 * Where the slot-time of a run goes, read after the run from the simulator's tasks (their request
 * and finish times) and the orchestrator's records. Pure.
 *
 * - `lptMakespan`: the ideal of issue #18: the same durations scheduled longest first on the same
 *   limit, with no cost of noticing, admitting or calling. A Collector's tasks (a failure and its
 *   retry) are one job: they run one after another in any schedule.
 * - `slotTime`: the run's slots × makespan split into running tasks, idle before the last create
 *   (slots empty while work was left to start) and the tail after it (slots empty because nothing
 *   was left to start).
 * - `refillSplit`: per task that ended while every slot was taken, the time from its true end to
 *   the create that took its slot (the next create not yet matched to an earlier end), split at the
 *   times the orchestrator recorded: the end noticed, the next Collector admitted, its job taken up
 *   by a worker, the create answered (each clamped into order, so the parts add up to the gap).
 */
export interface RunTask {
  collectorId: number;
  /** The task's id at the service. */
  id: string;
  requestTime: number;
  finishTime: number;
}

/** What the orchestrator recorded of a task, on the simulator's clock. */
export interface TaskTimings {
  /** When it learned the task had ended. */
  noticedAt?: number;
  /** When the Collector got its slot (the admitter). */
  admittedAt?: number;
  /** When a worker took up the job of that admission. */
  pickedAt?: number;
}

export function lptMakespan(tasks: readonly RunTask[], limit: number): number {
  // Without a rate each task starts as its slot frees (the heap's minimum never falls).
  return lptMakespanAtRate(tasks, limit, 0);
}

/**
 * `lptMakespan` with creates at most `perSecond` (a create waits for a free slot and for the
 * rate; 0: no rate): the longest-first schedule the API budget allows, with nothing else spent. Where the
 * tasks left are short, the slots need more creates per second than the budget gives, and no
 * schedule in this order keeps them busy: the gap between this and `lptMakespan` is the rate's.
 */
export function lptMakespanAtRate(tasks: readonly RunTask[], limit: number, perSecond: number): number {
  const jobs = new Map<number, number>();
  for (const t of tasks)
    jobs.set(t.collectorId, (jobs.get(t.collectorId) ?? 0) + t.finishTime - t.requestTime);
  const lengths = [...jobs.values()].sort((a, b) => b - a);
  const heap = new MinHeap(Math.max(1, limit));
  const spacing = perSecond > 0 ? 1000 / perSecond : 0;
  let last = Number.NEGATIVE_INFINITY;
  let makespan = 0;
  for (const len of lengths) {
    const start = Math.max(heap.popMin(), last + spacing);
    last = start;
    heap.push(start + len);
    if (start + len > makespan) makespan = start + len;
  }
  return makespan;
}

export interface SlotTime {
  /** Slots × makespan, minutes. */
  slotMinutes: number;
  /** Shares of the slot-time (they add up to 1). */
  running: number;
  idleBeforeLastCreate: number;
  tailAfterLastCreate: number;
  /** The most tasks running at once (the simulator's view). */
  peakRunning: number;
}

export function slotTime(tasks: readonly RunTask[], limit: number): SlotTime {
  const first = Math.min(...tasks.map((t) => t.requestTime));
  const lastCreate = Math.max(...tasks.map((t) => t.requestTime));
  const end = Math.max(...tasks.map((t) => t.finishTime));
  const edges: [number, number][] = [];
  for (const t of tasks) edges.push([t.requestTime, 1], [t.finishTime, -1]);
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let at = first;
  let idleBefore = 0;
  let tail = 0;
  let peak = 0;
  const idle = (from: number, to: number, n: number) => {
    const empty = Math.max(0, limit - n);
    if (to <= lastCreate) idleBefore += empty * (to - from);
    else if (from >= lastCreate) tail += empty * (to - from);
    else {
      idleBefore += empty * (lastCreate - from);
      tail += empty * (to - lastCreate);
    }
  };
  for (const [time, delta] of edges) {
    idle(at, time, running);
    running += delta;
    peak = Math.max(peak, running);
    at = time;
  }
  const total = limit * (end - first);
  const busy = tasks.reduce((sum, t) => sum + t.finishTime - t.requestTime, 0);
  const share = (x: number) => Number((x / total).toFixed(3));
  return {
    slotMinutes: Number((total / 60_000).toFixed(1)),
    running: share(busy),
    idleBeforeLastCreate: share(idleBefore),
    tailAfterLastCreate: share(tail),
    peakRunning: peak,
  };
}

export interface RefillSplit {
  /** Ends matched to the create that refilled their slot. */
  refills: number;
  /** Of those, how many had the orchestrator's times for every part. */
  timed: number;
  /** Seconds (simulated) from a task's end to the create that refilled its slot. */
  gapS: { p50: number; p90: number; mean: number };
  /** Mean seconds of each part of the gap, over the timed refills. */
  meanS: { noticing: number; tickAndAdmission: number; queue: number; budgetAndCall: number };
  /** The same as shares of the mean gap. */
  share: { noticing: number; tickAndAdmission: number; queue: number; budgetAndCall: number };
}

/**
 * Each task that ended while every slot was taken, with the create that took its slot: creates
 * beyond the first `limit` each take a slot an earlier end freed, in order (a create before an
 * end used a slot free already).
 */
export function refillPairs(tasks: readonly RunTask[], limit: number): { ended: RunTask; next: RunTask }[] {
  const creates = [...tasks].sort((a, b) => a.requestTime - b.requestTime);
  const ends = [...tasks].sort((a, b) => a.finishTime - b.finishTime);
  const pairs: { ended: RunTask; next: RunTask }[] = [];
  let c = Math.min(limit, creates.length);
  for (const ended of ends) {
    while (c < creates.length && (creates[c] as RunTask).requestTime < ended.finishTime) c++;
    const next = creates[c];
    if (!next) break;
    c++;
    pairs.push({ ended, next });
  }
  return pairs;
}

export function refillSplit(
  tasks: readonly RunTask[],
  limit: number,
  timings: ReadonlyMap<string, TaskTimings>,
): RefillSplit {
  const gaps: number[] = [];
  const parts = { noticing: 0, tickAndAdmission: 0, queue: 0, budgetAndCall: 0 };
  let timed = 0;
  for (const { ended: e, next } of refillPairs(tasks, limit)) {
    const gap = next.requestTime - e.finishTime;
    gaps.push(gap);
    const noticed = timings.get(e.id)?.noticedAt;
    const t = timings.get(next.id);
    // Without the time a worker took the job up (before issue #18), the queue counts as budget.
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
  gaps.sort((a, b) => a - b);
  const s = (ms: number) => Number((ms / 1000).toFixed(1));
  const at = (q: number) => s(gaps[Math.min(gaps.length - 1, Math.floor(q * gaps.length))] ?? Number.NaN);
  const meanGap = gaps.length ? gaps.reduce((x, y) => x + y, 0) / gaps.length : Number.NaN;
  const mean = (x: number) => (timed ? x / timed : Number.NaN);
  const total = Object.values(parts).reduce((x, y) => x + y, 0);
  const share = (x: number) => (total > 0 ? Number((x / total).toFixed(3)) : 0);
  return {
    refills: gaps.length,
    timed,
    gapS: { p50: at(0.5), p90: at(0.9), mean: s(meanGap) },
    meanS: {
      noticing: s(mean(parts.noticing)),
      tickAndAdmission: s(mean(parts.tickAndAdmission)),
      queue: s(mean(parts.queue)),
      budgetAndCall: s(mean(parts.budgetAndCall)),
    },
    share: {
      noticing: share(parts.noticing),
      tickAndAdmission: share(parts.tickAndAdmission),
      queue: share(parts.queue),
      budgetAndCall: share(parts.budgetAndCall),
    },
  };
}

/** A binary min-heap of numbers, filled with `size` zeros (free slots at time 0). */
class MinHeap {
  private readonly a: number[];
  constructor(size: number) {
    this.a = new Array(size).fill(0);
  }
  popMin(): number {
    const a = this.a;
    const top = a[0] as number;
    const last = a.pop() as number;
    if (a.length > 0) {
      a[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < a.length && (a[l] as number) < (a[m] as number)) m = l;
        if (r < a.length && (a[r] as number) < (a[m] as number)) m = r;
        if (m === i) break;
        [a[i], a[m]] = [a[m] as number, a[i] as number];
        i = m;
      }
    }
    return top;
  }
  push(x: number): void {
    const a = this.a;
    a.push(x);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((a[p] as number) <= x) break;
      a[i] = a[p] as number;
      i = p;
    }
    a[i] = x;
  }
}

export interface IdleSplit {
  /** Slot-time from the first create to the last, minutes (the span of "idle before the last create"). */
  slotMinutes: number;
  /** Shares of that slot-time; `idle` = the four parts after it. */
  idle: number;
  /** A task had ended and the orchestrator did not know yet. */
  noticing: number;
  /** A Collector was admitted and its job not yet taken up by a worker. */
  queue: number;
  /** A worker had taken the job up and the create had not yet reached the service (the API budget, the call). */
  budgetAndCall: number;
  /** The rest: slots the orchestrator held free, or held for what it did not time (a refused create, an earlier attempt). */
  other: number;
  /** Tasks that ended within the span, and the same parts as seconds per ended task. */
  ends: number;
  perEndS: { idle: number; noticing: number; queue: number; budgetAndCall: number; other: number };
}

/**
 * The idle slot-time before the last create, split without pairing an end with the create that
 * refilled it: each part is the time a record spent between two of the orchestrator's marks (a
 * task ended → noticed; admitted → taken up; taken up → the create's arrival), clipped to the span.
 * A slot the orchestrator holds is either running a task or in one of those spells, so what is
 * left is slots it held free or held for what it did not time. (`refillSplit` pairs ends with
 * creates in order; when ends are noticed out of their order, as a listing pass does, its parts
 * move between noticing and admission: this split has no such error.)
 */
export function idleSplit(
  tasks: readonly RunTask[],
  limit: number,
  timings: ReadonlyMap<string, TaskTimings>,
): IdleSplit {
  const from = Math.min(...tasks.map((t) => t.requestTime));
  const to = Math.max(...tasks.map((t) => t.requestTime));
  const clip = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined ? 0 : Math.max(0, Math.min(b, to) - Math.max(a, from));
  const parts = { running: 0, noticing: 0, queue: 0, budgetAndCall: 0 };
  let ends = 0;
  for (const t of tasks) {
    const x = timings.get(t.id);
    parts.running += clip(t.requestTime, t.finishTime);
    parts.noticing += clip(t.finishTime, x?.noticedAt);
    parts.queue += clip(x?.admittedAt, x?.pickedAt);
    parts.budgetAndCall += clip(x?.pickedAt, t.requestTime);
    if (t.finishTime >= from && t.finishTime < to) ends++;
  }
  const total = limit * (to - from);
  const idle = total - parts.running;
  const other = idle - parts.noticing - parts.queue - parts.budgetAndCall;
  const share = (x: number) => (total > 0 ? Number((x / total).toFixed(3)) : 0);
  const perEnd = (x: number) => (ends > 0 ? Number((x / ends / 1000).toFixed(1)) : 0);
  return {
    slotMinutes: Number((total / 60_000).toFixed(1)),
    idle: share(idle),
    noticing: share(parts.noticing),
    queue: share(parts.queue),
    budgetAndCall: share(parts.budgetAndCall),
    other: share(other),
    ends,
    perEndS: {
      idle: perEnd(idle),
      noticing: perEnd(parts.noticing),
      queue: perEnd(parts.queue),
      budgetAndCall: perEnd(parts.budgetAndCall),
      other: perEnd(other),
    },
  };
}

/** The share of the slots running a task in each `binMs` from the first create (the run's shape: its ramp, its dips). */
export function runningProfile(tasks: readonly RunTask[], limit: number, binMs: number): number[] {
  const from = Math.min(...tasks.map((t) => t.requestTime));
  const end = Math.max(...tasks.map((t) => t.finishTime));
  const bins = new Array<number>(Math.max(1, Math.ceil((end - from) / binMs))).fill(0);
  for (const t of tasks)
    for (let i = Math.floor((t.requestTime - from) / binMs); i < bins.length; i++) {
      const a = from + i * binMs;
      if (a >= t.finishTime) break;
      bins[i] = (bins[i] ?? 0) + Math.min(t.finishTime, a + binMs) - Math.max(t.requestTime, a);
    }
  return bins.map((ms, i) => {
    const width = Math.min(binMs, end - (from + i * binMs));
    return Number((ms / (limit * width)).toFixed(3));
  });
}
