/**
 * The chaos of the chaos test: `kills` SIGKILLs, a random gap apart, each of a random running
 * process, started again after a random pause (without waiting: other kills may come while it is
 * down); the middle one is of redis-server instead (on Sentinel: of the primary, and the replica
 * promoted), started again (from its append-only file on the same port, or as the new primary's
 * replica) before the loop goes on. Bounded by `kills`; `stop()` ends it early (the rollout
 * converged) and waits until every killed process has been started again.
 */
import type { Random } from '../../../src/lib/random.js';
import type { ChaosRedis } from './chaos-redis.js';
import type { CliProcess } from './cli-process.js';
import { sleep } from './sleep.js';

export interface KillEvent {
  /** Real ms since the processes started. */
  atMs: number;
  target: string;
  pid?: number;
  /** Real ms until it was started again. */
  restartAfterMs: number;
  /** Collectors with an outcome, of all, when it was killed. */
  done: number;
  total: number;
}

export interface KillLoopOptions {
  processes: readonly CliProcess[];
  /** Its kill is a SIGKILL of the (primary) redis-server; its restart brings that node back. */
  redis: Pick<ChaosRedis, 'kill' | 'restart'>;
  rng: Random;
  kills: number;
  /** Mean real ms between two kills (each gap is drawn in [0.5, 1.5] × this). */
  meanGapMs: number;
  /** Longest real pause before a killed process (or Redis) is started again; the shortest is 200 ms. */
  maxPauseMs: number;
  /** Real ms the kill times count from. */
  since: number;
  progress(): { done: number; total: number };
  say(line: string): void;
}

export interface KillLoop {
  readonly kills: readonly KillEvent[];
  stop(): Promise<void>;
}

export function startKillLoop(o: KillLoopOptions): KillLoop {
  const halt = new AbortController();
  const kills: KillEvent[] = [];
  const restarts: Promise<void>[] = [];
  const redisAt = Math.floor(o.kills / 2);
  const tell = (e: KillEvent) =>
    o.say(
      `${(e.atMs / 1000).toFixed(1).padStart(6)} s SIGKILL ${e.target}${e.pid ? ` (pid ${e.pid})` : ''}, ${e.done}/${e.total} done`,
    );
  const loop = (async () => {
    for (let i = 0; i < o.kills; i++) {
      await sleep(o.meanGapMs * (0.5 + o.rng.next()), halt.signal);
      if (halt.signal.aborted) return;
      const restartAfterMs = o.rng.int(200, o.maxPauseMs);
      const atMs = Date.now() - o.since;
      if (i === redisAt) {
        await o.redis.kill();
        const event = { atMs, target: 'redis-server', restartAfterMs, ...o.progress() };
        kills.push(event);
        tell(event);
        await sleep(restartAfterMs);
        await o.redis.restart();
        continue;
      }
      const live = o.processes.filter((p) => p.running);
      if (!live.length) continue;
      const victim = o.rng.pick(live);
      const pid = victim.pid;
      await victim.kill();
      const event = { atMs, target: victim.name, ...(pid ? { pid } : {}), restartAfterMs, ...o.progress() };
      kills.push(event);
      tell(event);
      restarts.push(sleep(restartAfterMs).then(() => victim.start()));
    }
  })();
  return {
    kills,
    async stop() {
      halt.abort();
      await loop;
      await Promise.all(restarts);
    },
  };
}
