/**
 * The one writer of a rollout's Collectors (what is read is collector-reads.ts's, which this store
 * extends, as BullMQ's Queue extends QueueGetters). The records of a rollout's Collectors in
 * Redis: one JSON value per Collector in a hash, a hash of counts per state (and per wave and cohort), the policy's in-flight slots, and one index per
 * waiting state (queued in admission order, retries by next attempt, reconciling by age,
 * verifying by the time of its next look), all kept by one Lua script
 * (lua/apply-moves-15.lua) that applies moves of collector-state.ts atomically. A move that is not in
 * the transition table is refused here and logged as a defect; nothing else writes a record.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import { applyMovesKeys, type Keys } from '../keys.js';
import { policyOf } from '../rollout-id.js';
import { type CollectorKey, DEFAULT_ORG, keyFromMember, keyOf, memberOf, orgOf } from './collector-key.js';
import { CollectorReads } from './collector-reads.js';
import type { CollectorRecord } from './collector-record.js';
import { holdsSlot, indexOf, isSettled } from './collector-state.js';
import { tallyOf } from './outcome-tally.js';
import type { Move } from './transition.js';
import { isAllowed } from './transition-table.js';

type Scripted = Redis & { fuApplyMoves(...args: (string | number)[]): Promise<number[]> };

/**
 * The code of each index a move names (apply-moves-15.lua's `index` table maps each to its key;
 * test/integration/lib/redis-scripts.test.ts checks that it is the key of that name).
 */
export const INDEX_CODE = { queued: 'q', retries: 'r', reconciling: 'c', verifying: 'v' } as const;

export type ApplyOutcome = 'written' | 'stale' | 'no_slot' | 'refused';

export interface ApplyOptions {
  /** In-flight limit for moves that take a slot (the rollout's maxInFlight, over its organizations). */
  limit?: number;
  /** In-flight limit per organization for moves that take a slot (the policy's maxInFlightPerOrg). */
  orgLimit?: number;
  /** Rollout counters to add to, whatever becomes of the moves (the requests were made). */
  counters?: Partial<Record<'statusReads' | 'createRequests', number>>;
  /** A successful upgrade's duration (ms), recorded for the poll schedule when a move is written. */
  durationMs?: number;
  /** Discovered Collectors that go first in the admission order (a first wave's canaries). */
  canaries?: ReadonlySet<CollectorKey>;
  /** A counter of the rollout increased by the moves written (`knownIssueSkipped`, `knownIssueManual`, `healthUnhealthy`). */
  countWritten?: 'knownIssueSkipped' | 'knownIssueManual' | 'healthUnhealthy';
  /**
   * The admission order's base of a Collector that goes to `queued` (its expected length in whole
   * seconds, negated: the longest first); without it, the order of discovery.
   */
  queueBase?: (record: CollectorRecord) => number | undefined;
}

/**
 * What the one writer tells, in this process, as it writes. (The metrics of outcomes do not need
 * it: the tally they export is kept in Redis by the very step that writes a move, outcome-tally.ts,
 * so that no process's death loses one.)
 */
export interface StoreListeners {
  /**
   * A Collector reached an outcome: a written move into a settled state (final, or not_alive)
   * from another state, whichever path made it (a worker's step, an admission, a gate, the
   * listings, an operator's abort). Called once per such move, after the write.
   */
  onOutcome?(rolloutId: string, record: CollectorRecord): void;
}

export class CollectorStore extends CollectorReads {
  protected override readonly redis: Scripted;

  constructor(
    redis: Redis,
    keys: Keys,
    private readonly logger?: Logger,
    private readonly listeners: StoreListeners = {},
  ) {
    super(redis, keys);
    defineScripts(redis, [{ command: 'fuApplyMoves', module: 'rollout/collector', name: 'apply-moves-15' }]);
    this.redis = redis as Scripted;
  }

  /**
   * Applies moves atomically, each a compare-and-set on the state it was computed from. A move
   * that takes a slot is written only while fewer than `limit` slots of the policy are held (and,
   * with `orgLimit`, fewer than that of its organization). Moves of several organizations are
   * applied one organization at a time (each script touches its organization's keys).
   */
  async apply(
    rolloutId: string,
    moves: readonly Move[],
    options: ApplyOptions = {},
  ): Promise<ApplyOutcome[]> {
    const outcomes: ApplyOutcome[] = moves.map(() => 'refused');
    const byOrg = new Map<string, number[]>();
    moves.forEach((m, i) => {
      if (!isAllowed(m.from, m.event, m.next.state)) {
        this.logger?.error(
          {
            rollout: rolloutId,
            collector: m.next.id,
            org: orgOf(m.next),
            from: m.from ?? null,
            event: m.event,
            to: m.next.state,
          },
          'defect: a move not in the transition table was refused',
        );
        return;
      }
      const org = orgOf(m.next);
      byOrg.set(org, [...(byOrg.get(org) ?? []), i]);
    });
    const counters = Object.entries(options.counters ?? {}).filter(([, n]) => n);
    if (byOrg.size === 0 && counters.length > 0) byOrg.set(DEFAULT_ORG, []);
    let first = true;
    for (const [org, indices] of byOrg) {
      const result = await this.applyOrg(
        rolloutId,
        org,
        indices.map((i) => moves[i] as Move),
        {
          ...options,
          // Counters and a duration are added once, with the first organization's moves.
          ...(first ? {} : { counters: {}, durationMs: undefined }),
        },
      );
      first = false;
      indices.forEach((i, j) => {
        const code = result[j];
        outcomes[i] = code === 1 ? 'written' : code === -1 ? 'no_slot' : 'stale';
      });
    }
    const told = this.listeners.onOutcome;
    if (told)
      moves.forEach((m, i) => {
        if (outcomes[i] === 'written' && m.from !== m.next.state && isSettled(m.next.state))
          told(rolloutId, m.next);
      });
    return outcomes;
  }

  private async applyOrg(
    rolloutId: string,
    org: string,
    moves: readonly Move[],
    options: ApplyOptions,
  ): Promise<number[]> {
    const args: (string | number)[] = [];
    for (const m of moves) {
      const before = m.from !== undefined && holdsSlot(m.from);
      const after = holdsSlot(m.next.state);
      const slot = before === after ? 'keep' : after ? 'take' : 'free';
      const oldIndex = m.from === undefined ? undefined : indexOf(m.from);
      const newIndex = indexOf(m.next.state);
      const canary = m.from === undefined && options.canaries?.has(keyOf(m.next));
      // Below the policy's minimumBuild: before the canaries even (a wave of their own).
      const urgent = m.from === undefined && m.next.belowMinimum === true;
      // A move that stays queued (retarget) keeps the Collector's place in the admission order.
      const keep = newIndex === 'queued' && oldIndex === 'queued';
      const score = keep
        ? 'k'
        : newIndex === 'retries'
          ? (m.next.nextAttemptAt ?? 0)
          : newIndex === 'reconciling'
            ? (m.next.reconcilingSince ?? 0)
            : newIndex === 'verifying'
              ? (m.next.verifyDueAt ?? 0)
              : urgent
                ? 'u'
                : canary
                  ? 'c'
                  : newIndex === 'queued' && options.queueBase?.(m.next) !== undefined
                    ? `p${options.queueBase(m.next)}`
                    : '';
      args.push(
        memberOf(keyOf(m.next)),
        m.from ?? '',
        m.next.state,
        JSON.stringify(m.next),
        slot,
        oldIndex ? INDEX_CODE[oldIndex] : '',
        newIndex ? INDEX_CODE[newIndex] : '',
        score,
        m.next.wave === undefined ? '' : m.next.wave,
        m.next.cohort ?? '',
        ...tallyOf(m),
      );
    }
    const counters = Object.entries(options.counters ?? {}).filter(([, n]) => n);
    if (moves.length === 0 && counters.length === 0) return [];
    const k = this.keys;
    const policy = policyOf(rolloutId);
    return this.redis.fuApplyMoves(
      ...applyMovesKeys(k, rolloutId, policy, org),
      rolloutId,
      options.limit ?? 0,
      options.orgLimit ?? 0,
      org,
      k.slotFreedChannel,
      counters.length,
      ...counters.flat(),
      options.durationMs === undefined ? '' : Math.round(options.durationMs),
      options.countWritten ?? '',
      ...args,
    );
  }

  /** Writes the records of newly found Collectors (`queued`); returns the keys of those that were new. */
  async discover(
    rolloutId: string,
    records: readonly CollectorRecord[],
    canaries?: ReadonlySet<CollectorKey>,
    queueBase?: ApplyOptions['queueBase'],
  ): Promise<CollectorKey[]> {
    const outcomes = await this.apply(
      rolloutId,
      records.map((next) => ({ from: undefined, event: 'discover' as const, next })),
      { ...(canaries?.size ? { canaries } : {}), ...(queueBase ? { queueBase } : {}) },
    );
    return records.filter((_, i) => outcomes[i] === 'written').map(keyOf);
  }

  /**
   * Gives the queued Collectors a new place by `base` (their expected length: the longest first),
   * keeping the order of discovery among equals; canaries keep theirs. Returns how many moved.
   */
  async reorderQueued(
    rolloutId: string,
    base: (record: CollectorRecord) => number,
    batch = 1000,
  ): Promise<number> {
    const key = this.keys.queued(rolloutId);
    const flat = await this.redis.zrange(key, '0', '-1', 'WITHSCORES');
    let moved = 0;
    for (let i = 0; i < flat.length; i += 2 * batch) {
      const part = flat.slice(i, i + 2 * batch);
      const members: string[] = [];
      const scores: number[] = [];
      for (let j = 0; j < part.length; j += 2) {
        const score = Number(part[j + 1]);
        if (score < -1e11) continue; // a canary
        members.push(part[j] as string);
        scores.push(score);
      }
      if (members.length === 0) continue;
      const records = await this.getMany(rolloutId, members.map(keyFromMember));
      const pipe = this.redis.pipeline();
      members.forEach((member, j) => {
        const r = records.get(keyFromMember(member));
        if (!r) return;
        const old = scores[j] as number;
        const next = base(r) + (old - Math.floor(old));
        if (next !== old) {
          pipe.zadd(key, 'XX', next, member);
          moved++;
        }
      });
      await pipe.exec();
    }
    return moved;
  }
}
