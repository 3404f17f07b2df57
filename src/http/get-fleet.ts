/**
 * `GET /fleet`: what `fleet-upgrade fleet --format json` prints, from the daemon's inventory in
 * Redis (src/inventory): installed Collectors by build and organization, each policy's share on
 * its target per organization, the oldest builds, and when this deployment first saw the newest.
 * One view (cli/render/fleet-view.ts) for the command and the console. `GET /fleet/history`:
 * each organization × policy's compliance over time, as the inventory's leader sampled it
 * (src/inventory/compliance-history.ts: one sample per 5-minute bucket, 7 days at most).
 */
import type { Redis } from 'ioredis';
import { fleetView } from '../cli/render/fleet-view.js';
import { ComplianceHistory, type FleetHistoryAnswer, InventoryStore } from '../inventory/index.js';
import { type Keys, readBuildsSeen } from '../rollout/index.js';

export async function readFleet(deps: { redis: Redis; keys: Keys; orgs: readonly string[]; now: number }) {
  const { redis, keys, orgs } = deps;
  const [inventories, seen] = await Promise.all([
    new InventoryStore(redis, keys).read(orgs),
    Promise.all(orgs.map(async (org) => [org, await readBuildsSeen(redis, keys, org)] as const)),
  ]);
  return { source: 'inventory', now: deps.now, ...fleetView(inventories, new Map(seen)) };
}

export async function readFleetHistory(deps: {
  redis: Redis;
  keys: Keys;
  orgs: readonly string[];
  now: number;
}): Promise<FleetHistoryAnswer> {
  const history = new ComplianceHistory(deps.redis, deps.keys);
  const { bucketMs, maxAgeMs, maxSamples } = history.limits;
  return {
    now: deps.now,
    bucketMs,
    maxAgeMs,
    maxSamples,
    series: await history.read(deps.orgs, deps.now - maxAgeMs),
  };
}
