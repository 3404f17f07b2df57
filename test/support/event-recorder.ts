/**
 * Records hand-made rollout events into a rollout's history and the webhooks' outbox, the way
 * the product's one write path does with each change (src/rollout/life/lua/write-rollout-6.lua),
 * for tests of delivery that need events without a rollout behind them.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import {
  HISTORY_LIMIT,
  type Keys,
  OUTBOX_LIMIT,
  type RecordedEvent,
  type RolloutEvent,
} from '../../src/rollout/index.js';

export class EventRecorder {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  async record(event: RolloutEvent): Promise<RecordedEvent> {
    const recorded: RecordedEvent = { id: randomUUID(), ...event };
    const json = JSON.stringify(recorded);
    const replies = await this.redis
      .multi()
      .rpush(this.keys.history(event.rollout), json)
      .ltrim(this.keys.history(event.rollout), -HISTORY_LIMIT, -1)
      .xadd(this.keys.outbox, 'MAXLEN', '~', OUTBOX_LIMIT, '*', 'id', recorded.id, 'event', json)
      .exec();
    for (const [err] of replies ?? []) if (err) throw err;
    return recorded;
  }
}
