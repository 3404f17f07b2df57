/**
 * One organization's figures of a chaos run: its records against its simulator's counts, the
 * 429s of its own rate limit that our requests got (the simulator's count minus the
 * neighbour's; a storm's 429s are counted apart, in `faults.rateLimitStorm`), its fault windows
 * and its waits, in simulated minutes from the rollout's start.
 */
import { DEFAULT_RETRY } from '../../../src/api/retry-policy.js';
import type { CollectorRecord } from '../../../src/rollout/collector/index.js';
import type { RecordedEvent } from '../../../src/rollout/life/index.js';
import { BURSTS, type ChaosOptions, type OrgFigures, type SimCounts } from './chaos-figures.js';
import type { ChaosOrg } from './chaos-orgs.js';
import type { Judgement, SimView } from './judge-outcomes.js';
import type { NoisyNeighbour } from './noisy-neighbour.js';

/** What /_sim/stats answers, as far as the figures read it. */
export interface SimStats {
  requests: { total: number };
  tasksCreated: number;
  rateLimited: number;
  rateLimitedBy: { rate: number; concurrency: number };
  injectedErrors: number;
  dropped: number;
  maxConcurrentTasks: number;
  tasksByOutcome: Record<string, number>;
  faults: Record<string, number>;
}

export function orgFigures(i: {
  org: ChaosOrg;
  options: Pick<
    ChaosOptions,
    'maxInFlight' | 'maxInFlightPerOrg' | 'max429Share' | 'burstMs' | 'burstEveryMs'
  >;
  records: readonly CollectorRecord[];
  collectors: readonly SimView[];
  expected: number;
  judgement: Judgement | undefined;
  stats: SimStats;
  neighbour: NoisyNeighbour | undefined;
  windows: readonly { kind: string; since: number; until: number | null }[];
  history: readonly RecordedEvent[];
  rolloutStartSim: number;
}): OrgFigures {
  const minutes = (at: number) => round((at - i.rolloutStartSim) / 60_000);
  const outcomes: Record<string, number> = {};
  for (const r of i.records) outcomes[r.state] = (outcomes[r.state] ?? 0) + 1;
  const finished = i.records.map((r) => r.finishedAt).filter((at): at is number => at !== undefined);
  const j = i.judgement;
  const neighbour = i.neighbour && {
    bursts: i.neighbour.bursts,
    requests: i.neighbour.requests,
    rateLimited: i.neighbour.rateLimited,
  };
  const deploymentRequests = i.stats.requests.total - (neighbour?.requests ?? 0);
  // While the neighbour bursts, the user's budget is full and our requests meet 429s. A burst is
  // real time (400 ms), the service's limit its own: at ×40 a burst fills 16 s of the service's
  // windows, long enough for every attempt of a request (the simulator sends no Retry-After; the
  // client's back-off waits at most 0.5 + 1 + 2 + 4 s between its DEFAULT_RETRY.maxAttempts) to
  // meet it. So each of our requests sent while the
  // neighbour bursts may be answered 429 that many times. (It was "twice over", which a CI run
  // under load exceeded by one: amer 76 of 305 requests for 75 allowed.) Beyond that, few.
  const bursting = neighbour
    ? (DEFAULT_RETRY.maxAttempts * (i.options.burstMs ?? BURSTS.burstMs)) /
      (i.options.burstEveryMs ?? BURSTS.everyMs)
    : 0;
  const share = (i.options.max429Share ?? 0.01) + bursting;
  const s = i.stats;
  const windows = i.windows.map((w) => ({
    kind: w.kind,
    fromMinutes: minutes(w.since),
    untilMinutes: w.until === null ? null : minutes(w.until),
  }));
  const waits = i.history
    .filter((e) => (e.type === 'org.waiting' || e.type === 'org.recovered') && e.detail?.org === i.org.name)
    .map((e) => ({ type: e.type, atMinutes: minutes(e.at), reason: String(e.detail?.reason ?? '') }));
  return {
    org: i.org.name,
    target: i.org.target,
    keyFrom: i.org.keyFrom,
    fleet: i.collectors.length,
    expected: i.expected,
    records: i.records.length,
    outcomes,
    reconciled: i.records.filter((r) => r.attemptLog?.some((a) => a.answer === 'unknown')).length,
    judgement: {
      mismatches: j?.mismatches.length ?? 0,
      unknowable: j?.unknowable.length ?? 0,
      doubleTasks: j?.doubleTasks.length ?? 0,
      notSettled: j?.notSettled.length ?? 0,
      missing: j?.missing.length ?? 0,
    },
    maxConcurrentTasks: s.maxConcurrentTasks,
    limit: i.options.maxInFlightPerOrg ?? i.options.maxInFlight,
    simulator: {
      requests: s.requests.total,
      tasksCreated: s.tasksCreated,
      rateLimited: s.rateLimited,
      rateLimitedBy: { ...s.rateLimitedBy },
      injectedErrors: s.injectedErrors,
      dropped: s.dropped,
      tasksByOutcome: { ...s.tasksByOutcome },
      faults: { ...s.faults },
    },
    deploymentRequests,
    rateLimitedDeployment: s.rateLimited - (neighbour?.rateLimited ?? 0),
    allowed429: 2 + Math.ceil(deploymentRequests * share),
    ...(neighbour ? { neighbour } : {}),
    faultWindows: windows,
    waits,
    misnamedWaits: neighbour || s.rateLimited > 0 ? [] : waitsForNo429(waits, windows),
    ...(finished.length ? { doneMinutes: minutes(Math.max(...finished)) } : {}),
  };
}

/**
 * Waits said to be for 429s that the service did not answer: in an organization without a
 * neighbour whose rate limit answered no 429, a wait for 429s that began outside its storm (and
 * the minute after it, for a call's last retries) names a cause that was not there.
 */
function waitsForNo429(
  waits: OrgFigures['waits'],
  windows: OrgFigures['faultWindows'],
): OrgFigures['misnamedWaits'] {
  const storms = windows.filter((w) => w.kind === 'rateLimitStorm');
  const inStorm = (at: number) =>
    storms.some((w) => at >= w.fromMinutes && (w.untilMinutes === null || at <= w.untilMinutes + 1));
  return waits.filter(
    (w) => w.type === 'org.waiting' && /^rate limited/.test(w.reason) && !inStorm(w.atMinutes),
  );
}

/** The organizations' counts summed (faults by kind too). */
export function sumCounts(list: readonly SimCounts[]): SimCounts {
  const out: SimCounts = {
    requests: 0,
    tasksCreated: 0,
    rateLimited: 0,
    rateLimitedBy: { rate: 0, concurrency: 0 },
    injectedErrors: 0,
    dropped: 0,
    tasksByOutcome: {},
    faults: {},
  };
  const add = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [k, n] of Object.entries(from)) into[k] = (into[k] ?? 0) + n;
  };
  for (const c of list) {
    out.requests += c.requests;
    out.tasksCreated += c.tasksCreated;
    out.rateLimited += c.rateLimited;
    out.rateLimitedBy.rate += c.rateLimitedBy.rate;
    out.rateLimitedBy.concurrency += c.rateLimitedBy.concurrency;
    out.injectedErrors += c.injectedErrors;
    out.dropped += c.dropped;
    add(out.tasksByOutcome, c.tasksByOutcome);
    add(out.faults, c.faults);
  }
  return out;
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}
