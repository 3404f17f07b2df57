/**
 * The records of a rollout's Collectors in Redis: one JSON value per Collector in a hash, a hash
 * of counts per state (and per wave and cohort), the policy's in-flight slots, and one index per
 * waiting state (queued in admission order, retries by next attempt, reconciling by age,
 * verifying by the time of its next look), all kept by one Lua script
 * (lua/apply-moves-14.lua) that applies moves of collector-state.ts atomically. A move that is not in
 * the transition table is refused here and logged as a defect; nothing else writes a record.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import { replies } from '../../lib/redis/pipeline-replies.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import { applyMovesKeys, type Keys } from '../keys.js';
import { policyOf } from '../rollout-id.js';
import {
  type CollectorKey,
  DEFAULT_ORG,
  keyFromMember,
  keyOf,
  memberOf,
  orgOf,
  parseCollectorKey,
} from './collector-key.js';
import type { CollectorRecord } from './collector-record.js';
import { holdsSlot, indexOf, isSettled, type StateCounts } from './collector-state.js';
import { isAllowed, type Move } from './transition.js';

/** Counts per state as stored (a hash state → n), zeros left out. */
export function parseCounts(raw: Record<string, string>): StateCounts {
  const out: Record<string, number> = {};
  for (const [state, n] of Object.entries(raw)) if (Number(n) !== 0) out[state] = Number(n);
  return out as StateCounts;
}

/** `<wave>:<state>` → n, as counts per state for each wave (0-based; missing waves empty). */
export function parseWaveCounts(raw: Record<string, string>): StateCounts[] {
  const out: Record<string, number>[] = [];
  for (const [key, n] of Object.entries(raw)) {
    const colon = key.indexOf(':');
    const wave = Number(key.slice(0, colon));
    if (!Number.isInteger(wave) || wave < 0 || wave > 10_000 || Number(n) === 0) continue;
    for (let w = out.length; w <= wave; w++) out.push({});
    (out[wave] as Record<string, number>)[key.slice(colon + 1)] = Number(n);
  }
  return out as StateCounts[];
}

type Scripted = Redis & { fuApplyMoves(...args: (string | number)[]): Promise<number[]> };

/**
 * The bands of the queue's scores that come before every ordinary place: apply-moves-14.lua gives a
 * canary (score 'c') its count of canaries plus `canaries`, a Collector below the policy's
 * minimumBuild (score 'u') its count plus `belowMinimum`. The Lua writes these numbers as literals;
 * test/integration/lib/redis-scripts.test.ts checks that they are these.
 */
export const QUEUE_SCORE_BANDS = { canaries: -1e12, belowMinimum: -2e12 } as const;

/** Queue scores of Collectors below the policy's minimumBuild lie below this (between the bands). */
const BELOW_MINIMUM_SCORES = (QUEUE_SCORE_BANDS.canaries + QUEUE_SCORE_BANDS.belowMinimum) / 2;

/**
 * The code of each index a move names (apply-moves-14.lua's `index` table maps each to its key;
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

/** What the one writer tells as it writes (the metrics of outcomes: cli/boot/metric-events.ts). */
export interface StoreListeners {
  /**
   * A Collector reached an outcome: a written move into a settled state (final, or not_alive)
   * from another state, whichever path made it (a worker's step, an admission, a gate, the
   * listings, an operator's abort). Called once per such move, after the write.
   */
  onOutcome?(rolloutId: string, record: CollectorRecord): void;
}

export class CollectorStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly logger?: Logger,
    private readonly listeners: StoreListeners = {},
  ) {
    defineScripts(redis, [{ command: 'fuApplyMoves', module: 'rollout/collector', name: 'apply-moves-14' }]);
    this.redis = redis as Scripted;
  }

  /** A Collector's record (`key`: its id in the default organization, or `<org>/<id>`). */
  async get(rolloutId: string, key: CollectorKey): Promise<CollectorRecord | undefined> {
    const raw = await this.redis.hget(this.keys.results(rolloutId), memberOf(key));
    return raw ? (JSON.parse(raw) as CollectorRecord) : undefined;
  }

  /** Several records at once, by key; missing ones are left out. */
  async getMany(
    rolloutId: string,
    keys: readonly CollectorKey[],
  ): Promise<Map<CollectorKey, CollectorRecord>> {
    const out = new Map<CollectorKey, CollectorRecord>();
    if (keys.length === 0) return out;
    const raws = await this.redis.hmget(this.keys.results(rolloutId), ...keys.map(memberOf));
    for (const raw of raws) {
      if (!raw) continue;
      const r = JSON.parse(raw) as CollectorRecord;
      out.set(keyOf(r), r);
    }
    return out;
  }

  /** Every record of a rollout, read in batches with HSCAN (reports, not the hot path). */
  async *all(rolloutId: string): AsyncGenerator<CollectorRecord> {
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(this.keys.results(rolloutId), cursor, 'COUNT', 1000);
      for (let i = 1; i < flat.length; i += 2) yield JSON.parse(flat[i] as string) as CollectorRecord;
      cursor = next;
    } while (cursor !== '0');
  }

  async counts(rolloutId: string): Promise<StateCounts> {
    return parseCounts(await this.redis.hgetall(this.keys.counts(rolloutId)));
  }

  /** Counts per state of each wave (0-based) in which Collectors were admitted. */
  async waveCounts(rolloutId: string): Promise<StateCounts[]> {
    return parseWaveCounts(await this.redis.hgetall(this.keys.waveCounts(rolloutId)));
  }

  /** Counts per state of each organization of the rollout: org → counts. */
  async orgCounts(rolloutId: string): Promise<Map<string, StateCounts>> {
    return parseGroupCounts(await this.redis.hgetall(this.keys.orgCounts(rolloutId)));
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
   * Candidates of admission, in the order they are admitted: retries due by `now` (oldest due
   * first), then queued ones in admission order (canaries, then the longest expected upgrades);
   * at most `n` of each from `offset` on, with their records.
   */
  async candidates(rolloutId: string, now: number, n: number, offset = 0): Promise<CollectorRecord[]> {
    if (n <= 0) return [];
    const values = replies(
      await this.redis
        .pipeline()
        .zrangebyscore(this.keys.retries(rolloutId), '-inf', now, 'LIMIT', offset, n)
        .zrange(this.keys.queued(rolloutId), String(offset), String(offset + n - 1))
        .exec(),
    );
    const keys = [...(values[0] as string[]), ...(values[1] as string[])].map(keyFromMember);
    const records = await this.getMany(rolloutId, keys);
    return keys.map((k) => records.get(k)).filter((r): r is CollectorRecord => r !== undefined);
  }

  /** Collectors below the policy's minimumBuild still queued (at the head of the queue: score 'u'). */
  async queuedBelowMinimum(rolloutId: string): Promise<number> {
    return this.redis.zcount(this.keys.queued(rolloutId), '-inf', String(BELOW_MINIMUM_SCORES));
  }

  /** Collectors in `verifying` whose next look is due by `now` (earliest first), at most `n`. */
  async dueVerifying(rolloutId: string, now: number, n: number): Promise<CollectorKey[]> {
    const members = await this.redis.zrangebyscore(
      this.keys.verifying(rolloutId),
      '-inf',
      now,
      'LIMIT',
      0,
      n,
    );
    return members.map(keyFromMember);
  }

  /** Counts per state of each cohort (cohort gates): cohort key → counts. */
  async cohortCounts(rolloutId: string): Promise<Map<string, StateCounts>> {
    return parseGroupCounts(await this.redis.hgetall(this.keys.cohortCounts(rolloutId)));
  }

  /** Durations learned per kind (what predicts an upgrade's length): kind → durations in ms. */
  async kindDurations(rolloutId: string): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    for (const [kind, json] of Object.entries(await this.redis.hgetall(this.keys.kindDurations(rolloutId)))) {
      try {
        const list = JSON.parse(json) as unknown;
        if (Array.isArray(list))
          out.set(
            kind,
            list.filter((n): n is number => typeof n === 'number'),
          );
      } catch {
        // An unreadable entry is learned again.
      }
    }
    return out;
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

  /** Members of an index: the Collectors of a rollout in that waiting state. */
  async indexed(
    rolloutId: string,
    index: 'queued' | 'retries' | 'reconciling' | 'verifying',
  ): Promise<CollectorKey[]> {
    const key = this.keys[index](rolloutId);
    return (await this.redis.zrange(key, '0', '-1')).map(keyFromMember);
  }

  /** Every slot of a policy: which Collector (its key, organization and id) of which rollout holds it. */
  async slotHolders(
    policy: string,
  ): Promise<{ rolloutId: string; key: CollectorKey; org: string; collectorId: number }[]> {
    return (await this.redis.smembers(this.keys.slots(policy))).map((member) => {
      const hash = member.lastIndexOf('#');
      const key = keyFromMember(member.slice(hash + 1));
      const { org, id } = parseCollectorKey(key);
      return { rolloutId: member.slice(0, hash), key, org, collectorId: id };
    });
  }
}

/** `<group>|<state>` → n, as counts per state of each group (cohorts, organizations). */
export function parseGroupCounts(raw: Record<string, string>): Map<string, StateCounts> {
  const out = new Map<string, StateCounts>();
  for (const [field, value] of Object.entries(raw)) {
    const bar = field.lastIndexOf('|');
    const n = Number(value);
    if (bar < 0 || !Number.isFinite(n) || n <= 0) continue;
    const group = field.slice(0, bar);
    const counts = out.get(group) ?? {};
    counts[field.slice(bar + 1) as keyof StateCounts] = n;
    out.set(group, counts);
  }
  return out;
}
