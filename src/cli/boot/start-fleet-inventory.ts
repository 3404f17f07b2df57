/**
 * `run`'s inventory of the whole fleet (src/inventory): the leader-only loop that pages each
 * organization's `GET collectors` every `inventory.interval`, from start-up on, and the
 * inventory and compliance gauges of /metrics (read from Redis at each scrape, whichever process
 * leads), and the compliance history of the console's chart (once a 5-minute bucket). With `inventory.enabled: false` only the gauges are served (another `run` may keep it).
 */
import type { CollectorUpgradeClient } from '../../api/index.js';
import {
  ComplianceHistory,
  type InventoryLoop,
  InventoryStore,
  startInventory,
} from '../../inventory/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import type { Metrics } from '../../metrics/create-metrics.js';
import type { Policy } from '../../policy/schema.js';
import { type Keys, LeaderLock, type RolloutStore } from '../../rollout/index.js';
import type { DaemonConfig } from './daemon-config.js';

export interface FleetInventoryDeps {
  config: Pick<DaemonConfig, 'inventory' | 'tickMs'>;
  redis: Redis;
  keys: Keys;
  clock: Clock;
  logger: Logger;
  metrics: Metrics;
  orgs: readonly string[];
  client: (org: string) => Pick<CollectorUpgradeClient, 'inventoryPages'>;
  rollouts: Pick<RolloutStore, 'currentIds' | 'get'>;
  policies: () => readonly Policy[];
}

/** Real ms between two rounds of the inventory's loop: the scheduler's tick, at least 1 s. */
export function inventoryRoundMs(tickMs: number): number {
  return Math.max(1_000, tickMs);
}

export function startFleetInventory(deps: FleetInventoryDeps): InventoryLoop | undefined {
  const { config, redis, keys, clock } = deps;
  const store = new InventoryStore(redis, keys);
  deps.metrics.exportInventory(async () => ({ now: clock.now(), orgs: await store.read(deps.orgs) }));
  if (!config.inventory.enabled) return undefined;
  const roundMs = inventoryRoundMs(config.tickMs);
  return startInventory({
    orgs: deps.orgs,
    client: deps.client,
    store,
    history: new ComplianceHistory(redis, keys),
    rollouts: deps.rollouts,
    policies: deps.policies,
    lock: new LeaderLock(redis, keys.inventoryLeader, Math.max(10_000, roundMs * 5)),
    clock,
    logger: deps.logger.child({ component: 'inventory' }),
    intervalMs: config.inventory.intervalMs,
    pageEveryMs: config.inventory.pageEveryMs,
    roundMs,
  });
}
