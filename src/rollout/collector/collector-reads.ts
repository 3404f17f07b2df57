/**
 * What is read of a rollout's Collectors (collector-store.ts, the one writer, extends it): a
 * record or many, every record, the counts per state (and per wave, organization, cohort), the
 * candidates of admission in their order, the indexes of the waiting states, the policy's slots,
 * the durations learned per kind, the tally of outcomes.
 */
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import type { Keys } from '../keys.js';
import { type CollectorKey, keyFromMember, keyOf, memberOf, parseCollectorKey } from './collector-key.js';
import type { CollectorRecord } from './collector-record.js';
import type { StateCounts } from './collector-state.js';
import { type OutcomeTally, parseOutcomeTally } from './outcome-tally.js';

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

/**
 * The bands of the queue's scores that come before every ordinary place: apply-moves-15.lua gives a
 * canary (score 'c') its count of canaries plus `canaries`, a Collector below the policy's
 * minimumBuild (score 'u') its count plus `belowMinimum`. The Lua writes these numbers as literals;
 * test/integration/lib/redis-scripts.test.ts checks that they are these.
 */
export const QUEUE_SCORE_BANDS = { canaries: -1e12, belowMinimum: -2e12 } as const;

/** Queue scores of Collectors below the policy's minimumBuild lie below this (between the bands). */
const BELOW_MINIMUM_SCORES = (QUEUE_SCORE_BANDS.canaries + QUEUE_SCORE_BANDS.belowMinimum) / 2;

export class CollectorReads {
  constructor(
    protected readonly redis: Redis,
    protected readonly keys: Keys,
  ) {}

  /** Every rollout's tally of outcomes (outcome-tally.ts), by rollout id, in one round trip after the ids. */
  async outcomeTallies(): Promise<Map<string, OutcomeTally[]>> {
    const ids = await this.redis.zrange(this.keys.rollouts, '0', '-1');
    if (ids.length === 0) return new Map();
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.hgetall(this.keys.outcomes(id));
    const raws = replies(await pipe.exec()) as Record<string, string>[];
    return new Map(ids.map((id, i) => [id, parseOutcomeTally(raws[i] ?? {})]));
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
