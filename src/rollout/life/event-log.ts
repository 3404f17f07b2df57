/**
 * What happens to a rollout, recorded once in one MULTI: appended to the rollout's history (its
 * audit trail, what `history` prints) and added to the outbox stream from which src/notify
 * delivers webhooks at least once. So a process killed after an event was recorded loses no
 * notification, and every notification has an id a receiver can de-duplicate on.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Keys } from '../keys.js';
import { replies } from './rollout-store.js';

export const ROLLOUT_EVENT_TYPES = [
  'rollout.started',
  'rollout.superseded',
  'wave.started',
  'wave.completed',
  'rollout.baking',
  'rollout.awaiting_approval',
  'rollout.promoted',
  'rollout.halted',
  'rollout.paused',
  'rollout.resumed',
  'rollout.aborted',
  'rollout.converged',
  'rollout.retried',
  'collectors.failed',
  'rollback.requested',
  'rollback.started',
  'rollback.unavailable',
  'cohort.quarantined',
  'analysis.started',
  'analysis.passed',
  'analysis.failed',
  'analysis.inconclusive',
] as const;
export type RolloutEventType = (typeof ROLLOUT_EVENT_TYPES)[number];

/** Who made it happen: an operator (CLI or HTTP), the failure gate, the scheduler, or a policy file. */
export type EventSource = 'operator' | 'gate' | 'scheduler' | 'policy';

/** Records an event of a rollout (its history and the notification outbox); the Scheduler's `emit`. */
export type EmitRolloutEvent = (
  rollout: { id: string; policy: string; build: string },
  type: RolloutEventType,
  source: EventSource,
  message: string,
  detail?: Record<string, unknown>,
) => Promise<void>;

export interface RolloutEvent {
  type: RolloutEventType;
  rollout: string;
  policy: string;
  build: string;
  /** Clock ms (the deployment's shared clock). */
  at: number;
  source: EventSource;
  /** The operator (user@host, or the HTTP client's token name), when an operator acted. */
  actor?: string;
  /** One sentence for a person: what happened and, when something waits, what to do. */
  message: string;
  /** Facts for machines (counts, wave, criterion, ...). */
  detail?: Record<string, unknown>;
}

export interface RecordedEvent extends RolloutEvent {
  /** Unique id of the event, for receivers to de-duplicate deliveries. */
  id: string;
}

/** Newest history entries kept per rollout (operator actions and scheduler events are few). */
export const HISTORY_LIMIT = 10_000;
/** Outbox entries kept (delivered or not) before the oldest are trimmed. */
export const OUTBOX_LIMIT = 100_000;

export class EventLog {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Records `event` in the rollout's history and the outbox at once; returns it with its id. */
  async record(event: RolloutEvent): Promise<RecordedEvent> {
    const recorded: RecordedEvent = { id: randomUUID(), ...event };
    const json = JSON.stringify(recorded);
    await this.redis
      .multi()
      .rpush(this.keys.history(event.rollout), json)
      .ltrim(this.keys.history(event.rollout), -HISTORY_LIMIT, -1)
      .xadd(this.keys.outbox, 'MAXLEN', '~', OUTBOX_LIMIT, '*', 'id', recorded.id, 'event', json)
      .exec()
      .then(replies);
    return recorded;
  }

  /** A rollout's history, oldest first (at most `limit` of the newest). */
  async history(rolloutId: string, limit = HISTORY_LIMIT): Promise<RecordedEvent[]> {
    const raw = await this.redis.lrange(this.keys.history(rolloutId), -limit, -1);
    return raw.map((r) => JSON.parse(r) as RecordedEvent);
  }
}
