/**
 * What keeps `run` and `worker` alive through Redis trouble, and what ends them when it lasts:
 *
 *   running ──Redis does not answer──► riding it out (every loop logs a failed round and tries the next)
 *      ▲                                  │
 *      └──── a PING answers ◄─────────────┤
 *                                         └── no PING answered for `giveUpAfterMs` ──► one line, exit 1
 *                                             (a supervisor restarts the process)
 *
 * A promise that nobody handled, or an exception nobody caught, is a defect: it is logged at
 * error level as `unhandled error` with its stack (the fault tests fail on that line). When it is
 * Redis being away (lib/redis/redis-unavailable.ts: a command of a connection that a failover
 * closed, for instance inside a library), the process goes on, as every loop of it does; any
 * other one stops the process with exit 1, as Node would, but through the bounded stop.
 */
import type { Logger } from '../../lib/logger.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import { pingWithin } from '../../lib/redis/ping-within.js';
import { isRedisUnavailable } from '../../lib/redis/redis-unavailable.js';
import { EXIT } from './exit-codes.js';

export interface GuardOptions {
  logger: Logger;
  /** The process's own connection: Redis counts as reachable while it answers a PING. */
  redis: Redis;
  /** Real ms without an answer after which the process exits 1 (`redis.giveUpAfter`). */
  giveUpAfterMs: number;
  /** Stops the process with an exit code (the stopper's `stop`). */
  stop(code: () => number): unknown;
  /** Real ms between two PINGs (default 2000). */
  everyMs?: number;
  /** Where the unhandled errors come from (default process). */
  events?: Pick<NodeJS.EventEmitter, 'on' | 'off'>;
  now?: () => number;
}

export interface DaemonGuard {
  /** Real ms since Redis last answered (0 while it answers). */
  downMs(): number;
  close(): void;
}

export function guardDaemon(options: GuardOptions): DaemonGuard {
  const { logger, redis } = options;
  const now = options.now ?? Date.now;
  const everyMs = options.everyMs ?? 2000;
  const events = options.events ?? process;
  let lastAnswer = now();
  let down = false;
  let gaveUp = false;
  let looking = false;

  const look = async () => {
    if (looking || gaveUp) return;
    looking = true;
    try {
      const failed = await pingWithin(redis, Math.min(everyMs, 2000));
      if (failed === undefined) {
        if (down) logger.info({ downMs: now() - lastAnswer }, 'redis answers again');
        down = false;
        lastAnswer = now();
        return;
      }
      if (!down)
        logger.warn(
          { err: failed, giveUpAfterMs: options.giveUpAfterMs },
          'redis does not answer; riding it out',
        );
      down = true;
      const silentMs = now() - lastAnswer;
      if (silentMs >= options.giveUpAfterMs) {
        gaveUp = true;
        logger.error(
          { downMs: silentMs, giveUpAfterMs: options.giveUpAfterMs, err: failed },
          'redis has not answered for redis.giveUpAfter: exiting so that a supervisor restarts this process',
        );
        options.stop(() => EXIT.failure);
      }
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(() => void look(), everyMs);
  timer.unref();

  const unhandled = (err: unknown, kind: string) => {
    const e = err instanceof Error ? err : new Error(String(err));
    const redisAway = isRedisUnavailable(e);
    logger.error({ kind, err: e.message, stack: e.stack, redisAway }, 'unhandled error');
    if (!redisAway) options.stop(() => EXIT.failure);
  };
  const onRejection = (reason: unknown) => unhandled(reason, 'unhandledRejection');
  const onException = (err: unknown) => unhandled(err, 'uncaughtException');
  events.on('unhandledRejection', onRejection);
  events.on('uncaughtException', onException);

  return {
    downMs: () => (down ? now() - lastAnswer : 0),
    close() {
      clearInterval(timer);
      events.off('unhandledRejection', onRejection);
      events.off('uncaughtException', onException);
    },
  };
}
