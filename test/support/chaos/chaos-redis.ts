/**
 * The deployment's Redis under chaos, of either kind the scenario runs on:
 * - `aof`: one private redis-server with `appendfsync always` (aof-redis.ts); the kill loop's
 *   Redis kill is a SIGKILL of it, and it is started again on the same port from its AOF.
 * - `sentinel`: Debian's redis-server as a primary and a replica watched by three sentinels
 *   (redis-topology.ts, `appendfsync everysec`); the processes find the primary through the
 *   sentinels (REDIS_SENTINELS, REDIS_SENTINEL_NAME, the password from a file), and a create
 *   waits for the replica's acknowledgement of its pre-write (WAIT, the default behind Sentinel).
 *   The kill loop's Redis kill is a SIGKILL of whichever node is the primary then, the replica is
 *   promoted by the sentinels, and the killed one comes back as the new primary's replica.
 * The kill loop and the judge see both through this one shape.
 */

import type { RedisTarget } from '../../../src/lib/redis/redis-target.js';
import type { RedisNode, SentinelTopology } from '../redis-topology.js';
import { startSentinelTopology } from '../redis-topology.js';
import { AofRedis, APPEND_FSYNC } from './aof-redis.js';

export type ChaosRedisKind = 'aof' | 'sentinel';

export interface ChaosRedis {
  kind: ChaosRedisKind;
  /** Where the test's own connection goes. */
  target: RedisTarget;
  /** Environment naming it to a CLI process. */
  env: Record<string, string>;
  /** In words, for the figures: topology and persistence. */
  describe: string;
  /** Folders holding an `appendonlydir` (for the secret scan). */
  aofDirs(): string[];
  /** Redis nodes started, restarts included. */
  readonly starts: number;
  /** Real ms of each failover (Sentinel: from the kill until the replica serves as primary). */
  readonly failoverMs: number[];
  /** SIGKILL of the (primary) redis-server; returns when the deployment has a primary again or it is down. */
  kill(): Promise<void>;
  /** Starts the killed node again (from its AOF, or as the new primary's replica). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startChaosRedis(kind: ChaosRedisKind, dir: string): Promise<ChaosRedis> {
  if (kind === 'aof') {
    const redis = await AofRedis.start(dir);
    return {
      kind,
      target: { kind: 'standalone', url: redis.url },
      env: { REDIS_URL: redis.url },
      describe: `one redis-server, appendfsync ${APPEND_FSYNC}`,
      aofDirs: () => [dir],
      get starts() {
        return redis.starts;
      },
      failoverMs: [],
      kill: () => redis.kill(),
      restart: () => redis.restart(),
      stop: () => redis.stop(),
    };
  }
  const topology: SentinelTopology = await startSentinelTopology();
  let killed: RedisNode | undefined;
  let starts = topology.data.length;
  const failoverMs: number[] = [];
  return {
    kind,
    target: topology.target(),
    env: topology.env(),
    describe:
      'Sentinel: a primary and a replica (appendfsync everysec), three sentinels; WAIT before each create',
    aofDirs: () => topology.data.map((n) => n.dir),
    get starts() {
      return starts;
    },
    failoverMs,
    async kill() {
      const t = performance.now();
      [killed] = await topology.failover();
      failoverMs.push(performance.now() - t);
    },
    async restart() {
      if (!killed) return;
      await topology.rejoin(killed);
      starts++;
      killed = undefined;
    },
    stop: () => topology.stop(),
  };
}
