/**
 * A rollout as one scheduler tick sees it and changes it: the record read at the start of the
 * tick, with the typed patch the tick's steps gather (`set`), written once at the end of the tick
 * (`flush`), as Argo Rollouts' controller persists a rollout's status once per pass. Moves of the
 * phase and the waves are written at once, each with its events, by the store; the draft then
 * takes the record the store answers (`took`), so the view never disagrees with Redis but for
 * what is still pending.
 */
import type { Logger } from '../../lib/logger.js';
import { applyPatch, type RolloutCounter, type RolloutPatch } from './rollout-codec.js';
import type { RolloutNews } from './rollout-events.js';
import type { PhaseEvent } from './rollout-phase.js';
import type { RolloutRecord } from './rollout-record.js';
import type { RolloutStore } from './rollout-store.js';
import { moveChange } from './rollout-write.js';

export class RolloutDraft {
  private pending: RolloutPatch = {};
  private counters: Partial<Record<RolloutCounter, number>> = {};

  constructor(private current: RolloutRecord) {}

  /** The rollout as stored, with what this tick has set and not written yet. */
  get view(): RolloutRecord {
    return this.current;
  }

  /** Sets fields, written at the end of the tick. */
  set(patch: RolloutPatch): void {
    this.pending = { ...this.pending, ...patch };
    this.current = applyPatch(this.current, patch);
  }

  /** Increases a counter at the end of the tick. */
  add(counter: RolloutCounter, n: number): void {
    this.counters[counter] = (this.counters[counter] ?? 0) + n;
    this.current = { ...this.current, [counter]: this.current[counter] + n };
  }

  /** The record a write answered becomes the view (what is pending stays applied). */
  took(stored: RolloutRecord): void {
    this.current = applyPatch(stored, this.pending);
  }

  /**
   * Moves the phase with its events in one step (the store's `move`); the view then holds the
   * record as stored. When the move no longer applies (an operator's action came first), the view
   * takes the record as it is now, and the answer is false.
   */
  async move(
    store: RolloutStore,
    event: PhaseEvent,
    now: number,
    options: { reason?: string; patch?: RolloutPatch; news?: readonly RolloutNews[] } = {},
  ): Promise<boolean> {
    const moved = await store.write(this.current, moveChange(event, options), now);
    if (moved) {
      this.took(moved.rollout);
      return true;
    }
    const stored = await store.get(this.current.id);
    if (stored) this.took(stored);
    return false;
  }

  /** Writes what the tick gathered, in one step; nothing when it gathered nothing. */
  async flush(store: RolloutStore, now: number, logger?: Logger): Promise<void> {
    if (Object.keys(this.pending).length === 0 && Object.keys(this.counters).length === 0) return;
    const patch = this.pending;
    const add = this.counters;
    this.pending = {};
    this.counters = {};
    const stored = await store.write(this.current, { patch, add }, now);
    if (stored) this.took(stored.rollout);
    else logger?.warn({ rollout: this.current.id }, 'rollout gone before its tick was written');
  }
}
