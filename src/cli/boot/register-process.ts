/**
 * A daemon process in the deployment's list of processes (`keys.processes`: role, pid, since),
 * for as long as it runs; the returned step takes it off at the stop.
 */
import type { Redis } from '../../lib/redis/create-redis.js';
import type { Keys } from '../../rollout/index.js';

export async function registerProcess(
  redis: Redis,
  keys: Keys,
  role: 'run' | 'worker',
): Promise<() => Promise<unknown>> {
  const processId = `${role}:${process.pid}`;
  await redis.hset(keys.processes, processId, JSON.stringify({ role, pid: process.pid, since: Date.now() }));
  return () => redis.hdel(keys.processes, processId);
}
