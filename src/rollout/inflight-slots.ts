/**
 * The global in-flight limit of a policy: a Redis set of the Collectors that may have an
 * unfinished task. A slot is taken atomically (Lua) before a task is created and given back when
 * the task's outcome is final or the Collector waits to come alive, so that every process
 * together never has more than `maxInFlight` unfinished tasks. The set belongs to the policy, not
 * to one rollout: while a superseded rollout's last upgrades finish, the new one shares the limit.
 */
import type { Redis } from 'ioredis';
import type { Keys } from './keys.js';
import { policyOf } from './rollout-store.js';

// KEYS: the set. ARGV: limit, ids... Returns the ids that got a slot (members already in keep theirs).
const ACQUIRE = `
local limit = tonumber(ARGV[1])
local got = {}
for i = 2, #ARGV do
  if redis.call('SISMEMBER', KEYS[1], ARGV[i]) == 1 then
    table.insert(got, ARGV[i])
  elseif redis.call('SCARD', KEYS[1]) < limit then
    redis.call('SADD', KEYS[1], ARGV[i])
    table.insert(got, ARGV[i])
  end
end
return got
`;

type Scripted = Redis & { fuAcquireSlots(key: string, limit: number, ...ids: string[]): Promise<string[]> };

export class InflightSlots {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    if (!('fuAcquireSlots' in redis))
      redis.defineCommand('fuAcquireSlots', { numberOfKeys: 1, lua: ACQUIRE });
    this.redis = redis as Scripted;
  }

  /** Gives slots to as many of `ids` as the limit allows, in order; returns those that hold one. */
  async acquire(rolloutId: string, ids: readonly number[], limit: number): Promise<number[]> {
    if (ids.length === 0) return [];
    const got = await this.redis.fuAcquireSlots(
      this.keys.inflight(policyOf(rolloutId)),
      limit,
      ...ids.map(String),
    );
    return got.map(Number);
  }

  async release(rolloutId: string, id: number): Promise<void> {
    await this.redis.srem(this.keys.inflight(policyOf(rolloutId)), String(id));
  }

  async count(rolloutId: string): Promise<number> {
    return this.redis.scard(this.keys.inflight(policyOf(rolloutId)));
  }

  async members(rolloutId: string): Promise<number[]> {
    return (await this.redis.smembers(this.keys.inflight(policyOf(rolloutId)))).map(Number);
  }
}
