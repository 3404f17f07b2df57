/**
 * The request budget in Redis, shared by every process (on any host) that uses one access ID.
 * Five keys under one cluster hash tag: `rate` (sorted set of the last 2N slots by send time), `aimd` (rate
 * factor after 429s, Retry-After pause), `leases` (sorted set of concurrency leases by expiry,
 * so that a process killed mid-request frees its lease after `leaseMs`), `urgent` (the creates
 * waiting for a slot in any process: less urgent requests let them go first) and `first` (the
 * reads that have waited too long, `agedPriority`: they go before the creates). Each step is one Lua
 * script (lua/budget-*.lua) using the Redis server's clock, so hosts with skewed clocks still agree.
 * The algorithm is the one in request-budget.ts; keep the two in step.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { FleetError } from '../lib/errors.js';
import type { Redis } from '../lib/redis/create-redis.js';
import { defineScripts } from '../lib/redis/redis-scripts.js';
import {
  agedPriority,
  type BudgetLease,
  type BudgetLimits,
  boundedPauseMs,
  budgetWindowMs,
  createPriorityLine,
  REQUEST_PRIORITY,
  type RequestBudget,
  resolveBudgetLimits,
  slotsPerWindow,
} from './request-budget.js';

type BudgetRedis = Redis & {
  fleetBudgetTakeSlot(
    rate: string,
    aimd: string,
    urgent: string,
    first: string,
    slots: number,
    window: number,
    recovery: number,
    token: string,
    priority: number,
  ): Promise<number>;
  fleetBudgetMarkSent(rate: string, token: string): Promise<number>;
  fleetBudgetRateLimited(
    aimd: string,
    window: number,
    recovery: number,
    decrease: number,
    minFactor: number,
    retryAfter: number,
  ): Promise<string>;
  fleetBudgetFactor(aimd: string, window: number, recovery: number): Promise<string>;
  fleetBudgetTakeLease(leases: string, limit: number, leaseMs: number, token: string): Promise<number>;
};

function withScripts(redis: Redis): BudgetRedis {
  defineScripts(redis, [
    { command: 'fleetBudgetTakeSlot', module: 'api', name: 'budget-take-slot-4' },
    { command: 'fleetBudgetMarkSent', module: 'api', name: 'budget-mark-sent-1' },
    { command: 'fleetBudgetRateLimited', module: 'api', name: 'budget-rate-limited-1' },
    { command: 'fleetBudgetFactor', module: 'api', name: 'budget-factor-1' },
    { command: 'fleetBudgetTakeLease', module: 'api', name: 'budget-take-lease-1' },
  ]);
  return redis as BudgetRedis;
}

export interface RedisRequestBudgetOptions extends Partial<BudgetLimits> {
  /** A connection of the caller's; the budget does not close it. */
  redis: Redis;
  /** The budget is shared by everyone using this access ID (it is hashed into the key). */
  accessId: string;
  /**
   * The organization the access ID belongs to, when it is not the deployment's only one: its
   * budget is its own, even if another organization's user had the same access ID.
   */
  scope?: string;
  /** Prefix of the keys (default `fleet-upgrade:`). */
  keyPrefix?: string;
}

export function createRedisRequestBudget(options: RedisRequestBudgetOptions): RequestBudget {
  const limits = resolveBudgetLimits(options);
  const redis = withScripts(options.redis);
  const id = createHash('sha256')
    .update(options.scope ? `${options.scope}|${options.accessId}` : options.accessId)
    .digest('hex')
    .slice(0, 16);
  const base = `${options.keyPrefix ?? 'fleet-upgrade:'}api-budget:{${id}}:`;
  const keys = {
    rate: `${base}rate`,
    aimd: `${base}aimd`,
    leases: `${base}leases`,
    urgent: `${base}urgent`,
    first: `${base}first`,
  };
  const window = budgetWindowMs(limits);
  const slots = slotsPerWindow(limits);
  const line = createPriorityLine({ now: Date.now, windowMs: window });

  const budgetFailure = (err: unknown) =>
    new FleetError(
      'FLEET_ERR_API_BUDGET',
      `the API request budget in Redis is unavailable: ${err instanceof Error ? err.message : String(err)}`,
      { cause: err },
    );

  async function takeLease(token: string, deadline: number, signal?: AbortSignal): Promise<void> {
    let pause = 2;
    while (Date.now() < deadline) {
      if ((await redis.fleetBudgetTakeLease(keys.leases, limits.concurrent, limits.leaseMs, token)) === 1)
        return;
      // Leases last one request: poll soon, then less often, with jitter so processes interleave.
      await delay(pause + Math.random() * pause, undefined, { signal });
      pause = Math.min(pause * 2, 25);
    }
    throw new FleetError('FLEET_ERR_API_BUDGET', `no concurrency lease within ${limits.maxWaitMs} ms`);
  }

  async function takeSlot(
    token: string,
    priority: number,
    joinedAt: number,
    deadline: number,
    signal?: AbortSignal,
  ): Promise<void> {
    while (Date.now() < deadline) {
      const wait = await redis.fleetBudgetTakeSlot(
        keys.rate,
        keys.aimd,
        keys.urgent,
        keys.first,
        slots,
        window,
        limits.recoveryPerWindow,
        token,
        agedPriority(priority, Date.now() - joinedAt, window),
      );
      if (wait === 0) return;
      await delay(Math.min(wait, Math.max(1, deadline - Date.now())), undefined, { signal });
    }
    throw new FleetError('FLEET_ERR_API_BUDGET', `no request slot within ${limits.maxWaitMs} ms`);
  }

  return {
    acquire: (signal, priority = REQUEST_PRIORITY.list) =>
      line(priority, async (joinedAt): Promise<BudgetLease> => {
        signal?.throwIfAborted();
        const started = Date.now();
        const deadline = started + limits.maxWaitMs;
        const token = randomUUID();
        const leased = limits.concurrent > 0;
        const release = async () => {
          if (leased) await redis.zrem(keys.leases, token).catch(() => undefined);
        };
        try {
          if (leased) await takeLease(token, deadline, signal);
          if (limits.perSecond > 0) await takeSlot(token, priority, joinedAt, deadline, signal);
        } catch (err) {
          await release();
          if (err instanceof FleetError || signal?.aborted) throw err;
          throw budgetFailure(err);
        }
        let released = false;
        return {
          waitedMs: Date.now() - started,
          sent: () => {
            // Not awaited: the next slot that depends on this one is at least a window away.
            if (limits.perSecond > 0) redis.fleetBudgetMarkSent(keys.rate, token).catch(() => undefined);
          },
          release: async () => {
            if (released) return;
            released = true;
            await release();
          },
        };
      }),
    async rateLimited(retryAfterMs) {
      const retryAfterReal = Math.ceil(boundedPauseMs(retryAfterMs) / limits.timeScale);
      try {
        await redis.fleetBudgetRateLimited(
          keys.aimd,
          window,
          limits.recoveryPerWindow,
          limits.decrease,
          limits.minFactor,
          retryAfterReal,
        );
      } catch (err) {
        throw budgetFailure(err);
      }
    },
    async factor() {
      return Number(await redis.fleetBudgetFactor(keys.aimd, window, limits.recoveryPerWindow));
    },
    async close() {
      // The connection is the caller's; leases still held are released by their holders.
    },
  };
}
