/**
 * The request budget in Redis, shared by every process (on any host) that uses one access ID.
 * Three keys under one cluster hash tag: `rate` (sorted set of the last 2N slots by send time), `aimd` (rate
 * factor after 429s, Retry-After pause) and `leases` (sorted set of concurrency leases by expiry,
 * so that a process killed mid-request frees its lease after `leaseMs`). Each step is one Lua
 * script using the Redis server's clock, so hosts with skewed clocks still agree.
 * The algorithm is the one in request-budget.ts; keep the two in step.
 */
import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { FleetError } from '../lib/errors.js';
import type { Redis } from '../lib/redis.js';
import {
  type BudgetLease,
  type BudgetLimits,
  budgetWindowMs,
  createFifo,
  type RequestBudget,
  resolveBudgetLimits,
  slotsPerWindow,
} from './request-budget.js';

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** Current AIMD factor from the hash in KEYS[aimd]; needs `now`, `window`, `recovery`. */
const FACTOR = `local s = redis.call('HMGET', aimdKey, 'factor', 'at', 'pausedUntil', 'lastDecrease')
local factor = 1
if s[1] then factor = math.min(1, tonumber(s[1]) + recovery * math.max(0, now - tonumber(s[2])) / window) end
local pausedUntil = tonumber(s[3] or 0)
local lastDecrease = tonumber(s[4] or -1e15)`;

/** KEYS: rate, aimd. ARGV: slots, window, recovery, token. Returns 0 (slot taken) or ms to wait. */
const TAKE_SLOT = `${NOW}
local aimdKey = KEYS[2]
local slots = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local recovery = tonumber(ARGV[3])
${FACTOR}
local span = window / factor
local earliest = math.max(now, pausedUntil)
local nth = redis.call('ZREVRANGE', KEYS[1], slots - 1, slots - 1, 'WITHSCORES')
if nth[2] then earliest = math.max(earliest, tonumber(nth[2]) + span) end
if earliest > now then return math.max(1, math.ceil(earliest - now)) end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(2 * slots) - 1)
redis.call('PEXPIRE', KEYS[1], math.ceil(span) + 60000)
return 0`;

/** KEYS: rate. ARGV: token. Moves the token's slot to now (never earlier). */
const MARK_SENT = `${NOW}
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
if old and tonumber(old) < now then redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1]) end
return 1`;

/** KEYS: aimd. ARGV: window, recovery, decrease, minFactor, retryAfterRealMs. Returns the factor (string). */
const RATE_LIMITED = `${NOW}
local aimdKey = KEYS[1]
local window = tonumber(ARGV[1])
local recovery = tonumber(ARGV[2])
local decrease = tonumber(ARGV[3])
local minFactor = tonumber(ARGV[4])
local retryAfter = tonumber(ARGV[5])
${FACTOR}
if retryAfter > 0 then
  redis.call('HSET', aimdKey, 'pausedUntil', math.max(pausedUntil, now + retryAfter))
end
if now - lastDecrease >= window / factor then
  factor = math.max(minFactor, factor * decrease)
  redis.call('HSET', aimdKey, 'factor', tostring(factor), 'at', now, 'lastDecrease', now)
end
redis.call('PEXPIRE', aimdKey, math.ceil(window / minFactor / recovery) + 60000)
return tostring(factor)`;

/** KEYS: aimd. ARGV: window, recovery. Returns the factor (string). */
const READ_FACTOR = `${NOW}
local aimdKey = KEYS[1]
local window = tonumber(ARGV[1])
local recovery = tonumber(ARGV[2])
${FACTOR}
return tostring(factor)`;

/** KEYS: leases. ARGV: limit, leaseMs, token. Returns 1 (leased) or 0. */
const TAKE_LEASE = `${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
  return 1
end
return 0`;

type BudgetRedis = Redis & {
  fleetBudgetTakeSlot(
    rate: string,
    aimd: string,
    slots: number,
    window: number,
    recovery: number,
    token: string,
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
  const r = redis as BudgetRedis;
  if (typeof r.fleetBudgetTakeSlot !== 'function') {
    redis.defineCommand('fleetBudgetTakeSlot', { numberOfKeys: 2, lua: TAKE_SLOT });
    redis.defineCommand('fleetBudgetMarkSent', { numberOfKeys: 1, lua: MARK_SENT });
    redis.defineCommand('fleetBudgetRateLimited', { numberOfKeys: 1, lua: RATE_LIMITED });
    redis.defineCommand('fleetBudgetFactor', { numberOfKeys: 1, lua: READ_FACTOR });
    redis.defineCommand('fleetBudgetTakeLease', { numberOfKeys: 1, lua: TAKE_LEASE });
  }
  return r;
}

export interface RedisRequestBudgetOptions extends Partial<BudgetLimits> {
  /** A connection of the caller's; the budget does not close it. */
  redis: Redis;
  /** The budget is shared by everyone using this access ID (it is hashed into the key). */
  accessId: string;
  /** Prefix of the keys (default `fleet-upgrade:`). */
  keyPrefix?: string;
}

export function createRedisRequestBudget(options: RedisRequestBudgetOptions): RequestBudget {
  const limits = resolveBudgetLimits(options);
  const redis = withScripts(options.redis);
  const id = createHash('sha256').update(options.accessId).digest('hex').slice(0, 16);
  const base = `${options.keyPrefix ?? 'fleet-upgrade:'}api-budget:{${id}}:`;
  const keys = { rate: `${base}rate`, aimd: `${base}aimd`, leases: `${base}leases` };
  const window = budgetWindowMs(limits);
  const slots = slotsPerWindow(limits);
  const fifo = createFifo();

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

  async function takeSlot(token: string, deadline: number, signal?: AbortSignal): Promise<void> {
    while (Date.now() < deadline) {
      const wait = await redis.fleetBudgetTakeSlot(
        keys.rate,
        keys.aimd,
        slots,
        window,
        limits.recoveryPerWindow,
        token,
      );
      if (wait === 0) return;
      await delay(Math.min(wait, Math.max(1, deadline - Date.now())), undefined, { signal });
    }
    throw new FleetError('FLEET_ERR_API_BUDGET', `no request slot within ${limits.maxWaitMs} ms`);
  }

  return {
    acquire: (signal) =>
      fifo(async (): Promise<BudgetLease> => {
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
          if (limits.perSecond > 0) await takeSlot(token, deadline, signal);
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
      const retryAfterReal = retryAfterMs === undefined ? 0 : Math.ceil(retryAfterMs / limits.timeScale);
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
