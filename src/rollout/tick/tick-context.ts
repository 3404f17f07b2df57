/**
 * The one bundle of a scheduler tick: what the scheduler is given (`TickDeps`), what it
 * remembers between ticks (`TickMemory`), and one rollout's pass (`RolloutPass`: its draft, its
 * counts, the policy, the service's builds, the time). Every step of a tick declares the few
 * members it needs (`Pick<TickContext, ...>`), as admit.ts and cohort-gate.ts do.
 */
import type { BuildTarget, CollectorUpgradeClient } from '../../api/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { Policy } from '../../policy/schema.js';
import type { UpgradeQueue } from '../../queue/upgrade-job.js';
import type { LengthModel } from '../admit/index.js';
import { type CollectorStore, DEFAULT_ORG, type StateCounts } from '../collector/index.js';
import type { Keys } from '../keys.js';
import type { RolloutDraft, RolloutStore } from '../life/index.js';
import { type HealthMemory, newHealthMemory } from '../listings/index.js';
import type { ProblemSink, ProblemSource } from '../problems/index.js';

/** What the scheduler asks of an organization's service: its listings and its builds. */
export type OrgApi = Pick<CollectorUpgradeClient, 'collectorPages' | 'listTargets'> &
  Partial<Pick<CollectorUpgradeClient, 'inventoryPages' | 'healthEvents'>>;

/** The clients of the organizations a deployment drives. */
export interface OrgApiSet {
  readonly names: readonly string[];
  get(org: string): { client: OrgApi };
}

/** What the scheduler is given. */
export interface TickDeps {
  /** The service of every organization (the settings' `orgs`). */
  apis?: OrgApiSet;
  /** The service of a deployment of one organization (`default`), when `apis` is not given. */
  api?: OrgApi;
  /** The connection of the stores (the job repair pipelines its lookups on it). */
  redis: import('ioredis').Redis;
  keys: Keys;
  store: CollectorStore;
  rollouts: RolloutStore;
  queue: UpgradeQueue;
  clock: Clock;
  logger: Logger;
  /** Clock ms between two scans of the listing of a running rollout (default 5 minutes). */
  scanIntervalMs?: number;
  /** Real ms between two repairs of the jobs (default 15 000). */
  repairIntervalMs?: number;
  /** Clock ms after which a finished rollout is removed (operator/expire-rollouts.ts); default 30 days. */
  retentionMs?: number;
  /** A task ended as the listings showed, after `durationMs` (estimated). */
  onTaskEnded?(state: string, durationMs: number): void;
  /** Where the daemon's problems go (a target the service does not offer): `status` shows them. */
  problems?: ProblemSink & Partial<ProblemSource>;
  /**
   * Requests per clock second each organization's budget lets this deployment spend (the rate times
   * `apiBudget.share`): the noticing cadence spends what the creates leave (listings/notice-cadence.ts).
   * Default 3.2 (4/s × 0.8).
   */
  apiRatePerSecond?: number;
}

/** What the scheduler remembers between ticks (in memory: a new leader starts afresh, harmlessly). */
export interface TickMemory {
  lastScan: Map<string, number>;
  /** Rollouts whose Collectors all settled after their last scan: one more scan decides convergence. */
  idleScanned: Set<string>;
  /** Successes counted when the first status read was last learned. */
  learnedAt: Map<string, number>;
  /** Bad outcomes last reported in a `collectors.failed` event, and when. */
  failuresReported: Map<string, { bad: number; at: number }>;
  /** When each rollout's last verification pass ran (listings/verify-collectors.ts). */
  lastVerify: Map<string, number>;
  /** When each rollout's last pass watching its tasks ran (listings/listing-pass.ts). */
  lastWatch: Map<string, number>;
  /** Listing pages a pass of each rollout read (a moving average): what a pass costs. */
  pagesPerPass: Map<string, number>;
  /** When each rollout's next watching pass is worth its pages (listings/notice-cadence.ts). */
  nextWatchAt: Map<string, number>;
  /** Each rollout's creates as last counted (`n` at clock `at`) and their rate per clock second. */
  creates: Map<string, { n: number; at: number; perSecond: number }>;
  /** Median duration of each rollout's upgrades, as learned. */
  medianMs: Map<string, number>;
  /** The earliest clock time at which this round saw something due later (the next round's hint). */
  nextDueAt: number;
  /** What each rollout learned of its upgrades' lengths (learn-lengths.ts), at so many successes. */
  lengths: Map<string, { at: number; model: LengthModel; longest: boolean }>;
  /** Each organization's health events as last read (listings/read-health-view.ts). */
  health: HealthMemory;
}

export function newTickMemory(): TickMemory {
  return {
    lastScan: new Map(),
    idleScanned: new Set(),
    learnedAt: new Map(),
    failuresReported: new Map(),
    lastVerify: new Map(),
    lastWatch: new Map(),
    pagesPerPass: new Map(),
    nextWatchAt: new Map(),
    creates: new Map(),
    medianMs: new Map(),
    nextDueAt: Number.POSITIVE_INFINITY,
    lengths: new Map(),
    health: newHealthMemory(),
  };
}

/** Notes that something of a rollout is due at `at` (clock time): the next round comes by then. */
export function dueAt(memory: TickMemory, at: number | undefined): void {
  if (at !== undefined && Number.isFinite(at) && at < memory.nextDueAt) memory.nextDueAt = at;
}

/** A tick's context: the scheduler's dependencies, its memory and its pace. */
export interface TickContext extends TickDeps {
  memory: TickMemory;
  /**
   * A call of an organization failed: true when the error is the organization's (it is recorded
   * as its problem and its part waits), false when it is not (the caller decides).
   */
  orgFailed(org: string, err: unknown): Promise<boolean>;
  /** A Collector of `org` was let through as its create probe (orgs/org-health.ts). */
  probed(org: string, rolloutId: string, key: string): Promise<void>;
  /** Clock ms between two scans of a rollout's listing. */
  scanEveryMs: number;
  /** Clock ms between two looks at tasks of unknown id. */
  reconcileEveryMs: number;
}

/** An organization's part of a rollout's pass: its client and its build list. */
export interface OrgPart {
  org: string;
  api: OrgApi;
  targets: readonly BuildTarget[];
}

/** One rollout's pass of a tick. */
export interface RolloutPass {
  policy: Policy;
  /** The rollout as read, with what this pass changes (written once at its end). */
  draft: RolloutDraft;
  counts: StateCounts;
  /** Slots of the rollout's policy held now (by all its rollouts). */
  slotsHeld: number;
  /** When its earliest retry is due (clock time), when one waits. */
  nextRetryAt?: number;
  /** The organizations whose part goes on now (their service answers). */
  orgs: readonly OrgPart[];
  /** The organizations whose part waits (their service has a problem: org-health.ts). */
  waiting: ReadonlySet<string>;
  /** The organizations whose problem is probed by one create now (one of their Collectors goes). */
  probes: ReadonlySet<string>;
  /** Policies that come first: a Collector they select is theirs. */
  earlier: readonly Policy[];
  now: number;
}

/** The organizations' clients of a tick's dependencies (`api` alone is the default organization). */
export function orgApis(deps: Pick<TickDeps, 'api' | 'apis'>): OrgApiSet {
  if (deps.apis) return deps.apis;
  const api = deps.api;
  if (!api) throw new Error('the scheduler needs the service of at least one organization');
  return {
    names: [DEFAULT_ORG],
    get(org) {
      if (org !== DEFAULT_ORG) throw new Error(`no organization '${org}' (only ${DEFAULT_ORG})`);
      return { client: api };
    },
  };
}
