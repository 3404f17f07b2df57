/**
 * The clock that every process of one deployment shares. In production it is the system clock.
 * In a rehearsal at time scale K it runs K times faster than the wall clock from an origin that
 * the first process writes to Redis and every later one reads, so that processes started at
 * different times agree on the time: a request time written by one is judged by another's clock.
 * (Each process starting its own scaled clock would put two processes started Δ apart (K−1)·Δ
 * apart.) A process whose time scale differs from the deployment's refuses to start.
 */
import type { Redis } from 'ioredis';
import { type Clock, createScaledClock, systemClock } from './clock.js';
import { ConfigError } from './errors.js';

interface ClockRecord {
  scale: number;
  /** Wall-clock ms at which the scaled clock read the wall clock. */
  origin: number;
}

function parseRecord(raw: string | null): ClockRecord | undefined {
  if (!raw) return undefined;
  try {
    const r = JSON.parse(raw) as Partial<ClockRecord>;
    if (typeof r.scale === 'number' && r.scale > 0 && typeof r.origin === 'number')
      return { scale: r.scale, origin: r.origin };
  } catch {
    // not ours: written over below
  }
  return undefined;
}

function clockOf(record: ClockRecord): Clock & { scale: number } {
  if (record.scale === 1) return { ...systemClock, scale: 1 };
  return createScaledClock(record.scale, record.origin);
}

/**
 * The deployment's clock at `timeScale`, creating it in Redis (`key`) when this is the first
 * process. Throws a ConfigError when the deployment runs at another time scale.
 */
export async function openSharedClock(
  redis: Redis,
  key: string,
  timeScale: number,
): Promise<Clock & { scale: number }> {
  const mine: ClockRecord = { scale: timeScale, origin: Date.now() };
  await redis.set(key, JSON.stringify(mine), 'NX');
  let record = parseRecord(await redis.get(key));
  if (!record) {
    await redis.set(key, JSON.stringify(mine));
    record = mine;
  }
  if (record.scale !== timeScale) {
    throw new ConfigError(
      `this deployment's Redis holds a clock at time scale ${record.scale}, but this process runs at ${timeScale}: ` +
        `start it with --time-scale ${record.scale} (FLEET_UPGRADE_TIME_SCALE), or use another FLEET_UPGRADE_KEY_PREFIX or Redis for a new rehearsal`,
      [
        {
          file: 'settings',
          field: 'timeScale',
          reason: `must be ${record.scale}, the time scale of this deployment`,
        },
      ],
    );
  }
  return clockOf(record);
}

/** The deployment's clock if one was written (for commands that stamp times but start nothing). */
export async function readSharedClock(redis: Redis, key: string): Promise<Clock> {
  const record = parseRecord(await redis.get(key));
  return record ? clockOf(record) : systemClock;
}
