/**
 * A snapshot of every rollout for `status`, `/status` and the metrics: phase, counts per state,
 * the rollout's own in-flight count (its Collectors in slot states, not its policy's), progress,
 * the same per organization (with the build it goes to there, and why it waits when it does),
 * the Collectors each quarantined cohort holds now, every organization's problem, the daemon's own
 * problems (problems/), and the upgrade queue's job counts.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import {
  DEFAULT_ORG,
  parseCounts,
  parseGroupCounts,
  SETTLED_STATES,
  SLOT_STATES,
  type StateCounts,
  sumStates,
} from '../collector/index.js';
import type { Keys } from '../keys.js';
import { describeOrgProblem, type OrgProblem, type OrgProblemKind, parseOrgHealth } from '../orgs/index.js';
import { problemsFromReplies, type ReportedProblem, readProblemsInto } from '../problems/index.js';
import { type OneOffView, unstartedOneOffs } from './one-off-views.js';
import { type RollbackAccount, type RollbackEntryPhase, rollbackAccounts } from './rollback-account.js';
import { describePhase } from './rollout-phase.js';
import { buildOf, orgsOf, type RollbackEntry, type RolloutRecord } from './rollout-record.js';
import type { RolloutStore } from './rollout-store.js';
import { parseWaits, type TargetWait } from './target-waits.js';

/** Progress of a rollout's Collectors: counts per state, in flight, total, with an outcome. */
export interface Progress {
  counts: StateCounts;
  /** Collectors holding an in-flight slot. */
  inflight: number;
  total: number;
  /** Collectors with an outcome. */
  done: number;
}

/** One organization's part of a rollout. */
export interface OrgPartStatus extends Progress {
  org: string;
  /** The build its Collectors go to. */
  build: string;
  /** Why its part waits, when its service has a problem (`credentials refused (401) since ...`). */
  waiting?: string;
  /** The kind of that problem. */
  problem?: OrgProblemKind;
}

export interface RolloutStatus extends RolloutRecord, Progress {
  /** The phase as a person reads it, e.g. `paused (policy disabled)`. */
  phaseText: string;
  /** Each organization's part, in the rollout's order of organizations. */
  byOrg: OrgPartStatus[];
  /** Its rollbacks, each with the phase its rollout is in now (rollback-account.ts). */
  rollbacks?: (RollbackEntry & { phase?: RollbackEntryPhase })[];
  /** What became of each rollback request of it, as its rollouts stand now (rollback-account.ts). */
  rollbackAccounts?: RollbackAccount[];
  /** When its earliest Collector waiting to be tried again (offline, refused) is due: clock ms. */
  nextRetryAt?: number;
}

export interface FleetStatus {
  rollouts: RolloutStatus[];
  /** Every organization with a problem now (its part of each rollout waits). */
  orgProblems: (OrgProblem & { org: string; text: string })[];
  /** Policies whose newest build waits to start (`minAge`, the ring of `after`), and why. */
  targetWaits: TargetWait[];
  /** One-offs (`fleet-upgrade upgrade`) the daemon has not started, and why when it could not. */
  oneOffs: OneOffView[];
  /**
   * The daemon's own problems now (an invalid policy file, a target not offered, a time scale that
   * is not the simulator's), each with its reason and its fix; a stopped daemon's are gone.
   */
  daemonProblems: ReportedProblem[];
  queue: Record<string, number>;
}

function progressOf(counts: StateCounts): Progress {
  return {
    counts,
    inflight: sumStates(counts, SLOT_STATES),
    total: Object.values(counts).reduce((a, b) => a + (b ?? 0), 0),
    done: sumStates(counts, SETTLED_STATES),
  };
}

export function rolloutStatus(
  r: RolloutRecord,
  counts: StateCounts,
  orgCounts: ReadonlyMap<string, StateCounts> = new Map(),
  problems: ReadonlyMap<string, OrgProblem> = new Map(),
): RolloutStatus {
  const byOrg = orgsOf(r).map((org): OrgPartStatus => {
    const problem = problems.get(org);
    return {
      org,
      build: buildOf(r, org),
      ...progressOf(orgCounts.get(org) ?? (orgsOf(r).length === 1 && org === DEFAULT_ORG ? counts : {})),
      ...(problem ? { waiting: describeOrgProblem(org, problem), problem: problem.kind } : {}),
    };
  });
  return { ...r, ...progressOf(counts), phaseText: describePhase(r.phase, r.pauseReason), byOrg };
}

export async function readFleetStatus(deps: {
  redis: Redis;
  keys: Keys;
  rollouts: RolloutStore;
  queue?: Queue;
}): Promise<FleetStatus> {
  const list = await deps.rollouts.list();
  const pipe = deps.redis.pipeline();
  for (const r of list) pipe.hgetall(deps.keys.counts(r.id));
  for (const r of list) pipe.hgetall(deps.keys.orgCounts(r.id));
  // Rollouts with quarantined cohorts: how many of each cohort are held now.
  const held = list.filter((r) => r.quarantined?.length);
  for (const r of held) pipe.hgetall(deps.keys.cohortCounts(r.id));
  pipe.hgetall(deps.keys.orgHealth);
  readProblemsInto(pipe, deps.keys);
  pipe.hgetall(deps.keys.targetWaits).hgetall(deps.keys.oneOffs).hgetall(deps.keys.policies);
  // Each rollout's earliest retry (`status`: what a wave waits for, and until when).
  for (const r of list) pipe.zrange(deps.keys.retries(r.id), '0', '0', 'WITHSCORES');
  const values = replies(await pipe.exec());
  const n = list.length;
  held.forEach((r, i) => {
    const perCohort = values[2 * n + i] as Record<string, string>;
    r.quarantined = r.quarantined?.map((q) => ({
      ...q,
      held: Number(perCohort[`${q.cohort}|quarantined`] ?? 0),
    }));
  });
  const problems = parseOrgHealth((values[2 * n + held.length] ?? {}) as Record<string, string>);
  const daemonProblems = problemsFromReplies(
    values[2 * n + held.length + 1],
    values[2 * n + held.length + 2],
  );
  const [waits, rawOneOffs, policies] = values.slice(2 * n + held.length + 3) as (
    | Record<string, string>
    | undefined
  )[];
  const retriesAt = 2 * n + held.length + 6;
  const rollouts = list.map((r, i) => {
    const status = rolloutStatus(
      r,
      parseCounts((values[i] ?? {}) as Record<string, string>),
      parseGroupCounts((values[n + i] ?? {}) as Record<string, string>),
      problems,
    );
    const retry = (values[retriesAt + i] ?? []) as string[];
    return retry.length >= 2 ? { ...status, nextRetryAt: Number(retry[1]) } : status;
  });
  withRollbackAccounts(rollouts, rawOneOffs ?? {});
  const queue = deps.queue
    ? ((await deps.queue.getJobCounts(
        'waiting',
        'active',
        'delayed',
        'failed',
        'completed',
        'prioritized',
      )) as Record<string, number>)
    : {};
  const targetWaits = [...parseWaits(waits ?? {}).values()];
  const orgProblems = [...problems].map(([org, p]) => ({ org, ...p, text: describeOrgProblem(org, p) }));
  const oneOffs = unstartedOneOffs(rawOneOffs ?? {}, policies ?? {});
  return { rollouts, orgProblems, targetWaits, daemonProblems, oneOffs, queue };
}

/**
 * Gives each rollout with rollbacks their accounts and each entry its rollout's phase, from the
 * rollback rollouts among `rollouts` (one-offs not started yet are `waiting`).
 */
export function withRollbackAccounts(
  rollouts: RolloutStatus[],
  rawOneOffs: Readonly<Record<string, string>>,
): void {
  const byId = new Map(rollouts.map((r) => [r.id, r]));
  const waiting = (policy: string) => policy in rawOneOffs;
  for (const r of rollouts) {
    if (!r.rollbacks?.length) continue;
    const accounts = rollbackAccounts(r.rollbacks, (id) => byId.get(id), waiting);
    r.rollbackAccounts = accounts;
    const phases = new Map(accounts.flatMap((a) => a.rollouts.map((x) => [x.policy, x.phase] as const)));
    r.rollbacks = r.rollbacks.map((e) => {
      const phase = e.policy === undefined ? undefined : phases.get(e.policy);
      return phase === undefined ? e : { ...e, phase };
    });
  }
}
