/**
 * The clock that every process of one deployment shares. In production it is the system clock.
 * In a rehearsal at time scale K it runs K times faster than the wall clock from an origin that
 * the first process writes to Redis and every later one reads, so that processes started at
 * different times agree on the time: a request time written by one is judged by another's clock.
 * (Each process starting its own scaled clock would put two processes started Δ apart (K−1)·Δ
 * apart.) A process whose time scale differs from the deployment's refuses to start.
 *
 * A rehearsal has one more clock, the simulator's, which dates the tasks it records. The daemon
 * sets the deployment's clock by it (`alignSharedClock`, once per process, at the first answer
 * that tells the simulator's now): the origin is rewritten so that both read the same simulated
 * time, and every process that reads the record afterwards (status, report, history) agrees.
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

/** A deployment's clock whose origin `alignSharedClock` may move (the daemon's own). */
export type SharedClock = Clock & { scale: number; setOrigin(origin: number): void };

/** A clock of `scale` from `origin` whose origin can be moved (a rehearsal's, set by the simulator's). */
export function alignableClock(scale: number, origin: number = Date.now()): SharedClock {
  return sharedClockOf({ scale, origin });
}

function sharedClockOf(record: ClockRecord): SharedClock {
  let inner = clockOf(record);
  return {
    scale: record.scale,
    now: () => inner.now(),
    sleep: (ms, signal) => inner.sleep(ms, signal),
    setOrigin(origin) {
      inner = clockOf({ scale: record.scale, origin });
    },
  };
}

/**
 * The origin at which a clock of `scale` reads `simNow` at wall-clock `wallAt`: a scaled clock
 * reads `origin + (wall - origin) * scale`, so origin = (scale·wallAt − simNow) / (scale − 1).
 */
export function originFor(scale: number, simNow: number, wallAt: number): number {
  return Math.round((scale * wallAt - simNow) / (scale - 1));
}

/**
 * Sets the deployment's clock by the simulator's (told `simNow` at wall-clock `wallAt`): rewrites
 * the record's origin in Redis and moves `clock`'s. Nothing at time scale 1 (the wall clock is
 * everyone's), nor when they already agree within `toleranceMs` of clock time (default: what
 * 100 ms of the wall clock, a request's latency, is on it, at least 1 s), so that a restart
 * against a simulator whose clock it already follows does not move it back and forth. Returns how
 * far the clock moved (clock ms, 0 when it did not).
 */
export async function alignSharedClock(
  redis: Redis,
  key: string,
  clock: SharedClock,
  simNow: number,
  wallAt: number,
  toleranceMs = Math.max(1000, 100 * clock.scale),
): Promise<number> {
  if (clock.scale <= 1) return 0;
  const ours = clock.now() - (Date.now() - wallAt) * clock.scale;
  const moved = simNow - ours;
  if (Math.abs(moved) <= toleranceMs) return 0;
  const origin = originFor(clock.scale, simNow, wallAt);
  // This process's first (a time stamped meanwhile is on the simulator's clock), then the record.
  clock.setOrigin(origin);
  await redis.set(key, JSON.stringify({ scale: clock.scale, origin } satisfies ClockRecord));
  return moved;
}

/**
 * The deployment's clock at `timeScale`, creating it in Redis (`key`) when this is the first
 * process. Throws a ConfigError when the deployment runs at another time scale.
 */
export async function openSharedClock(redis: Redis, key: string, timeScale: number): Promise<SharedClock> {
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
  return sharedClockOf(record);
}

/** The deployment's clock if one was written (for commands that stamp times but start nothing). */
export async function readSharedClock(redis: Redis, key: string): Promise<Clock> {
  const record = parseRecord(await redis.get(key));
  return record ? clockOf(record) : systemClock;
}
