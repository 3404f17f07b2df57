/**
 * What a chaos run (run-chaos.ts) is asked to do, what it measured (in all and per
 * organization), and which invariants of issues 12 and 17 the figures break.
 */
import type { UnaskedExit } from './cli-process.js';
import type { OrgsJudgement } from './judge-outcomes.js';
import type { KillEvent } from './kill-loop.js';
import type { SecretFigures } from './secret-scanner.js';

/** The neighbour's 429 bursts: one every `everyMs` real ms, `burstMs` long, unless the options say otherwise. */
export const BURSTS = { everyMs: 7000, burstMs: 400 } as const;

/** When the stormy organization's 429 storm and outage come (simulated minutes from its simulator's start). */
export interface FaultPlan {
  storm: { fromMinutes: number; forMinutes: number; ratio: number };
  outage: { fromMinutes: number; forMinutes: number; mode: 'unavailable' | 'refuse' };
}

export interface ChaosOptions {
  /** Collectors in all, split over the three organizations (chaos-orgs.ts). */
  collectors: number;
  /** SIGKILLs in all, the one of redis-server included. */
  kills: number;
  /** Simulated ms per real ms, for the simulators and the deployment. */
  timeScale: number;
  seed: number;
  /** The policy's limit across organizations. */
  maxInFlight: number;
  /** The policy's limit per organization (unset: none, maxInFlight holds in each). */
  maxInFlightPerOrg?: number;
  /** The storm and the outage of one organization. Default: faultPlan(). */
  faults?: FaultPlan;
  /** Mean real ms between two kills (each gap is drawn in [0.5, 1.5] × this). */
  meanKillGapMs: number;
  /** Longest real pause before a killed process (or Redis) is started again. Default 3000. */
  maxRestartDelayMs?: number;
  /** Real ms the rollout may take; past it the scenario stops and reports. */
  deadlineMs: number;
  workers?: number;
  /** Real ms between two 429 bursts of the neighbour, and a burst's length. Default 7000 and 400. */
  burstEveryMs?: number;
  burstMs?: number;
  /**
   * Answers 429 of an organization's own rate limit to our requests that are allowed beyond what
   * its neighbour's bursts explain, as a share of our requests there: at most 2 + (this + the
   * client's attempts per request × the share of time the neighbour bursts) × our requests.
   * Default 0.01.
   */
  max429Share?: number;
  /** Keep the folder of logs, Redis files and the policy (it is named in the figures). Default false. */
  keepFiles?: boolean;
  /** The deployment's Redis: one redis-server with its AOF (default), or Sentinel (chaos-redis.ts). */
  redis?: 'aof' | 'sentinel';
  /** A line now and then while it runs. */
  onProgress?: (line: string) => void;
}

/** The storm from minute 3 for 7 minutes (90 % of requests 429), the outage (connections reset) from minute 13 for 10. */
export function faultPlan(overrides: Partial<FaultPlan> = {}): FaultPlan {
  return {
    storm: { fromMinutes: 3, forMinutes: 7, ratio: 0.9 },
    outage: { fromMinutes: 13, forMinutes: 10, mode: 'refuse' },
    ...overrides,
  };
}

/** What one organization's simulator counted (/_sim/stats). */
export interface SimCounts {
  requests: number;
  tasksCreated: number;
  /** 429s of its own rate limit (a storm's are in `faults`). */
  rateLimited: number;
  rateLimitedBy: { rate: number; concurrency: number };
  injectedErrors: number;
  dropped: number;
  tasksByOutcome: Record<string, number>;
  /** Requests refused or altered by a fault of the organization, by kind. */
  faults: Record<string, number>;
}

export interface OrgFigures {
  org: string;
  /** Its latest build, the rollout's target there. */
  target: string;
  keyFrom: 'file' | 'env';
  fleet: number;
  expected: number;
  records: number;
  outcomes: Record<string, number>;
  reconciled: number;
  judgement: {
    mismatches: number;
    unknowable: number;
    doubleTasks: number;
    notSettled: number;
    missing: number;
  };
  /** Its simulator's own count of the most unfinished tasks at once. */
  maxConcurrentTasks: number;
  /** The limit that holds in it: maxInFlightPerOrg, else maxInFlight. */
  limit: number;
  simulator: SimCounts;
  /** Our requests there (the simulator's minus the neighbour's), and its rate limit's 429s among their answers. */
  deploymentRequests: number;
  rateLimitedDeployment: number;
  /** The most of those 429s allowed (ChaosOptions.max429Share). */
  allowed429: number;
  neighbour?: { bursts: number; requests: number; rateLimited: number };
  /** Its faults of the whole organization; simulated minutes from the rollout's start. */
  faultWindows: { kind: string; fromMinutes: number; untilMinutes: number | null }[];
  /** The rollout's org.waiting / org.recovered events for it; simulated minutes from the rollout's start. */
  waits: { type: string; atMinutes: number; reason: string }[];
  /**
   * Its waits said to be for 429s when the service answered none (no neighbour, no 429 of its
   * rate limit, outside its storm): a cause named that was not there.
   */
  misnamedWaits: { type: string; atMinutes: number; reason: string }[];
  /** Simulated minutes from the rollout's start until its last Collector had an outcome. */
  doneMinutes?: number;
}

export interface ChaosFigures {
  options: Omit<ChaosOptions, 'onProgress'>;
  /** The Redis in words: topology and appendfsync. */
  appendFsync: string;
  /** Sentinel: real ms of the failover (kill until the replica served as primary). */
  failoverMs?: number[];
  converged: boolean;
  /** Collectors in the simulators' fleets, and those the rollout took (not on their build, installed). */
  fleet: number;
  expected: number;
  records: number;
  outcomes: Record<string, number>;
  /**
   * fleet_upgrade_results_total by outcome, summed over every process's /metrics after the kills
   * (every process up again): the tally the store kept in Redis, exported by the leading `run`.
   */
  resultsMetric: Record<string, number>;
  /** Collectors whose create went unanswered (dropped, killed) and the listings resolved. */
  reconciled: number;
  /** Every organization's records judged against its simulator (entries carry the organization). */
  judgement: OrgsJudgement;
  /** The most tasks unfinished at once across the organizations (their tasks' times on the shared clock). */
  peakTasks: number;
  /** The three simulators' counts summed. */
  simulator: SimCounts;
  rateLimitedDeployment: number;
  neighbour: { bursts: number; requests: number; rateLimited: number };
  orgs: OrgFigures[];
  kills: KillEvent[];
  processKills: number;
  redisKills: number;
  /** Exits nobody asked for (each was followed by a start, as a supervisor would). */
  unaskedExits: UnaskedExit[];
  starts: Record<string, number>;
  reportRows: number;
  secret: SecretFigures;
  /** Real ms from the first process's start to convergence, and of the whole scenario. */
  rolloutMs: number;
  wallMs: number;
  /** Simulated minutes from the first process's start to convergence. */
  simulatedMinutes: number;
  /** The folder kept (keepFiles, or when a check failed). */
  files?: string;
}

/** Every invariant of issues 12 and 17 that the figures break, as sentences (empty: all hold). */
export function chaosViolations(f: ChaosFigures): string[] {
  const v: string[] = [];
  const j = f.judgement;
  const ids = (list: readonly { org: string; id: number }[]) =>
    list
      .slice(0, 20)
      .map((x) => `${x.org}/${x.id}`)
      .join(', ');
  if (!f.converged) v.push('the rollout did not converge before the deadline');
  if (j.missing.length) v.push(`${j.missing.length} Collector(s) without a record: ${ids(j.missing)}`);
  if (j.notSettled.length)
    v.push(`${j.notSettled.length} Collector(s) without an outcome: ${ids(j.notSettled)}`);
  if (j.mismatches.length)
    v.push(`${j.mismatches.length} outcome(s) differ from the simulator's truth: ${ids(j.mismatches)}`);
  if (j.doubleTasks.length)
    v.push(`${j.doubleTasks.length} Collector(s) with more than one task: ${ids(j.doubleTasks)}`);
  if (f.peakTasks > f.options.maxInFlight)
    v.push(
      `${f.peakTasks} tasks were unfinished at once across the organizations, above maxInFlight ${f.options.maxInFlight}`,
    );
  for (const o of f.orgs) {
    if (o.maxConcurrentTasks > o.limit)
      v.push(
        `the simulator of ${o.org} saw ${o.maxConcurrentTasks} tasks at once, above its limit ${o.limit}`,
      );
    if (o.rateLimitedDeployment > o.allowed429)
      v.push(
        `${o.org} answered ${o.rateLimitedDeployment} of our ${o.deploymentRequests} requests 429 by its rate limit, above ${o.allowed429}`,
      );
    for (const w of o.faultWindows)
      if (w.fromMinutes < 0 || w.untilMinutes === null || w.untilMinutes > f.simulatedMinutes)
        v.push(`the ${w.kind} of ${o.org} was not within the rollout (${JSON.stringify(w)})`);
    for (const w of o.misnamedWaits)
      v.push(
        `${o.org} waited for "${w.reason}" at minute ${w.atMinutes}, but its service answered no 429 then (outside its storm, no neighbour)`,
      );
    for (const kind of new Set(o.faultWindows.map((w) => w.kind)))
      if (!o.simulator.faults[kind])
        v.push(`the ${kind} of ${o.org} refused or altered none of our requests`);
  }
  v.push(...resultsMetricViolations(f.resultsMetric, f.outcomes));
  if (f.secret.hits.length) v.push(`an access key was found ${f.secret.hits.length} time(s)`);
  if (f.reportRows !== f.records) v.push(`report shows ${f.reportRows} Collectors, Redis holds ${f.records}`);
  // Issue 25: no process dies of what Redis or the service does; only the scenario's SIGKILLs end one.
  for (const e of f.unaskedExits)
    v.push(`${e.name} (incarnation ${e.incarnation}) exited ${e.code ?? e.signal} without being asked`);
  return v;
}

/**
 * Where fleet_upgrade_results_total does not sum to the records' outcomes: each final state
 * reached once (no operator retries here), and not_alive at least as often as Collectors rest in
 * it (one seen alive again counts its not_alive and its later outcome).
 */
export function resultsMetricViolations(
  metric: Readonly<Record<string, number>>,
  records: Readonly<Record<string, number>>,
): string[] {
  const v: string[] = [];
  for (const state of new Set([...Object.keys(metric), ...Object.keys(records)])) {
    const told = metric[state] ?? 0;
    const held = records[state] ?? 0;
    if (state === 'not_alive' ? told < held : told !== held)
      v.push(
        `fleet_upgrade_results_total{outcome="${state}"} is ${told}, but ${held} record(s) are ${state}`,
      );
  }
  return v;
}
