/**
 * What a chaos run (run-chaos.ts) is asked to do, what it measured, and which invariants of
 * issue 12 the figures break.
 */
import type { UnaskedExit } from './cli-process.js';
import type { Judgement } from './judge-outcomes.js';
import type { KillEvent } from './kill-loop.js';
import type { SecretFigures } from './secret-scanner.js';

export interface ChaosOptions {
  /** Collectors in the simulated fleet. */
  collectors: number;
  /** SIGKILLs in all, the one of redis-server included. */
  kills: number;
  /** Simulated ms per real ms, for the simulator and the deployment. */
  timeScale: number;
  seed: number;
  maxInFlight: number;
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
  /** Keep the folder of logs, Redis files and the policy (it is named in the figures). Default false. */
  keepFiles?: boolean;
  /** A line now and then while it runs. */
  onProgress?: (line: string) => void;
}

export interface ChaosFigures {
  options: Omit<ChaosOptions, 'onProgress'>;
  appendFsync: string;
  converged: boolean;
  /** Collectors in the simulator's fleet, and those the rollout took (not on the build, installed). */
  fleet: number;
  expected: number;
  records: number;
  outcomes: Record<string, number>;
  /** Collectors whose create went unanswered (dropped, killed) and the listings resolved. */
  reconciled: number;
  judgement: Judgement;
  maxConcurrentTasks: number;
  simulator: {
    requests: number;
    tasksCreated: number;
    rateLimited: number;
    injectedErrors: number;
    dropped: number;
    tasksByOutcome: Record<string, number>;
  };
  /** 429s the deployment got: the simulator's total minus the neighbour's. */
  rateLimitedDeployment: number;
  neighbour: { bursts: number; requests: number; rateLimited: number };
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

/** Every invariant of issue 12 that the figures break, as sentences (empty: all hold). */
export function chaosViolations(f: ChaosFigures): string[] {
  const v: string[] = [];
  const j = f.judgement;
  if (!f.converged) v.push('the rollout did not converge before the deadline');
  if (j.missing.length)
    v.push(`${j.missing.length} Collector(s) without a record: ${j.missing.slice(0, 20)}`);
  if (j.notSettled.length) v.push(`${j.notSettled.length} Collector(s) without an outcome`);
  if (j.mismatches.length) v.push(`${j.mismatches.length} outcome(s) differ from the simulator's truth`);
  if (j.doubleTasks.length) v.push(`${j.doubleTasks.length} Collector(s) with more than one task`);
  if (f.maxConcurrentTasks > f.options.maxInFlight)
    v.push(
      `the simulator saw ${f.maxConcurrentTasks} tasks at once, above maxInFlight ${f.options.maxInFlight}`,
    );
  if (f.secret.hits.length) v.push(`the access key was found ${f.secret.hits.length} time(s)`);
  if (f.reportRows !== f.records) v.push(`report shows ${f.reportRows} Collectors, Redis holds ${f.records}`);
  return v;
}
