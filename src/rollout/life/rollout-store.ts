/**
 * Rollouts in Redis. A rollout is a policy × target build; its id is `<policy>@<build>`
 * (rollout-id.ts). A policy's current rollout is kept in one hash (policy → id), so that a
 * scheduler tick reads every current rollout, its counts and its policy's slots in two round
 * trips, whatever the number of Collectors (`readTick`).
 *
 * One write path: `write` is the only way a rollout changes after it started. One atomic step
 * (lua/write-rollout-6.lua) compares its phase or its waves' progress with what the caller read,
 * applies a typed patch (rollout-record.ts) and the phase's move (rollout-phase.ts), and records
 * the events that tell of it (rollout-events.ts) in the history and the webhooks' outbox. It
 * answers the record as Redis now holds it, so no caller keeps a copy by hand.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import {
  type CollectorKey,
  type CollectorRecord,
  memberOf,
  parseCounts,
  type StateCounts,
} from '../collector/index.js';
import { forgetRolloutKeys, type Keys } from '../keys.js';
import { policyOf, rolloutId } from '../rollout-id.js';
import { type AuditNote, auditArgs } from './audit-log.js';
import { HISTORY_LIMIT, OUTBOX_LIMIT } from './event-log.js';
import { describeEvent, type RecordedEvent, type RolloutNews } from './rollout-events.js';
import { nextPhase, type PhaseEvent, type RolloutPhase } from './rollout-phase.js';
import {
  type CohortQuarantine,
  decodeRollout,
  encodePatch,
  type RolloutCounter,
  type RolloutPatch,
  type RolloutRecord,
  type RolloutSettings,
  type WaveProgress,
} from './rollout-record.js';

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

/** One change of a rollout, written atomically with the events that tell of it. */
export interface RolloutWrite {
  /** A move of its phase from the phase the caller read (a compare-and-set on it). */
  move?: { event: PhaseEvent; reason?: string };
  /** Without a move: written only while the phase is still this one. */
  phase?: RolloutPhase;
  /** Written only while the waves' progress is still the one read (its `seq`). */
  waveSeq?: number;
  /**
   * Written only while this field is absent (`releasedAt`: an abort's policy is released once;
   * `unmatched`: a one-off's unmatched Collectors are named once).
   */
  unless?: 'releasedAt' | 'unmatched';
  /** The waves' new progress (with `waveSeq`). */
  wave?: Omit<WaveProgress, 'seq'>;
  patch?: RolloutPatch;
  add?: Partial<Record<RolloutCounter, number>>;
  /** What happened, recorded in the history and the outbox in the same step. */
  news?: readonly RolloutNews[];
  /**
   * A rollback request of this rollout (operator/rollback.ts), filed in the same step: never for
   * a rollout that is gone (a forget that won the race leaves no request behind).
   */
  rollbackRequest?: string;
}

/** What a write did: the rollout as Redis now holds it, and the events it recorded. */
export interface Written {
  rollout: RolloutRecord;
  events: RecordedEvent[];
}

/**
 * The rollout a write is about: its id, the phase it was read in (for a move), and its policy and
 * build (what its events name; by default those of its id).
 */
export type RolloutRef = Pick<RolloutRecord, 'id' | 'phase'> &
  Partial<Pick<RolloutRecord, 'policy' | 'build'>>;

/** A move's options: why (a halt's, a pause's or an abort's reason), what it writes with it, what it tells. */
export interface MoveOptions {
  reason?: string;
  patch?: RolloutPatch;
  news?: readonly RolloutNews[];
}

type Scripted = Redis & {
  fuWriteRollout(...args: (string | number)[]): Promise<string[] | 0>;
  fuHdelIf(key: string, field: string, value: string): Promise<number>;
  fuForgetRollout(...args: string[]): Promise<[string, (string | number)?]>;
  fuAddIfRollout(rollout: string, set: string, member: string): Promise<number>;
  fuRemoveOneOff(oneOffs: string, policies: string, name: string, json: string): Promise<number>;
};

/** What `forget` did: removed the rollout (with its Collectors' count), or why not. */
export type ForgetOutcome =
  | { kind: 'forgotten'; collectors: number }
  | { kind: 'gone' }
  | { kind: 'changed'; phase: string }
  | { kind: 'busy'; collectors: number }
  /** A rollback request of it is not yet taken by the scheduler (refused unless forced). */
  | { kind: 'pending' };

export class RolloutStore {
  private readonly redis: Scripted;
  /** An operator's action's audit record, carried by the first write (or forget) that succeeds. */
  private note: AuditNote | undefined;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    defineScripts(redis, [
      { command: 'fuWriteRollout', module: 'rollout/life', name: 'write-rollout-6' },
      { command: 'fuHdelIf', module: 'rollout/life', name: 'hdel-if-1' },
      { command: 'fuForgetRollout', module: 'rollout/life', name: 'forget-rollout-21' },
      { command: 'fuAddIfRollout', module: 'rollout/life', name: 'add-if-rollout-2' },
      { command: 'fuRemoveOneOff', module: 'rollout/life', name: 'remove-one-off-2' },
    ]);
    this.redis = redis as Scripted;
  }

  /**
   * This store for one operator's action: its first write (or forget) that succeeds appends
   * `note`'s audit record in the same atomic step (audit-log.ts), and marks it written.
   */
  audited(note: AuditNote): RolloutStore {
    const store = new RolloutStore(this.redis, this.keys);
    store.note = note;
    return store;
  }

  /** Marks the note written once a step that carried it succeeded. */
  private carried(done: boolean): void {
    if (done && this.note) this.note.written = true;
  }

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
    /** The one-off policies (operator/one-off-policies.ts), as stored. */
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

  /** Follows a rollout that is no longer current until its tasks of unknown id are resolved. */
  async follow(id: string, following: boolean): Promise<void> {
    // Never a rollout that is gone: a forget that won the race leaves no member behind.
    if (following) await this.redis.fuAddIfRollout(this.keys.rollout(id), this.keys.followed, id);
    else await this.redis.srem(this.keys.followed, id);
  }

  /**
   * Removes a rollout and every mention of it, in one atomic step (lua/forget-rollout-21.lua): only
   * while its phase (and a paused one's reason) is still the one read and none of its Collectors
   * is in `slotStates`. The rollout's own writes refuse a rollout that is gone, so no action that
   * comes after it brings a key of it back. A rollback request not yet taken refuses it unless
   * `force`. Its quarantined cohorts are kept under its id (`keys.forgotten`): `start` gives them
   * back to a rollout started again under the same id.
   */
  async forget(
    rollout: Pick<RolloutRecord, 'id' | 'policy' | 'phase' | 'pauseReason'>,
    slotStates: readonly string[],
    force = false,
  ): Promise<ForgetOutcome> {
    const k = this.keys;
    const id = rollout.id;
    const [kind, n] = await this.redis.fuForgetRollout(
      ...forgetRolloutKeys(k, id),
      id,
      rollout.policy,
      rollout.phase,
      rollout.phase === 'paused' ? (rollout.pauseReason ?? '') : '',
      force ? '1' : '',
      ...auditArgs(this.note).map(String),
      ...slotStates,
    );
    this.carried(kind === 'forgotten');
    if (kind === 'pending') return { kind };
    if (kind === 'forgotten') return { kind, collectors: Number(n) };
    if (kind === 'busy') return { kind, collectors: Number(n) };
    if (kind === 'changed') return { kind, phase: String(n ?? '') };
    return { kind: 'gone' };
  }

  /**
   * Makes the rollout of `policy` to `build` the policy's current one, writing it whole when it
   * does not exist yet, with `patch` and (`tell`: the scheduler's start) the `rollout.started`
   * event, all in one MULTI. Returns it, and the id of the rollout it replaced. A rollout started
   * again under the id of one that was forgotten with cohorts quarantined starts with them
   * quarantined (with a `cohort.quarantined` event each): forgetting never releases a hold.
   */
  async start(
    policy: string,
    target: string,
    build: string,
    maxInFlight: number,
    settings: RolloutSettings,
    now: number,
    options: { patch?: RolloutPatch; tell?: boolean } = {},
  ): Promise<{ rollout: RolloutRecord; replaced?: string }> {
    const id = rolloutId(policy, build);
    const key = this.keys.rollout(id);
    const [exists, previous, forgotten] = replies(
      await this.redis
        .pipeline()
        .hexists(key, 'startedAt')
        .hget(this.keys.policies, policy)
        .hget(this.keys.forgotten, id)
        .exec(),
    ) as [number, string | null, string | null];
    const replaced = previous && previous !== id ? previous : undefined;
    const held = exists !== 1 ? heldWhenForgotten(forgotten) : [];
    const multi = this.redis.multi();
    if (exists !== 1)
      multi
        .hset(key, {
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
    multi.hset(this.keys.policies, policy, id);
    // Events told before it started (a ring's wait: target-waits.ts) are its history from now on.
    multi.persist(this.keys.history(id));
    const news: RolloutNews = {
      type: 'rollout.started',
      source: 'scheduler',
      policy,
      build,
      ...(replaced ? { replaced } : {}),
    };
    const events = options.tell ? [recordedEvent({ id, policy, build }, news, now)] : [];
    let patch = options.patch ?? {};
    if (held.length) {
      patch = { ...patch, quarantined: held };
      for (const q of held)
        events.push(
          recordedEvent(
            { id, policy, build },
            {
              type: 'cohort.quarantined',
              source: 'scheduler',
              cohort: q.cohort,
              held: q.held,
              reason: q.reason,
            },
            now,
          ),
        );
      multi.hdel(this.keys.forgotten, id);
    }
    (multi as unknown as Scripted).fuWriteRollout(
      ...this.writeArgs({ id }, '', '', { patch }, events, {}, false),
    );
    const values = replies(await multi.exec());
    const fields = values[values.length - 1];
    const rollout = Array.isArray(fields) ? decodeRollout(pairs(fields)) : undefined;
    if (!rollout) throw new Error(`rollout ${id} could not be started`);
    return { rollout, ...(replaced ? { replaced } : {}) };
  }

  /**
   * Writes one change of a rollout and records its events, atomically. Returns the rollout as
   * Redis now holds it, or undefined when nothing was written: the move does not apply to the
   * phase read, the stored phase (or wave progress) changed meanwhile, or the rollout is gone.
   */
  async write(rollout: RolloutRef, change: RolloutWrite, now: number): Promise<Written | undefined> {
    let compare = '';
    let expected: string | number = '';
    let patch: RolloutPatch = { ...change.patch };
    const set: Record<string, string | number> = {};
    if (change.move) {
      const phase = nextPhase(rollout.phase, change.move.event);
      if (!phase) return undefined;
      compare = 'phase';
      expected = rollout.phase;
      set.phase = phase;
      // updatedAt is the time of the last move: retention counts from a finished rollout's.
      patch = { updatedAt: now, ...phaseFields(phase, change.move.reason ?? '', now), ...patch };
    }
    if (!change.move && change.phase) {
      compare = 'phase';
      expected = change.phase;
    }
    if (change.waveSeq !== undefined) {
      if (compare) throw new Error('a write compares the phase or the waves, not both');
      compare = 'waveSeq';
      expected = change.waveSeq;
      if (change.wave) set.wave = JSON.stringify({ ...change.wave, seq: change.waveSeq + 1 });
    }
    const events = (change.news ?? []).map((news) => recordedEvent(rollout, news, now));
    const fields = await this.redis.fuWriteRollout(
      ...this.writeArgs(rollout, compare, expected, { ...change, patch }, events, set),
    );
    const stored = Array.isArray(fields) ? decodeRollout(pairs(fields)) : undefined;
    this.carried(stored !== undefined);
    return stored ? { rollout: stored, events } : undefined;
  }

  /**
   * A move of the rollout's phase (with what the change writes and tells; see `write`): the new
   * phase, or undefined when nothing was written.
   */
  async move(
    rollout: RolloutRef,
    event: PhaseEvent,
    now: number,
    options: MoveOptions | string = {},
  ): Promise<RolloutPhase | undefined> {
    return (await this.write(rollout, moveChange(event, options), now))?.rollout.phase;
  }

  /**
   * A halted or paused rollout goes on: its failure gate counts only outcomes from now on, over
   * the rollout and per wave (the baselines are written with the move).
   */
  async resume(
    rollout: RolloutRef | string,
    counts: StateCounts,
    now: number,
    waveCounts: readonly StateCounts[] = [],
    options: MoveOptions = {},
  ): Promise<Written | undefined> {
    const ref = typeof rollout === 'string' ? await this.get(rollout) : rollout;
    if (!ref) return undefined;
    const patch: RolloutPatch = {
      gateBaseline: counts as Record<string, number>,
      waveBaseline: waveCounts as Record<string, number>[],
      ...options.patch,
    };
    return this.write(ref, moveChange('resume', { ...options, patch }), now);
  }

  /**
   * Writes the waves' progress (with the events it tells) when nobody wrote it since `expectedSeq`
   * was read: the scheduler's step and an operator's `promote` never undo each other.
   */
  setWave(
    rollout: RolloutRef | string,
    expectedSeq: number,
    next: Omit<WaveProgress, 'seq'>,
    now: number,
    news: readonly RolloutNews[] = [],
  ): Promise<Written | undefined> {
    const ref = typeof rollout === 'string' ? { id: rollout, phase: 'running' as const } : rollout;
    return this.write(ref, { waveSeq: expectedSeq, wave: next, news }, now);
  }

  private writeArgs(
    rollout: Pick<RolloutRef, 'id'>,
    compare: string,
    expected: string | number,
    change: RolloutWrite,
    events: readonly RecordedEvent[],
    extraSet: Record<string, string | number> = {},
    audit = true,
  ): (string | number)[] {
    const { set, clear } = encodePatch(change.patch ?? {});
    const toSet = Object.entries({ ...set, ...extraSet });
    const adds = Object.entries(change.add ?? {}).filter(([, n]) => n);
    return [
      this.keys.rollout(rollout.id),
      this.keys.history(rollout.id),
      this.keys.outbox,
      this.keys.rollbackRequests,
      this.keys.audit,
      this.keys.auditDropped,
      compare,
      expected,
      change.unless ?? '',
      HISTORY_LIMIT,
      OUTBOX_LIMIT,
      change.rollbackRequest ?? '',
      rollout.id,
      ...auditArgs(audit ? this.note : undefined),
      toSet.length,
      ...toSet.flat(),
      clear.length,
      ...clear,
      adds.length,
      ...(adds.flat() as (string | number)[]),
      events.length,
      ...events.flatMap((e) => [e.id, JSON.stringify(e)]),
    ];
  }

  /**
   * Files a rollback request for a rollout (operator/rollback.ts; a newer one replaces one not yet
   * taken), through the write path: false when the rollout is gone (nothing is filed).
   */
  async requestRollback(id: string, request: string): Promise<boolean> {
    return (await this.write({ id, phase: 'running' }, { rollbackRequest: request }, 0)) !== undefined;
  }

  /**
   * The one-off policy `name` (operator/one-off-policies.ts) as stored, when it has no rollout:
   * it never started. Undefined when there is no such one-off, or it has a rollout.
   */
  async unstartedOneOff(name: string): Promise<string | undefined> {
    const [json, current] = replies(
      await this.redis.pipeline().hget(this.keys.oneOffs, name).hget(this.keys.policies, name).exec(),
    ) as [string | null, string | null];
    return json !== null && current === null ? json : undefined;
  }

  /** Removes a one-off that never started, only as read and while it has no rollout: true when removed. */
  async removeUnstartedOneOff(name: string, json: string): Promise<boolean> {
    return (await this.redis.fuRemoveOneOff(this.keys.oneOffs, this.keys.policies, name, json)) === 1;
  }

  /** The rollback request of rollout `id` not yet carried out (its JSON), or undefined. */
  async rollbackRequestOf(id: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.rollbackRequests, id)) ?? undefined;
  }

  /** Whether `policy` is a one-off's (`upgrade`, a rollback), stored in Redis rather than a file. */
  async isOneOff(policy: string): Promise<boolean> {
    return (await this.redis.hexists(this.keys.oneOffs, policy)) === 1;
  }

  /** Removes a rollback request once carried out, unless a newer one replaced it meanwhile. */
  async rollbackRequestDone(id: string, request: string): Promise<void> {
    await this.redis.fuHdelIf(this.keys.rollbackRequests, id, request);
  }

  async durations(id: string): Promise<number[]> {
    return (await this.redis.lrange(this.keys.durations(id), 0, -1)).map(Number);
  }
}

/** A move as a write: its event and reason, what it writes and what it tells. */
export function moveChange(event: PhaseEvent, options: MoveOptions | string = {}): RolloutWrite {
  const o = typeof options === 'string' ? { reason: options } : options;
  return {
    move: { event, ...(o.reason === undefined ? {} : { reason: o.reason }) },
    ...(o.patch ? { patch: o.patch } : {}),
    ...(o.news ? { news: o.news } : {}),
  };
}

/** The fields a move into `phase` writes with it. */
function phaseFields(phase: RolloutPhase, reason: string, now: number): RolloutPatch {
  switch (phase) {
    case 'converged':
      return { convergedAt: now };
    case 'halted':
      return { haltReason: reason };
    case 'paused':
      return { pauseReason: reason };
    case 'aborted':
      return { abortReason: reason };
    case 'running':
      return { haltReason: null, pauseReason: null, pausedBy: null, pausedAt: null };
    case 'superseded':
      return {};
  }
}

/** An event as recorded: its sentence and detail made from its facts, with an id and a time. */
export function recordedEvent(
  rollout: Pick<RolloutRef, 'id' | 'policy' | 'build'>,
  news: RolloutNews,
  now: number,
): RecordedEvent {
  const { message, detail } = describeEvent(rollout.id, news);
  return {
    id: randomUUID(),
    type: news.type,
    rollout: rollout.id,
    policy: rollout.policy ?? policyOf(rollout.id),
    build: rollout.build ?? rollout.id.slice(rollout.id.indexOf('@') + 1),
    at: now,
    source: news.source,
    ...(news.actor === undefined ? {} : { actor: news.actor }),
    message,
    ...(detail ? { detail } : {}),
  };
}

/** HGETALL's flat reply as an object. */
function pairs(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}

/**
 * The cohorts a forgotten rollout held (lua/forget-rollout-21.lua keeps its `quarantined` field),
 * each saying where it comes from; [] when none or unreadable.
 */
function heldWhenForgotten(json: string | null): CohortQuarantine[] {
  if (!json) return [];
  try {
    const list = JSON.parse(json) as unknown;
    if (!Array.isArray(list)) return [];
    return list
      .filter((q): q is CohortQuarantine => typeof q?.cohort === 'string')
      .map((q) => ({
        ...q,
        reason: q.reason?.startsWith(KEPT) ? q.reason : `${KEPT}${q.reason ?? ''}`,
      }));
  } catch {
    return [];
  }
}

/** How a hold kept through a `forget` is named. */
const KEPT = 'kept when this rollout was forgotten and started again: ';
