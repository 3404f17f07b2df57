/**
 * The one write path of a rollout, as its arguments: what a change is (`RolloutWrite`: a phase
 * move or a compare on the phase or the waves, a typed patch, counters, the events that tell of
 * it), what it answers (`Written`), and the KEYS and ARGV of lua/write-rollout-6.lua that carry
 * it, with the events recorded (their sentences made here) and an operator's audit record.
 */
import { randomUUID } from 'node:crypto';
import type { Keys } from '../keys.js';
import { policyOf } from '../rollout-id.js';
import { type AuditNote, auditArgs } from './audit-log.js';
import { describeEvent } from './describe-event.js';
import { HISTORY_LIMIT, OUTBOX_LIMIT } from './event-log.js';
import { encodePatch, type RolloutCounter, type RolloutPatch } from './rollout-codec.js';
import type { RecordedEvent, RolloutNews } from './rollout-events.js';
import type { PhaseEvent, RolloutPhase } from './rollout-phase.js';
import type { RolloutRecord, WaveProgress } from './rollout-record.js';

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

export function writeArgs(
  keys: Keys,
  rollout: Pick<RolloutRef, 'id'>,
  compare: string,
  expected: string | number,
  change: RolloutWrite,
  events: readonly RecordedEvent[],
  extraSet: Record<string, string | number> = {},
  /** An operator's action's audit record, appended in the same step. */
  note: AuditNote | undefined,
): (string | number)[] {
  const { set, clear } = encodePatch(change.patch ?? {});
  const toSet = Object.entries({ ...set, ...extraSet });
  const adds = Object.entries(change.add ?? {}).filter(([, n]) => n);
  return [
    keys.rollout(rollout.id),
    keys.history(rollout.id),
    keys.outbox,
    keys.rollbackRequests,
    keys.audit,
    keys.auditDropped,
    compare,
    expected,
    change.unless ?? '',
    HISTORY_LIMIT,
    OUTBOX_LIMIT,
    change.rollbackRequest ?? '',
    rollout.id,
    ...auditArgs(note),
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
export function phaseFields(phase: RolloutPhase, reason: string, now: number): RolloutPatch {
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
export function pairs(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i] as string] = flat[i + 1] as string;
  return out;
}
