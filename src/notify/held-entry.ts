/**
 * An outbox entry a consumer holds for one webhook or receiver, until it is delivered or given
 * up, and the batches a receiver sends: entries of one key (receiver-plan.ts) go as one message.
 * A failures summary folds the entries read within its window into itself, so that a flood holds
 * one place (maxHeld) and still becomes one message.
 */
import { compareStreamIds } from './outbox-reader.js';
import type { OutboxEvent } from './schema.js';

export interface Held {
  streamId: string;
  event: OutboxEvent;
  recorded: string;
  /** Real ms when Redis added the entry. */
  recordedAt: number;
  failures: number;
  /** Not sent before this real ms (after a rejection; a receiver's summary window). */
  nextAt: number;
  /** A receiver's: the organizations the event concerns. */
  orgs: readonly string[];
  /** A receiver's: held entries with the same key are sent as one message. */
  key?: string;
  /** ... and this one takes every held entry of its key, due or not (a summary). */
  summary?: boolean;
  /** A summary's entries read after it within its window. */
  folded?: Held[];
}

/** The stream ids a held entry stands for: its own and those folded into it. */
export const idsOf = (h: Held): string[] => [h.streamId, ...(h.folded ?? []).map((f) => f.streamId)];

/** The held summary of `key` whose window is still open at `now` (new entries of its key fold in). */
export function openSummary(held: Iterable<Held>, key: string | undefined, now: number): Held | undefined {
  for (const h of held) if (h.summary && h.key === key && h.nextAt > now) return h;
  return undefined;
}

/**
 * The entries sent with `entry` as one message, oldest first: itself, and with a receiver's key
 * the held entries of that key that are older (a resolve waiting its window, before a relapse's
 * trigger), due, or all of them (a summary), with what was folded into them.
 */
export function batchOf(held: Iterable<Held>, entry: Held, now: number): Held[] {
  if (entry.key === undefined) return [entry];
  return [...held]
    .filter(
      (h) =>
        h === entry ||
        (h.key === entry.key &&
          (entry.summary || h.nextAt <= now || compareStreamIds(h.streamId, entry.streamId) < 0)),
    )
    .flatMap((h) => [h, ...(h.folded ?? [])])
    .sort((a, b) => compareStreamIds(a.streamId, b.streamId));
}
