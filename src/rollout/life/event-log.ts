/**
 * A rollout's history: the events recorded with each change of it (rollout-store.ts `write`),
 * appended to its list, oldest first; and the outbox stream from which src/notify delivers them
 * to webhooks at least once, each with an id a receiver can de-duplicate on.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../keys.js';
import type { RecordedEvent } from './rollout-events.js';

/** Newest history entries kept per rollout (operator actions and scheduler events are few). */
export const HISTORY_LIMIT = 10_000;
/** Outbox entries kept (delivered or not) before the oldest are trimmed. */
export const OUTBOX_LIMIT = 100_000;

export class EventLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** A rollout's history, oldest first (at most `limit` of the newest). */
  async history(rolloutId: string, limit = HISTORY_LIMIT): Promise<RecordedEvent[]> {
    const raw = await this.redis.lrange(this.keys.history(rolloutId), -limit, -1);
    return raw.map((r) => JSON.parse(r) as RecordedEvent);
  }
}
