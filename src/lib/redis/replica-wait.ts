/**
 * Durability of a write on a replica before something irreversible follows it (the worker's
 * create: its pre-write `creating` must survive a failover, or the new primary would send the
 * create again). After the write, `WAIT n timeout` on the connection that carried it returns
 * when n replicas acknowledged everything this connection wrote, or at the time-out.
 *
 * - How many replicas (`needed`): the setting (`redis.minReplicasForCreate`) when given; else it
 *   follows the topology: 1 behind Sentinel, 1 once the primary has reported a connected replica
 *   (INFO replication, read at start and every `refreshMs`; remembered in Redis under `flagKey`,
 *   so that a primary that lost its replicas, or a process started while they are away, still
 *   asks for one), else 0 (a single Redis: nothing to wait for).
 * - WAIT is only meaningful on the connection of the write: a reconnection in between (a
 *   failover) would make a fresh connection's WAIT answer at once. So `mark()` notes the
 *   connection and its generation (bumped at every close) before the write, and `confirm()`
 *   refuses when either changed by the time WAIT answered. On a Cluster the connection is the
 *   client's own one to the primary of `key`'s slot (nodeFor).
 * - Concurrent confirms share WAITs (a group commit per connection): a WAIT sent after a
 *   write's answer covers it, so one WAIT in flight and one queued serve any number of writers,
 *   and a lagging replica costs each writer at most two time-outs.
 */
import type { Logger } from '../logger.js';
import { isCluster, nodeFor, type Redis } from './create-redis.js';
import type { RedisTopology } from './redis-target.js';

export interface ReplicaWaitOptions {
  /** The connection that carries the writes to confirm. */
  redis: Redis;
  /** A key of the deployment: on a Cluster, WAIT and INFO go to the primary of its slot. */
  key: string;
  /** A key remembering that this deployment's primary had replicas (follows the topology). */
  flagKey: string;
  topology: RedisTopology;
  /** The setting; undefined: follow the topology. */
  minReplicas?: number | undefined;
  /** WAIT's time limit in real ms (default 1000). */
  timeoutMs?: number;
  /** How often INFO replication is read again (default 30 s; 0: only at start). */
  refreshMs?: number;
  logger?: Logger;
}

/** Which connection will carry a write, and its generation, taken right before it. */
export interface WriteMark {
  node: Redis | undefined;
  generation: number;
  needed: number;
}

export type Confirmation =
  | { ok: true; replicas: number; needed: number; ms: number }
  | { ok: false; replicas: number; needed: number; ms: number; reason: string };

export interface ReplicaWaitStats {
  confirms: number;
  failures: number;
  waits: number;
  /** Real ms of each of the last (up to) 2,000 confirms that sent a WAIT, oldest first. */
  recentMs: number[];
}

export interface ReplicaWait {
  /** Replicas a pre-write needs now (0: no WAIT). */
  needed(): number;
  /** Call right before the write; pass the mark to `confirm` after it. */
  mark(): WriteMark;
  /** After the write: ok when `needed` replicas acknowledged it on the same connection in time. */
  confirm(mark: WriteMark): Promise<Confirmation>;
  /**
   * Ok when `needed` replicas hold everything the primary held a moment ago: a small write of
   * this connection's own (the flag key), then its WAIT. Replication is ordered, so it also
   * covers writes made on a connection that has closed since (a failover in between).
   */
  barrier(): Promise<Confirmation>;
  /** Reads INFO replication now (the start does it once). */
  refresh(): Promise<void>;
  stats(): ReplicaWaitStats;
  close(): void;
}

const generations = new WeakMap<Redis, { n: number }>();

/** How many times `node` closed since we first looked (a WAIT after a reconnection proves nothing). */
function generationOf(node: Redis): number {
  let g = generations.get(node);
  if (!g) {
    const counter = { n: 0 };
    node.on('close', () => {
      counter.n++;
    });
    generations.set(node, counter);
    g = counter;
  }
  return g.n;
}

/** `connected_slaves` and `role` of an INFO replication answer. */
export function parseReplication(info: string): { role: string; replicas: number } {
  const role = /^role:(\w+)/m.exec(info)?.[1] ?? 'unknown';
  const replicas = Number(/^connected_slaves:(\d+)/m.exec(info)?.[1] ?? 0);
  return { role, replicas };
}

export async function startReplicaWait(options: ReplicaWaitOptions): Promise<ReplicaWait> {
  const { redis, key, flagKey, logger } = options;
  const timeoutMs = options.timeoutMs ?? 1000;
  let seenReplicas = options.topology === 'sentinel';
  let connected: number | undefined;
  let warned = false;
  const stats: ReplicaWaitStats = { confirms: 0, failures: 0, waits: 0, recentMs: [] };
  const rounds = new Map<Redis, { inFlight?: Promise<number>; next?: Promise<number> }>();

  const needed = () => options.minReplicas ?? (seenReplicas ? 1 : 0);

  async function refresh(): Promise<void> {
    const node = nodeFor(redis, key);
    if (!node) return;
    try {
      const { role, replicas } = parseReplication(await node.info('replication'));
      if (role !== 'master') return;
      connected = replicas;
      if (replicas > 0 && !seenReplicas) {
        seenReplicas = true;
        await redis.set(flagKey, '1');
      } else if (!seenReplicas && (await redis.get(flagKey)) === '1') seenReplicas = true;
      const want = needed();
      if (want > replicas && !warned) {
        warned = true;
        logger?.warn(
          { needed: want, connectedReplicas: replicas },
          'the primary has fewer connected replicas than a create waits for: creates are held until they are back',
        );
      } else if (want <= replicas) warned = false;
    } catch (err) {
      logger?.debug({ err: (err as Error).message }, 'INFO replication failed; kept the last answer');
    }
  }

  function round(node: Redis, want: number): Promise<number> {
    let r = rounds.get(node);
    if (!r) {
      r = {};
      rounds.set(node, r);
    }
    const state = r;
    if (!state.inFlight) {
      stats.waits++;
      const sent = node.wait(want, timeoutMs).finally(() => {
        state.inFlight = undefined;
      });
      state.inFlight = sent;
      return sent;
    }
    // A WAIT already under way was sent before this write's answer: it may not cover it.
    state.next ??= state.inFlight
      .catch(() => 0)
      .then(() => {
        state.next = undefined;
        return round(node, want);
      });
    return state.next;
  }

  function record(c: Confirmation): Confirmation {
    stats.confirms++;
    if (!c.ok) stats.failures++;
    stats.recentMs.push(c.ms);
    if (stats.recentMs.length > 2000) stats.recentMs.splice(0, stats.recentMs.length - 2000);
    return c;
  }

  async function confirm(mark: WriteMark): Promise<Confirmation> {
    const want = mark.needed;
    if (want <= 0) return { ok: true, replicas: 0, needed: 0, ms: 0 };
    const started = performance.now();
    const ms = () => performance.now() - started;
    const fail = (reason: string, replicas = 0) =>
      record({ ok: false, replicas, needed: want, ms: ms(), reason });
    const node = mark.node;
    if (!node) return fail('the primary of the deployment’s slot is not known yet');
    const same = () => nodeFor(redis, key) === node && generationOf(node) === mark.generation;
    if (!same()) return fail('the connection to the primary changed during the write');
    let acked: number;
    let timer: NodeJS.Timeout | undefined;
    try {
      acked = await Promise.race([
        round(node, want),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no answer')), 2 * timeoutMs + 2000);
        }),
      ]);
    } catch (err) {
      return fail(`WAIT failed: ${(err as Error).message}`);
    } finally {
      if (timer) clearTimeout(timer);
    }
    if (!same()) return fail('the connection to the primary changed during WAIT', acked);
    if (acked < want)
      return fail(`${acked} of ${want} replica(s) acknowledged the write within ${timeoutMs} ms`, acked);
    return record({ ok: true, replicas: acked, needed: want, ms: ms() });
  }

  async function barrier(): Promise<Confirmation> {
    const mark: WriteMark = (() => {
      const node = nodeFor(redis, key);
      return { node, generation: node ? generationOf(node) : -1, needed: needed() };
    })();
    if (mark.needed <= 0) return { ok: true, replicas: 0, needed: 0, ms: 0 };
    try {
      await redis.set(flagKey, '1');
    } catch (err) {
      return record({
        ok: false,
        replicas: 0,
        needed: mark.needed,
        ms: 0,
        reason: `the barrier's write failed: ${(err as Error).message}`,
      });
    }
    return confirm(mark);
  }

  await refresh();
  const timer =
    (options.refreshMs ?? 30_000) > 0
      ? setInterval(() => void refresh(), options.refreshMs ?? 30_000)
      : undefined;
  timer?.unref();
  logger?.debug(
    { needed: needed(), connectedReplicas: connected, cluster: isCluster(redis) },
    'creates wait for replicas',
  );
  return {
    needed,
    mark() {
      const node = nodeFor(redis, key);
      return { node, generation: node ? generationOf(node) : -1, needed: needed() };
    },
    confirm,
    barrier,
    refresh,
    stats: () => ({ ...stats, recentMs: [...stats.recentMs] }),
    close() {
      if (timer) clearInterval(timer);
    },
  };
}
