/**
 * Rollouts in Redis. A rollout is a policy × target build; its id is `<policy>@<build>`.
 * Phases: running → converged (every selected Collector has a final outcome and the last scan
 * found nothing new) | halted (the policy's failure gate tripped: nothing new is admitted, the
 * upgrades under way finish) | superseded (a newer `latest` started another rollout of the policy).
 * A converged rollout runs again if a later scan finds new work (a Collector came back, say).
 */
import type { Redis } from 'ioredis';
import type { Keys } from './keys.js';

export const ROLLOUT_PHASES = ['running', 'converged', 'halted', 'superseded'] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

/** What the workers need of a rollout's policy; stored with the rollout, so workers need no policy files. */
export interface RolloutSettings {
  pollInitialMs: number;
  pollMaxMs: number;
  pollJitter: number;
  taskTimeoutMs: number;
  notAliveAttempts: number;
  notAliveBackoffMs: number;
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
  /** Counts per state when an operator resumed a halted rollout: the gate judges what came after. */
  gateBaseline?: Record<string, number>;
}

export function rolloutId(policy: string, build: string): string {
  return `${policy}@${build}`;
}

/** The policy of a rollout id (policy names hold no `@`). */
export function policyOf(rolloutId: string): string {
  const at = rolloutId.indexOf('@');
  return at < 0 ? rolloutId : rolloutId.slice(0, at);
}

const MAX_DURATIONS = 500;

function parse(raw: Record<string, string>): RolloutRecord | undefined {
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
    gateBaseline: raw.gateBaseline ? (JSON.parse(raw.gateBaseline) as Record<string, number>) : undefined,
  };
}

export class RolloutStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async get(id: string): Promise<RolloutRecord | undefined> {
    return parse(await this.redis.hgetall(this.keys.rollout(id)));
  }

  /** Every rollout, newest first. */
  async list(): Promise<RolloutRecord[]> {
    const ids = await this.redis.zrevrange(this.keys.rollouts, 0, -1);
    const out: RolloutRecord[] = [];
    for (const id of ids) {
      const r = await this.get(id);
      if (r) out.push(r);
    }
    return out;
  }

  async currentOf(policy: string): Promise<string | undefined> {
    return (await this.redis.get(this.keys.policyRollout(policy))) ?? undefined;
  }

  /**
   * The rollout of `policy` to `build`, started now if it does not exist. Returns the rollout
   * and the id of the previous current rollout of the policy when this one replaced it.
   */
  async ensure(
    policy: string,
    target: string,
    build: string,
    maxInFlight: number,
    settings: RolloutSettings,
    now: number,
  ): Promise<{ rollout: RolloutRecord; replaced?: string }> {
    const id = rolloutId(policy, build);
    // One MULTI writes a new rollout whole: a crash never leaves a rollout with only some fields.
    const exists = (await this.redis.hexists(this.keys.rollout(id), 'startedAt')) === 1;
    if (!exists) {
      await this.redis
        .multi()
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
        .zadd(this.keys.rollouts, 'NX', now, id)
        .exec();
    } else {
      await this.redis.hset(this.keys.rollout(id), {
        maxInFlight,
        target,
        settings: JSON.stringify(settings),
      });
    }
    const previous = await this.redis.getset(this.keys.policyRollout(policy), id);
    const rollout = (await this.get(id)) as RolloutRecord;
    return { rollout, replaced: previous && previous !== id ? previous : undefined };
  }

  async setPhase(id: string, phase: RolloutPhase, now: number, reason = ''): Promise<void> {
    const fields: Record<string, string | number> = { phase, updatedAt: now, haltReason: reason };
    if (phase === 'converged') fields.convergedAt = now;
    await this.redis.hset(this.keys.rollout(id), fields);
  }

  /** An operator resumes a halted rollout: its failure gate counts only outcomes from now on. */
  async resume(id: string, counts: Record<string, number>, now: number): Promise<void> {
    await this.redis.hset(this.keys.rollout(id), {
      phase: 'running',
      haltReason: '',
      updatedAt: now,
      gateBaseline: JSON.stringify(counts),
    });
  }

  async noteScan(id: string, now: number): Promise<void> {
    await this.redis
      .multi()
      .hincrby(this.keys.rollout(id), 'scans', 1)
      .hset(this.keys.rollout(id), 'lastScanAt', now)
      .exec();
  }

  async countRequest(id: string, kind: 'statusReads' | 'createRequests'): Promise<void> {
    await this.redis.hincrby(this.keys.rollout(id), kind, 1);
  }

  async recordDuration(id: string, ms: number): Promise<void> {
    await this.redis
      .multi()
      .lpush(this.keys.durations(id), Math.round(ms))
      .ltrim(this.keys.durations(id), 0, MAX_DURATIONS - 1)
      .exec();
  }

  async durations(id: string): Promise<number[]> {
    return (await this.redis.lrange(this.keys.durations(id), 0, -1)).map(Number);
  }
}
