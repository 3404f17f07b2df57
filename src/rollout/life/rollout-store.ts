/**
 * Rollouts in Redis. A rollout is a policy × target build; its id is `<policy>@<build>`. Its
 * phases are rollout-phase.ts's. A policy's current rollout is kept in one hash (policy → id), so
 * that a scheduler tick reads every current rollout, its counts and its policy's slots in two
 * round trips, whatever the number of Collectors (`readTick`).
 */
import type { Redis } from 'ioredis';
import { AnalysisRun } from '../../analysis/index.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import type { FailureCauses } from '../../policy/failure-causes.js';
import type { VerifySettings } from '../../policy/verify.js';
import type { LifeSettings, StateCounts } from '../collector/collector-state.js';
import type { Keys } from '../keys.js';
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
  /** Verification of successes (policy `verify`); absent: a task's success is the outcome. */
  verify?: VerifySettings;
  /** What a failed task leads to by its message's class (policy `failureCauses`); absent: `failed`. */
  causes?: FailureCauses;
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
  /** Who paused it and when (an operator), for `status`. */
  pausedBy?: string;
  pausedAt?: number;
  /** Why and by whom it was aborted. */
  abortReason?: string;
  /** An operator resumed the aborted rollout: its policy may start a newer build. */
  releasedAt?: number;
  /** The policy as it was when the rollout last took it (a changed policy releases an abort). */
  policyHash?: string;
  /** The wave in progress (0-based), and what the next one waits for. */
  wave: WaveProgress;
  /** Canaries found so far (Collectors a first wave's `select` picks). */
  canaries: number;
  /** Per-wave counts when an operator resumed: the gate judges each wave on what came after. */
  waveBaseline?: Record<string, number>[];
  /** Clock ms an upgrade is expected to take (the learned 95th percentile), for the window fit. */
  expectedMs?: number;
  /** Why nothing starts now, in words, as the scheduler last saw it ('' when nothing holds it). */
  holding?: string;
  /**
   * Clock ms between two passes over the listings that watch the tasks under way (listing-pass.ts),
   * while the scheduler watches them; then a task's job sleeps until the scheduler wakes it.
   */
  watchMs?: number;
  /** Rollbacks of this rollout's Collectors (rollback.ts): what was taken back, and what could not be. */
  rollbacks?: RollbackEntry[];
  /** This rollout takes Collectors of that rollout back to their previous builds. */
  rollbackOf?: string;
  /** Cohorts whose failure rate was significantly above the gate: their waiting Collectors are held. */
  quarantined?: CohortQuarantine[];
  /** Cohorts an operator released (`retry --only quarantined`): never quarantined again in this rollout. */
  cohortsReleased?: string[];
  /** The analysis gate of the wave that waits for it (src/analysis): its measurements so far. */
  analysisRun?: AnalysisRun;
  /** The wave (0-based) `analysisRun` belongs to. */
  analysisWave?: number;
  /** Its verdict as last judged, for `status`: `running: 2 of 5 measured`, `failed: ...`. */
  analysisVerdict?: string;
}

export interface RollbackEntry {
  /** The request it carried out (a request carried out twice after a crash adds nothing). */
  request: string;
  /** The one-off rollout's policy that takes them back (`rollback-...`), or none when the build is gone. */
  policy?: string;
  /** The build they go back to. */
  build: string;
  collectors: number;
  /** Their ids when the build is no longer offered (at most ROLLBACK_IDS_SHOWN). */
  ids?: number[];
  /** `started`, or `unavailable`: the service no longer offers the build (reported, not guessed). */
  state: 'started' | 'unavailable';
  at: number;
  by: string;
  reason: string;
}

export interface CohortQuarantine {
  cohort: string;
  /** Why, in words: failures of outcomes, the bound, the gate. */
  reason: string;
  at: number;
  /** Collectors held when it was quarantined. */
  held: number;
}

/** Where a rollout's waves stand: written by the scheduler and by `promote`, compare-and-set on `seq`. */
export interface WaveProgress {
  /** The wave in progress, 0-based. */
  index: number;
  /**
   * After the wave's last outcome: baking until `bakeUntil`, its analysis gate running (the run is
   * the rollout's `analysisRun`), or awaiting an operator's promote.
   */
  waitingFor?: 'bake' | 'analysis' | 'approval';
  bakeUntil?: number;
  /** `promote --full`: every remaining wave at once. */
  full?: boolean;
  /** Waves of the rollout's plan when the scheduler last looked (for `status` and `promote`). */
  of?: number;
  /** Times the progress was written (the compare-and-set token). */
  seq: number;
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

/** A stored analysis run, or undefined when there is none or it cannot be read (a new run starts). */
function readAnalysisRun(json: string | undefined): AnalysisRun | undefined {
  if (!json) return undefined;
  try {
    const parsed = AnalysisRun.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
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
    pausedBy: raw.pausedBy || undefined,
    pausedAt: num('pausedAt'),
    abortReason: raw.abortReason || undefined,
    releasedAt: num('releasedAt'),
    policyHash: raw.policyHash || undefined,
    wave: raw.wave ? (JSON.parse(raw.wave) as WaveProgress) : { index: 0, seq: 0 },
    canaries: num('canaries') ?? 0,
    waveBaseline: raw.waveBaseline ? (JSON.parse(raw.waveBaseline) as Record<string, number>[]) : undefined,
    expectedMs: num('expectedMs'),
    holding: raw.holding || undefined,
    watchMs: num('watchMs'),
    rollbacks: raw.rollbacks ? (JSON.parse(raw.rollbacks) as RollbackEntry[]) : undefined,
    rollbackOf: raw.rollbackOf || undefined,
    quarantined: raw.quarantined ? (JSON.parse(raw.quarantined) as CohortQuarantine[]) : undefined,
    cohortsReleased: raw.cohortsReleased ? (JSON.parse(raw.cohortsReleased) as string[]) : undefined,
    analysisRun: readAnalysisRun(raw.analysisRun),
    analysisWave: num('analysisWave'),
    analysisVerdict: raw.analysisVerdict || undefined,
  };
}

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

type PipelineReply = [Error | null, unknown][] | null;

type Scripted = Redis & {
  fuCasFields(key: string, ...args: (string | number)[]): Promise<number>;
  fuHdelIf(key: string, field: string, value: string): Promise<number>;
};

export class RolloutStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    defineScripts(redis, [
      { command: 'fuCasFields', module: 'rollout/life', name: 'cas-fields', keys: 1 },
      { command: 'fuHdelIf', module: 'rollout/life', name: 'hdel-if', keys: 1 },
    ]);
    this.redis = redis as Scripted;
  }

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
  async readTick(): Promise<{
    current: Map<string, CurrentRollout>;
    followed: CurrentRollout[];
    /** The one-off policies (one-off-policies.ts), as stored. */
    oneOffs: Record<string, string>;
    /** Rollback requests not yet taken (rollback.ts), as stored. */
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
   * Moves the rollout by `event` when its phase allows it: a compare-and-set on the phase the
   * caller read, so that an operator's command and a scheduler tick never undo each other.
   * Returns the new phase, or undefined (nothing written) when the event does not apply to the
   * phase read, or the stored phase changed meanwhile. `fields` are written with the move.
   */
  async move(
    rollout: Pick<RolloutRecord, 'id' | 'phase'>,
    event: RolloutEvent,
    now: number,
    reason = '',
    fields: Record<string, string | number> = {},
  ): Promise<RolloutPhase | undefined> {
    const phase = nextPhase(rollout.phase, event);
    if (!phase) return undefined;
    const set: Record<string, string | number> = { phase, updatedAt: now, ...fields };
    if (phase === 'converged') set.convergedAt = now;
    if (phase === 'halted') set.haltReason = reason;
    if (phase === 'paused') set.pauseReason = reason;
    if (phase === 'aborted') set.abortReason = reason;
    if (phase === 'running') {
      set.haltReason = '';
      set.pauseReason = '';
      set.pausedBy = '';
      set.pausedAt = '';
    }
    const written = await this.redis.fuCasFields(
      this.keys.rollout(rollout.id),
      'phase',
      rollout.phase,
      ...Object.entries(set).flat(),
    );
    return written === 1 ? phase : undefined;
  }

  /** Writes the waves' progress when nobody wrote it since `expectedSeq` was read. */
  async setWave(id: string, expectedSeq: number, next: Omit<WaveProgress, 'seq'>): Promise<boolean> {
    const key = this.keys.rollout(id);
    const raw = await this.redis.hget(key, 'wave');
    const current = raw ?? '';
    const seq = raw ? (JSON.parse(raw) as WaveProgress).seq : 0;
    if (seq !== expectedSeq) return false;
    const value = JSON.stringify({ ...next, seq: expectedSeq + 1 });
    return (await this.redis.fuCasFields(key, 'wave', current, 'wave', value)) === 1;
  }

  /** Writes plain fields of a rollout (timestamps, the policy's hash, baselines). */
  /** Files a rollback request for a rollout (rollback.ts); a newer one replaces one not yet taken. */
  async requestRollback(id: string, request: string): Promise<void> {
    await this.redis.hset(this.keys.rollbackRequests, id, request);
  }

  /** Removes a rollback request once carried out, unless a newer one replaced it meanwhile. */
  async rollbackRequestDone(id: string, request: string): Promise<void> {
    await this.redis.fuHdelIf(this.keys.rollbackRequests, id, request);
  }

  async setFields(id: string, fields: Record<string, string | number>): Promise<void> {
    await this.redis.hset(this.keys.rollout(id), fields);
  }

  /**
   * A halted or paused rollout goes on: its failure gate counts only outcomes from now on, over
   * the rollout and per wave. Returns whether it was resumed.
   */
  async resume(
    id: string,
    counts: StateCounts,
    now: number,
    waveCounts: StateCounts[] = [],
  ): Promise<boolean> {
    const rollout = await this.get(id);
    if (!rollout || !nextPhase(rollout.phase, 'resume')) return false;
    return (
      (await this.move(rollout, 'resume', now, '', {
        gateBaseline: JSON.stringify(counts),
        waveBaseline: JSON.stringify(waveCounts),
      })) !== undefined
    );
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
