/**
 * Read access to the orchestrator's state in Redis for `status`, `report` and `resume`: REDIS_URL,
 * or the private Redis that a `run` on this machine started (its URL is left in the data folder).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from '../lib/clock.js';
import { FleetError } from '../lib/errors.js';
import { closeRedis, createRedis } from '../lib/redis.js';
import { readSharedClock } from '../lib/shared-clock.js';
import { createState, type FleetState } from './create-state.js';
import type { DaemonConfig } from './daemon-config.js';

export const PRIVATE_REDIS_URL_FILE = 'redis-url';

export interface StateAccess extends FleetState {
  /** The deployment's clock (a rehearsal's scaled one), for the times a command writes. */
  clock: Clock;
  close(): Promise<void>;
}

export function privateRedisUrlFile(config: Pick<DaemonConfig, 'dataDir'>): string {
  return join(config.dataDir, PRIVATE_REDIS_URL_FILE);
}

export async function openState(config: DaemonConfig): Promise<StateAccess> {
  let url = config.redisUrl;
  const file = privateRedisUrlFile(config);
  if (!url && existsSync(file)) url = readFileSync(file, 'utf8').trim();
  if (!url) {
    throw new FleetError(
      'FLEET_ERR_NO_REDIS',
      `REDIS_URL is not set and no private Redis of a running 'fleet-upgrade run' was found (${file}); set REDIS_URL.`,
    );
  }
  const redis = createRedis(url, { name: 'cli', connectTimeoutMs: 3000 });
  try {
    await redis.ping();
  } catch (err) {
    redis.disconnect();
    throw new FleetError('FLEET_ERR_NO_REDIS', `Redis does not answer: ${(err as Error).message}`);
  }
  const state = createState(redis, config.keyPrefix);
  return { ...state, clock: await readSharedClock(redis, state.keys.clock), close: () => closeRedis(redis) };
}
