/**
 * The records of a rollout's Collectors in Redis: one JSON value per Collector in a hash, a hash
 * of counts per state (and per wave and cohort), the policy's in-flight slots, and one index per
 * waiting state (queued in admission order, retries by next attempt, reconciling by age,
 * verifying by the time of its next look), all kept by one Lua script
 * (lua/apply-moves.lua) that applies moves of collector-state.ts atomically. A move that is not in
 * the transition table is refused here and logged as a defect; nothing else writes a record.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import { replies } from '../../lib/redis/pipeline-replies.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import type { Keys } from '../keys.js';
import { policyOf } from '../rollout-id.js';
import type { CollectorRecord } from './collector-record.js';
import { holdsSlot, indexOf, type StateCounts } from './collector-state.js';
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

const INDEX_CODE = { queued: 'q', retries: 'r', reconciling: 'c', verifying: 'v' } as const;

export type ApplyOutcome = 'written' | 'stale' | 'no_slot' | 'refused';

export interface ApplyOptions {
  /** In-flight limit for moves that take a slot (the rollout's maxInFlight). */
  limit?: number;
  /** Rollout counters to add to, whatever becomes of the moves (the requests were made). */
  counters?: Partial<Record<'statusReads' | 'createRequests', number>>;
  /** A successful upgrade's duration (ms), recorded for the poll schedule when a move is written. */
  durationMs?: number;
  /** Discovered Collectors that go first in the admission order (a first wave's canaries). */
  canaries?: ReadonlySet<number>;
}

export class CollectorStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    private readonly logger?: Logger,
  ) {
    defineScripts(redis, [
      { command: 'fuApplyMoves', module: 'rollout/collector', name: 'apply-moves', keys: 11 },
    ]);
    this.redis = redis as Scripted;
  }

  async get(rolloutId: string, collectorId: number): Promise<CollectorRecord | undefined> {
    const raw = await this.redis.hget(this.keys.results(rolloutId), String(collectorId));
    return raw ? (JSON.parse(raw) as CollectorRecord) : undefined;
  }

  /** Several records at once; missing ones are left out. */
  async getMany(rolloutId: string, ids: readonly number[]): Promise<Map<number, CollectorRecord>> {
    const out = new Map<number, CollectorRecord>();
    if (ids.length === 0) return out;
    const raws = await this.redis.hmget(this.keys.results(rolloutId), ...ids.map(String));
    for (const raw of raws) {
      if (!raw) continue;
      const r = JSON.parse(raw) as CollectorRecord;
      out.set(r.id, r);
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

  /**
   * Applies moves atomically, each a compare-and-set on the state it was computed from. A move
   * that takes a slot is written only while fewer than `limit` slots of the policy are held.
   */
  async apply(
    rolloutId: string,
    moves: readonly Move[],
    options: ApplyOptions = {},
  ): Promise<ApplyOutcome[]> {
    const outcomes: ApplyOutcome[] = moves.map(() => 'refused');
    const args: (string | number)[] = [];
    const sent: number[] = [];
    moves.forEach((m, i) => {
      if (!isAllowed(m.from, m.event, m.next.state)) {
        this.logger?.error(
          {
            rollout: rolloutId,
            collector: m.next.id,
            from: m.from ?? null,
            event: m.event,
            to: m.next.state,
          },
          'defect: a move not in the transition table was refused',
        );
        return;
      }
      const before = m.from !== undefined && holdsSlot(m.from);
      const after = holdsSlot(m.next.state);
      const slot = before === after ? 'keep' : after ? 'take' : 'free';
      const oldIndex = m.from === undefined ? undefined : indexOf(m.from);
      const newIndex = indexOf(m.next.state);
      const canary = m.from === undefined && options.canaries?.has(m.next.id);
      const score =
        newIndex === 'retries'
          ? (m.next.nextAttemptAt ?? 0)
          : newIndex === 'reconciling'
            ? (m.next.reconcilingSince ?? 0)
            : newIndex === 'verifying'
              ? (m.next.verifyDueAt ?? 0)
              : canary
                ? 'c'
                : '';
      args.push(
        String(m.next.id),
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
      sent.push(i);
    });
    const counters = Object.entries(options.counters ?? {}).filter(([, n]) => n);
    if (sent.length === 0 && counters.length === 0) return outcomes;
    const k = this.keys;
    const policy = policyOf(rolloutId);
    const result = await this.redis.fuApplyMoves(
      k.results(rolloutId),
      k.counts(rolloutId),
      k.slots(policy),
      k.queued(rolloutId),
      k.retries(rolloutId),
      k.reconciling(rolloutId),
      k.rollout(rolloutId),
      k.durations(rolloutId),
      k.waveCounts(rolloutId),
      k.verifying(rolloutId),
      k.cohortCounts(rolloutId),
      rolloutId,
      options.limit ?? 0,
      k.slotFreedChannel,
      counters.length,
      ...counters.flat(),
      options.durationMs === undefined ? '' : Math.round(options.durationMs),
      ...args,
    );
    sent.forEach((i, j) => {
      const code = result[j];
      outcomes[i] = code === 1 ? 'written' : code === -1 ? 'no_slot' : 'stale';
    });
    return outcomes;
  }

  /** Writes the records of newly found Collectors (`queued`); returns the ids that were new. */
  async discover(
    rolloutId: string,
    records: readonly CollectorRecord[],
    canaries?: ReadonlySet<number>,
  ): Promise<number[]> {
    const outcomes = await this.apply(
      rolloutId,
      records.map((next) => ({ from: undefined, event: 'discover' as const, next })),
      canaries?.size ? { canaries } : {},
    );
    return records.filter((_, i) => outcomes[i] === 'written').map((r) => r.id);
  }

  /**
   * Candidates of admission, in the order they are admitted: retries due by `now` (oldest due
   * first), then queued ones in discovery order; at most `n` of each, with their records.
   */
  async candidates(rolloutId: string, now: number, n: number): Promise<CollectorRecord[]> {
    if (n <= 0) return [];
    const values = replies(
      await this.redis
        .pipeline()
        .zrangebyscore(this.keys.retries(rolloutId), '-inf', now, 'LIMIT', 0, n)
        .zrange(this.keys.queued(rolloutId), '0', String(n - 1))
        .exec(),
    );
    const ids = [...(values[0] as string[]), ...(values[1] as string[])].map(Number);
    const records = await this.getMany(rolloutId, ids);
    return ids.map((id) => records.get(id)).filter((r): r is CollectorRecord => r !== undefined);
  }

  /** Collectors in `verifying` whose next look is due by `now` (earliest first), at most `n`. */
  async dueVerifying(rolloutId: string, now: number, n: number): Promise<number[]> {
    const ids = await this.redis.zrangebyscore(this.keys.verifying(rolloutId), '-inf', now, 'LIMIT', 0, n);
    return ids.map(Number);
  }

  /** Counts per state of each cohort (cohort gates): cohort key → counts. */
  async cohortCounts(rolloutId: string): Promise<Map<string, StateCounts>> {
    const out = new Map<string, StateCounts>();
    for (const [field, value] of Object.entries(
      await this.redis.hgetall(this.keys.cohortCounts(rolloutId)),
    )) {
      const bar = field.lastIndexOf('|');
      const n = Number(value);
      if (bar < 0 || !Number.isFinite(n) || n <= 0) continue;
      const cohort = field.slice(0, bar);
      const counts = out.get(cohort) ?? {};
      counts[field.slice(bar + 1) as keyof StateCounts] = n;
      out.set(cohort, counts);
    }
    return out;
  }

  /** Members of an index: the Collectors of a rollout in that waiting state. */
  async indexed(
    rolloutId: string,
    index: 'queued' | 'retries' | 'reconciling' | 'verifying',
  ): Promise<number[]> {
    const key = this.keys[index](rolloutId);
    return (await this.redis.zrange(key, '0', '-1')).map(Number);
  }

  /** Every slot of a policy: which Collector of which rollout holds it. */
  async slotHolders(policy: string): Promise<{ rolloutId: string; collectorId: number }[]> {
    return (await this.redis.smembers(this.keys.slots(policy))).map((member) => {
      const hash = member.lastIndexOf('#');
      return { rolloutId: member.slice(0, hash), collectorId: Number(member.slice(hash + 1)) };
    });
  }
}
