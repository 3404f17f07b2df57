/**
 * What the rollouts' store reads (rollout-store.ts extends it): a rollout, every rollout, every
 * policy's current one, what a scheduler tick reads in two round trips whatever the number of
 * Collectors (`readTick`: the current rollouts with their counts and slots, those still followed,
 * the one-offs and rollback requests as stored), and what a worker step reads in one.
 */
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import {
  type CollectorKey,
  type CollectorRecord,
  memberOf,
  parseCounts,
  type StateCounts,
} from '../collector/index.js';
import type { Keys } from '../keys.js';
import { policyOf } from '../rollout-id.js';
import { decodeRollout } from './rollout-codec.js';
import type { RolloutRecord } from './rollout-record.js';

export interface CurrentRollout {
  rollout: RolloutRecord;
  counts: StateCounts;
  /** Slots of the rollout's policy held now, by all its rollouts. */
  slotsHeld: number;
  /** When its earliest retry is due (clock time), when one waits. */
  nextRetryAt?: number;
}

/** What a worker step needs, read in one round trip. */
export interface StepView {
  record: CollectorRecord | undefined;
  rollout:
    | Pick<RolloutRecord, 'id' | 'phase' | 'build' | 'maxInFlight' | 'settings' | 'firstPollMs' | 'watchMs'>
    | undefined;
}

export class RolloutReads {
  constructor(
    protected readonly redis: Redis,
    protected readonly keys: Keys,
  ) {}

  async get(id: string): Promise<RolloutRecord | undefined> {
    return decodeRollout(await this.redis.hgetall(this.keys.rollout(id)));
  }

  /** Every rollout, newest first (one round trip for the ids, one for the records). */
  async list(): Promise<RolloutRecord[]> {
    const ids = await this.redis.zrevrange(this.keys.rollouts, 0, -1);
    if (ids.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.hgetall(this.keys.rollout(id));
    return replies(await pipe.exec())
      .map((raw) => decodeRollout(raw as Record<string, string>))
      .filter((r): r is RolloutRecord => r !== undefined);
  }

  /** The ids of every policy's current rollout. */
  async currentIds(): Promise<Map<string, string>> {
    return new Map(Object.entries(await this.redis.hgetall(this.keys.policies)));
  }

  async currentOf(policy: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.policies, policy)) ?? undefined;
  }

  /** Every policy's current rollout with its counts and its policy's slots held. */
  async readCurrent(): Promise<Map<string, CurrentRollout>> {
    return (await this.readTick()).current;
  }

  /**
   * What a scheduler tick reads, in two round trips: every policy's current rollout, and the
   * rollouts it still follows (superseded ones with tasks of unknown id), each with its counts.
   */
  async readTick(): Promise<{
    current: Map<string, CurrentRollout>;
    followed: CurrentRollout[];
    /** The one-off policies (one-off/one-off-policies.ts), as stored. */
    oneOffs: Record<string, string>;
    /** Rollback requests not yet taken (operator/rollback.ts), as stored. */
    rollbackRequests: Record<string, string>;
  }> {
    const [policies, followedIds, oneOffs, rollbackRequests] = replies(
      await this.redis
        .pipeline()
        .hgetall(this.keys.policies)
        .smembers(this.keys.followed)
        .hgetall(this.keys.oneOffs)
        .hgetall(this.keys.rollbackRequests)
        .exec(),
    ) as [Record<string, string>, string[], Record<string, string>, Record<string, string>];
    const currentIds = Object.values(policies);
    const read = await this.readMany([...currentIds, ...followedIds]);
    const current = new Map<string, CurrentRollout>();
    Object.keys(policies).forEach((policy, i) => {
      const r = read[i];
      if (r) current.set(policy, r);
    });
    const followed = read.slice(currentIds.length).filter((r): r is CurrentRollout => r !== undefined);
    return { current, followed, oneOffs, rollbackRequests };
  }

  /** The rollouts `ids` with their counts and their policy's slots held, in one round trip. */
  async readMany(ids: readonly string[]): Promise<(CurrentRollout | undefined)[]> {
    if (ids.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) {
      pipe.hgetall(this.keys.rollout(id));
      pipe.hgetall(this.keys.counts(id));
      pipe.scard(this.keys.slots(policyOf(id)));
      pipe.zrange(this.keys.retries(id), '0', '0', 'WITHSCORES');
    }
    const values = replies(await pipe.exec());
    return ids.map((_, i) => {
      const rollout = decodeRollout(values[4 * i] as Record<string, string>);
      if (!rollout) return undefined;
      const counts = parseCounts(values[4 * i + 1] as Record<string, string>);
      const retry = values[4 * i + 3] as string[];
      return {
        rollout,
        counts,
        slotsHeld: Number(values[4 * i + 2]),
        ...(retry.length >= 2 ? { nextRetryAt: Number(retry[1]) } : {}),
      };
    });
  }

  /** The record and the rollout fields a worker step needs, in one round trip. */
  async loadStep(id: string, key: CollectorKey): Promise<StepView> {
    const fields = ['id', 'phase', 'build', 'maxInFlight', 'settings', 'firstPollMs', 'startedAt', 'watchMs'];
    const values = replies(
      await this.redis
        .pipeline()
        .hget(this.keys.results(id), memberOf(key))
        .hmget(this.keys.rollout(id), ...fields)
        .exec(),
    );
    const raw = values[0] as string | null;
    const got = values[1] as (string | null)[];
    const rollout = decodeRollout(
      Object.fromEntries(fields.flatMap((f, i) => (got[i] === null ? [] : [[f, got[i] as string]]))),
    );
    return { record: raw ? (JSON.parse(raw) as CollectorRecord) : undefined, rollout };
  }

  /**
   * Whether the rollout watches its tasks now (`watchMs`), read alone: a job chooses its first
   * status read after its create, which may have waited for the API budget while the scheduler
   * began watching.
   */
  async watchMs(id: string): Promise<number | undefined> {
    const raw = await this.redis.hget(this.keys.rollout(id), 'watchMs');
    const ms = raw === null ? Number.NaN : Number(raw);
    return Number.isFinite(ms) ? ms : undefined;
  }

  async durations(id: string): Promise<number[]> {
    return (await this.redis.lrange(this.keys.durations(id), 0, -1)).map(Number);
  }
}
