/**
 * The orchestrator's state in Redis as every command opens it: the keys of the deployment, the
 * Collectors' records, the rollouts and their events.
 */
import type { Logger } from '../../lib/logger.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import {
  CollectorStore,
  createKeys,
  EventLog,
  type Keys,
  RolloutStore,
  type StoreListeners,
} from '../../rollout/index.js';

export interface FleetState {
  redis: Redis;
  keys: Keys;
  store: CollectorStore;
  rollouts: RolloutStore;
  /** Rollout events: history and the notification outbox. */
  events: EventLog;
}

/** `listeners`: what the Collectors' store tells as it writes (a daemon's metrics of outcomes). */
export function createState(
  redis: Redis,
  keyPrefix: string,
  logger?: Logger,
  listeners: StoreListeners = {},
): FleetState {
  const keys = createKeys(keyPrefix);
  return {
    redis,
    keys,
    store: new CollectorStore(redis, keys, logger, listeners),
    rollouts: new RolloutStore(redis, keys),
    events: new EventLog(redis, keys),
  };
}
