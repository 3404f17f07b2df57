/**
 * Rollouts in Redis. A rollout is a policy × target build; its id is `<policy>@<build>`. Its
 * phases are rollout-phase.ts's. A policy's current rollout is kept in one hash (policy → id), so
 * that a scheduler tick reads every current rollout, its counts and its policy's slots in two
 * round trips, whatever the number of Collectors (`readTick`).
 */
import type { Redis } from 'ioredis';
import type { LifeSettings, StateCounts } from './collector-state.js';
import type { Keys } from './keys.js';
import { nextPhase, type RolloutEvent, type RolloutPhase } from './rollout-phase.js';

export { ROLLOUT_PHASES, type RolloutPhase } from './rollout-phase.js';

/** What the workers need of a rollout's policy; stored with the rollout, so workers need no policy files. */
export interface RolloutSettings extends LifeSettings {
  pollInitialMs: number;
  pollMaxMs: number;
  pollJitter: number;
  taskTimeoutMs: number;
  /** A not_alive Collector seen alive is upgraded only until this long after the rollout began (none: always). */
  notAliveUntilMs?: number;
}

export interface RolloutRecord {
  id: string;
  policy: string;
  /** The policy's target as written: `latest` or a build. */
  target: string;
  build: string;
  phase: RolloutPhase;
  startedAt: number;
  updatedAt: number;
  convergedAt?: number;
  maxInFlight: number;
  settings: RolloutSettings;
  /** Status reads of the whole rollout. */
  statusReads: number;
  /** Create requests of the whole rollout. */
  createRequests: number;
  /** Full scans of the upgradable Collectors. */
  scans: number;
  lastScanAt?: number;
  /** Why the rollout halted. */
  haltReason?: string;
  /** Why the rollout is paused (rollout-phase.ts PAUSE_REASONS). */
  pauseReason?: string;
  /** Counts per state when an operator resumed a halted rollout: the gate judges what came after. */
  gateBaseline?: Record<string, number>;
  /** Clock ms after a task's request of its first status read, learned by the scheduler. */
  firstPollMs?: number;
}

export interface CurrentRollout {
  rollout: RolloutRecord;
  counts: StateCounts;
  /** Slots of the rollout's policy held now, by all its rollouts. */
  slotsHeld: number;
}

export function rolloutId(policy: string, build: string): string {
  return `${policy}@${build}`;
}

/** The policy of a rollout id (policy names hold no `@`). */
export function policyOf(rolloutId: string): string {
  const at = rolloutId.indexOf('@');
  return at < 0 ? rolloutId : rolloutId.slice(0, at);
}

export function parseRollout(raw: Record<string, string>): RolloutRecord | undefined {
  if (!raw.id || raw.startedAt === undefined) return undefined;
  const num = (k: string) => (raw[k] === undefined || raw[k] === '' ? undefined : Number(raw[k]));
  return {
    id: raw.id,
    policy: raw.policy ?? '',
    target: raw.target ?? '',
    build: raw.build ?? '',
    phase: (raw.phase as RolloutPhase) ?? 'running',
    startedAt: num('startedAt') ?? 0,
    updatedAt: num('updatedAt') ?? 0,
    convergedAt: num('convergedAt'),
    maxInFlight: num('maxInFlight') ?? 0,
    settings: JSON.parse(raw.settings ?? '{}') as RolloutSettings,
    statusReads: num('statusReads') ?? 0,
    createRequests: num('createRequests') ?? 0,
    scans: num('scans') ?? 0,
    lastScanAt: num('lastScanAt'),
    haltReason: raw.haltReason || undefined,
    pauseReason: raw.pauseReason || undefined,
    gateBaseline: raw.gateBaseline ? (JSON.parse(raw.gateBaseline) as Record<string, number>) : undefined,
    firstPollMs: num('firstPollMs'),
  };
}

export function parseCounts(raw: Record<string, string>): StateCounts {
  const out: Record<string, number> = {};
  for (const [state, n] of Object.entries(raw)) if (Number(n) !== 0) out[state] = Number(n);
  return out as StateCounts;
}

type PipelineReply = [Error | null, unknown][] | null;

export class RolloutStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async get(id: string): Promise<RolloutRecord | undefined> {
    return parseRollout(await this.redis.hgetall(this.keys.rollout(id)));
  }

  /** Every rollout, newest first (one round trip for the ids, one for the records). */
  async list(): Promise<RolloutRecord[]> {
    const ids = await this.redis.zrevrange(this.keys.rollouts, 0, -1);
    if (ids.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) pipe.hgetall(this.keys.rollout(id));
    return replies(await pipe.exec())
      .map((raw) => parseRollout(raw as Record<string, string>))
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
  async readTick(): Promise<{ current: Map<string, CurrentRollout>; followed: CurrentRollout[] }> {
    const [policies, followedIds] = replies(
      await this.redis.pipeline().hgetall(this.keys.policies).smembers(this.keys.followed).exec(),
    ) as [Record<string, string>, string[]];
    const currentIds = Object.values(policies);
    const read = await this.readMany([...currentIds, ...followedIds]);
    const current = new Map<string, CurrentRollout>();
    Object.keys(policies).forEach((policy, i) => {
      const r = read[i];
      if (r) current.set(policy, r);
    });
    const followed = read.slice(currentIds.length).filter((r): r is CurrentRollout => r !== undefined);
    return { current, followed };
  }

  /** The rollouts `ids` with their counts and their policy's slots held, in one round trip. */
  async readMany(ids: readonly string[]): Promise<(CurrentRollout | undefined)[]> {
    if (ids.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const id of ids) {
      pipe.hgetall(this.keys.rollout(id));
      pipe.hgetall(this.keys.counts(id));
      pipe.scard(this.keys.slots(policyOf(id)));
    }
    const values = replies(await pipe.exec());
    return ids.map((_, i) => {
      const rollout = parseRollout(values[3 * i] as Record<string, string>);
      if (!rollout) return undefined;
      const counts = parseCounts(values[3 * i + 1] as Record<string, string>);
      return { rollout, counts, slotsHeld: Number(values[3 * i + 2]) };
    });
  }

  /** Follows a rollout that is no longer current until its tasks of unknown id are resolved. */
  async follow(id: string, following: boolean): Promise<void> {
    if (following) await this.redis.sadd(this.keys.followed, id);
    else await this.redis.srem(this.keys.followed, id);
  }

  /**
   * Makes the rollout of `policy` to `build` the policy's current one, writing it whole in one
   * MULTI when it does not exist yet. Returns it, and the id of the rollout it replaced.
   */
  async start(
    policy: string,
    target: string,
    build: string,
    maxInFlight: number,
    settings: RolloutSettings,
    now: number,
  ): Promise<{ rollout: RolloutRecord; replaced?: string }> {
    const id = rolloutId(policy, build);
    const exists = (await this.redis.hexists(this.keys.rollout(id), 'startedAt')) === 1;
    const multi = this.redis.multi();
    if (!exists) {
      multi
        .hset(this.keys.rollout(id), {
          id,
          policy,
          target,
          build,
          phase: 'running',
          startedAt: now,
          updatedAt: now,
          maxInFlight,
          settings: JSON.stringify(settings),
          statusReads: 0,
          createRequests: 0,
          scans: 0,
        })
        .zadd(this.keys.rollouts, 'NX', now, id);
    }
    multi
      .hget(this.keys.policies, policy)
      .hset(this.keys.policies, policy, id)
      .hgetall(this.keys.rollout(id));
    const values = replies(await multi.exec());
    const previous = values[values.length - 3] as string | null;
    const rollout = parseRollout(values[values.length - 1] as Record<string, string>) as RolloutRecord;
    return { rollout, replaced: previous && previous !== id ? previous : undefined };
  }

  /** Takes the policy's edited limits and settings into its rollout. */
  async update(id: string, fields: { maxInFlight: number; target: string; settings: RolloutSettings }) {
    await this.redis.hset(this.keys.rollout(id), {
      maxInFlight: fields.maxInFlight,
      target: fields.target,
      settings: JSON.stringify(fields.settings),
    });
  }

  /**
   * Moves the rollout by `event` when its phase allows it. Returns the new phase, or undefined
   * (nothing written) when the event does not apply to `from`.
   */
  async move(
    rollout: Pick<RolloutRecord, 'id' | 'phase'>,
    event: RolloutEvent,
    now: number,
    reason = '',
  ): Promise<RolloutPhase | undefined> {
    const phase = nextPhase(rollout.phase, event);
    if (!phase) return undefined;
    const fields: Record<string, string | number> = { phase, updatedAt: now };
    if (phase === 'converged') fields.convergedAt = now;
    if (phase === 'halted') fields.haltReason = reason;
    if (phase === 'paused') fields.pauseReason = reason;
    if (phase === 'running') {
      fields.haltReason = '';
      fields.pauseReason = '';
    }
    await this.redis.hset(this.keys.rollout(rollout.id), fields);
    return phase;
  }

  /** An operator resumes a halted rollout: its failure gate counts only outcomes from now on. */
  async resume(id: string, counts: StateCounts, now: number): Promise<boolean> {
    const rollout = await this.get(id);
    if (!rollout || !nextPhase(rollout.phase, 'resume')) return false;
    await this.redis.hset(this.keys.rollout(id), 'gateBaseline', JSON.stringify(counts));
    return (await this.move(rollout, 'resume', now)) !== undefined;
  }

  async noteScan(id: string, now: number): Promise<void> {
    await this.redis
      .multi()
      .hincrby(this.keys.rollout(id), 'scans', 1)
      .hset(this.keys.rollout(id), 'lastScanAt', now)
      .exec();
  }

  async setFirstPoll(id: string, ms: number): Promise<void> {
    await this.redis.hset(this.keys.rollout(id), 'firstPollMs', Math.round(ms));
  }

  async durations(id: string): Promise<number[]> {
    return (await this.redis.lrange(this.keys.durations(id), 0, -1)).map(Number);
  }
}

/** The values of a pipeline's replies; the first error is thrown. */
export function replies(result: PipelineReply): unknown[] {
  return (result ?? []).map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
