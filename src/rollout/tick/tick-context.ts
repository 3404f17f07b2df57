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
import type { CollectorRecord, CollectorStore, StateCounts } from '../collector/index.js';
import type { Keys } from '../keys.js';
import type { RolloutDraft, RolloutStore } from '../life/index.js';

/** What the scheduler is given. */
export interface TickDeps {
  api: Pick<CollectorUpgradeClient, 'collectorPages' | 'listTargets'>;
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
  /** A Collector reached an outcome (the metrics count it). */
  onOutcome?(rolloutId: string, record: CollectorRecord): void;
  /** A task ended as the listings showed, after `durationMs` (estimated). */
  onTaskEnded?(state: string, durationMs: number): void;
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
  /** Median duration of each rollout's upgrades, as learned. */
  medianMs: Map<string, number>;
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
    medianMs: new Map(),
  };
}

/** A tick's context: the scheduler's dependencies, its memory and its pace. */
export interface TickContext extends TickDeps {
  memory: TickMemory;
  /** Clock ms between two scans of a rollout's listing. */
  scanEveryMs: number;
  /** Clock ms between two looks at tasks of unknown id. */
  reconcileEveryMs: number;
}

/** One rollout's pass of a tick. */
export interface RolloutPass {
  policy: Policy;
  /** The rollout as read, with what this pass changes (written once at its end). */
  draft: RolloutDraft;
  counts: StateCounts;
  /** Slots of the rollout's policy held now (by all its rollouts). */
  slotsHeld: number;
  targets: readonly BuildTarget[];
  /** Policies that come first: a Collector they select is theirs. */
  earlier: readonly Policy[];
  now: number;
}
