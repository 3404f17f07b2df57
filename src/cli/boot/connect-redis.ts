/**
 * The Redis of a process: the one the settings name (a URL, Sentinel or Cluster:
 * read-redis-settings.ts), or for `run` a private redis-server with append-only
 * persistence in the data folder (private-redis.ts: `status`, `report` and the other commands
 * find it there, and open the folder themselves once `run` has stopped). Opens the
 * connection of the process's own commands and the one BullMQ needs; `close()` undoes it all.
 * The first PING has a time limit (REDIS_START_LIMIT_MS): a Redis that accepts connections and
 * never answers fails the start with one sentence naming it, instead of hanging it.
 */
import { join } from 'node:path';
import { FleetError } from '../../lib/errors.js';
import type { Logger } from '../../lib/logger.js';
import {
  answerWithin,
  closeRedis,
  createRedis,
  REDIS_START_LIMIT_MS,
  type Redis,
} from '../../lib/redis/create-redis.js';
import { startPrivateRedis } from '../../lib/redis/private-redis.js';
import { describeRedis, type RedisTarget, settingOf } from '../../lib/redis/redis-target.js';
import { isRedisUnavailable } from '../../lib/redis/redis-unavailable.js';
import { type DaemonConfig, redisTargetOf } from './daemon-config.js';
import { plainReason } from './open-state.js';

export interface RedisConnections {
  /** Where every further connection of the process goes (createRedis). */
  target: RedisTarget;
  redis: Redis;
  /** For BullMQ (commands wait for Redis to come back instead of failing). */
  bullConnection: Redis;
  close(): Promise<void>;
}

export async function connectRedis(
  config: Pick<DaemonConfig, 'redisUrl' | 'redis' | 'dataDir'>,
  logger: Logger,
  role: string,
): Promise<RedisConnections> {
  const undo: (() => Promise<unknown>)[] = [];
  const close = async () => {
    for (const step of undo.reverse()) await step().catch(() => undefined);
  };
  try {
    let target = redisTargetOf(config);
    let where = target ? `${describeRedis(target)} (${settingOf(target)})` : '';
    let advice = target
      ? `check that it is running and that ${settingOf(target)} names the deployment's Redis.`
      : '';
    if (!target) {
      // Holds <dataDir>/redis.lock while it serves the folder; `status`, `report` and the other
      // commands on this machine find it through <dataDir>/redis-url, and open the folder
      // themselves once it has stopped (private-redis.ts).
      const local = await startPrivateRedis({ dataDir: config.dataDir, logger });
      target = { kind: 'standalone', url: local.url };
      where = `The private Redis at ${local.url} (data in ${join(config.dataDir, 'redis')})`;
      advice = 'is its redis-server stopped or overloaded?';
      undo.push(() => local.stop());
      logger.info(
        { source: 'local', dataDir: join(config.dataDir, 'redis') },
        'REDIS_URL is not set: started a private Redis',
      );
    }
    const redis = createRedis(target, { logger, name: role });
    undo.push(() => closeRedis(redis));
    // The first connection error says why (ECONNREFUSED, NOAUTH ...); the failed PING only that it gave up.
    let firstError: string | undefined;
    const keepFirst = (err: Error) => {
      firstError ??= err.message;
    };
    redis.on('error', keepFirst);
    // Tried again until the limit, 250 ms to 2 s apart: a process that starts during a failover or a restart of Redis
    // (a supervisor restarting it then) waits for it, as a running one does (issue 25).
    const deadline = Date.now() + REDIS_START_LIMIT_MS;
    let pauseMs = 250;
    for (;;) {
      const left = Math.max(1, deadline - Date.now());
      const failed = await answerWithin(redis.ping(), { where, what: 'PING', advice }, left).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (failed === undefined) break;
      if (failed instanceof FleetError) throw failed;
      if (!isRedisUnavailable(failed) || Date.now() + pauseMs >= deadline) {
        const reason = plainReason(firstError ?? (failed instanceof Error ? failed.message : String(failed)));
        throw new FleetError(
          'FLEET_ERR_REDIS_UNAVAILABLE',
          `${where} does not answer (${reason}): ${advice}`,
          {
            cause: failed,
          },
        );
      }
      await new Promise((r) => setTimeout(r, pauseMs));
      pauseMs = Math.min(pauseMs * 2, 2000);
    }
    redis.off('error', keepFirst);
    const bullConnection = createRedis(target, { logger, name: `${role}-bullmq`, forBullmq: true });
    undo.push(() => closeRedis(bullConnection));
    return { target, redis, bullConnection, close };
  } catch (err) {
    await close();
    throw err;
  }
}
