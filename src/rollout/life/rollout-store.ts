/**
 * Rollouts in Redis: the write path (this file), what is read (rollout-reads.ts, which this store
 * extends, as BullMQ's Queue extends QueueGetters), the rollback requests not yet carried out
 * (rollback-requests.ts) and the one-offs as stored (one-off-records.ts). A rollout is a policy ×
 * target build; its id is `<policy>@<build>` (rollout-id.ts). A policy's current rollout is kept
 * in one hash (policy → id).
 *
 * One write path: `write` is the only way a rollout changes after it started. One atomic step
 * (lua/write-rollout-6.lua, its arguments made by rollout-write.ts) compares its phase or its
 * waves' progress with what the caller read, applies a typed patch (rollout-record.ts) and the
 * phase's move (rollout-phase.ts), and records the events that tell of it (rollout-events.ts) in
 * the history and the webhooks' outbox. It answers the record as Redis now holds it, so no caller
 * keeps a copy by hand.
 */
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import type { StateCounts } from '../collector/index.js';
import { forgetRolloutKeys, type Keys } from '../keys.js';
import { rolloutId } from '../rollout-id.js';
import { type AuditNote, auditArgs } from './audit-log.js';
import { heldWhenForgotten } from './forgotten-holds.js';
import { OneOffRecords } from './one-off-records.js';
import { RollbackRequests } from './rollback-requests.js';
import { decodeRollout, type RolloutPatch } from './rollout-codec.js';
import type { RolloutNews } from './rollout-events.js';
import { nextPhase, type PhaseEvent, type RolloutPhase } from './rollout-phase.js';
import { RolloutReads } from './rollout-reads.js';
import type { RolloutRecord, RolloutSettings, WaveProgress } from './rollout-record.js';
import {
  type MoveOptions,
  moveChange,
  pairs,
  phaseFields,
  type RolloutRef,
  type RolloutWrite,
  recordedEvent,
  type Written,
  writeArgs,
} from './rollout-write.js';

/** What `start` is given: the rollout of `policy` to `build`. */
export interface RolloutStart {
  policy: string;
  /** The policy's target as written (`latest`, a build). */
  target: string;
  build: string;
  maxInFlight: number;
  settings: RolloutSettings;
  now: number;
  /** Fields written with it (in the same step). */
  patch?: RolloutPatch;
  /** The scheduler's start: the `rollout.started` event is recorded with it. */
  tell?: boolean;
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

export class RolloutStore extends RolloutReads {
  protected override readonly redis: Scripted;
  /** An operator's action's audit record, carried by the first write (or forget) that succeeds. */
  private note: AuditNote | undefined;
  /** The rollback requests not yet carried out (rollback-requests.ts). */
  readonly rollbacks: RollbackRequests;
  /** The one-off policies as stored (one-off-records.ts). */
  readonly oneOffs: OneOffRecords;

  constructor(redis: Redis, keys: Keys) {
    super(redis, keys);
    defineScripts(redis, [
      { command: 'fuWriteRollout', module: 'rollout/life', name: 'write-rollout-6' },
      { command: 'fuHdelIf', module: 'rollout/life', name: 'hdel-if-1' },
      { command: 'fuForgetRollout', module: 'rollout/life', name: 'forget-rollout-22' },
      { command: 'fuAddIfRollout', module: 'rollout/life', name: 'add-if-rollout-2' },
      { command: 'fuRemoveOneOff', module: 'rollout/life', name: 'remove-one-off-2' },
    ]);
    this.redis = redis as Scripted;
    this.rollbacks = new RollbackRequests(this.redis, keys, (ref, change, now) =>
      this.write(ref, change, now),
    );
    this.oneOffs = new OneOffRecords(this.redis, keys);
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

  /** Follows a rollout that is no longer current until its tasks of unknown id are resolved. */
  async follow(id: string, following: boolean): Promise<void> {
    // Never a rollout that is gone: a forget that won the race leaves no member behind.
    if (following) await this.redis.fuAddIfRollout(this.keys.rollout(id), this.keys.followed, id);
    else await this.redis.srem(this.keys.followed, id);
  }

  /**
   * Removes a rollout and every mention of it, in one atomic step (lua/forget-rollout-22.lua): only
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
  async start(start: RolloutStart): Promise<{ rollout: RolloutRecord; replaced?: string }> {
    const { policy, target, build, maxInFlight, settings, now } = start;
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
    const events = start.tell ? [recordedEvent({ id, policy, build }, news, now)] : [];
    let patch = start.patch ?? {};
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
      ...writeArgs(this.keys, { id }, '', '', { patch }, events, {}, undefined),
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
      ...writeArgs(this.keys, rollout, compare, expected, { ...change, patch }, events, set, this.note),
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
}
