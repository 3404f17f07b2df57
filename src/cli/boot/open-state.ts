/**
 * The orchestrator's state in Redis for the commands that need no daemon (`status`, `report`,
 * `history`, `pause`, `resume`, `abort`, `promote`, `retry`, `forget`): the Redis the settings
 * name (REDIS_URL, Sentinel or Cluster: read-redis-settings.ts), else the private Redis of `run`
 * on this machine: the server of a `run`
 * that is running, or one started here from its data folder for as long as the command runs
 * (private-redis.ts). When none is found or it does not answer, one sentence says what was
 * looked at and what to set; a connection lost later is told in words too (`redisTrouble`).
 * Every wait while opening has a time limit (the probe 3 s, then REDIS_START_LIMIT_MS for each
 * command): a Redis that accepts connections and never answers ends the command with a sentence
 * naming what it waited for and where (the URL without credentials), never a hang.
 */

import type { Clock } from '../../lib/clock.js';
import { FleetError } from '../../lib/errors.js';
import { createLogger, type Logger } from '../../lib/logger.js';
import {
  answerWithin,
  closeRedis,
  createRedis,
  formatSeconds,
  probeRedis,
} from '../../lib/redis/create-redis.js';
import { findPrivateRedis, type PrivateRedis, privateRedisPaths } from '../../lib/redis/private-redis.js';
import { describeRedis, type RedisTarget, settingOf } from '../../lib/redis/redis-target.js';
import { isRedisUnavailable } from '../../lib/redis/redis-unavailable.js';
import { readSharedClock } from '../../lib/shared-clock.js';
import { createState, type FleetState } from './create-state.js';
import { type DaemonConfig, redisTargetOf } from './daemon-config.js';

export { PRIVATE_REDIS_URL_FILE } from '../../lib/redis/private-redis.js';

export interface StateAccess extends FleetState {
  /** The deployment's clock (a rehearsal's scaled one), for the times a command writes. */
  clock: Clock;
  /** Which Redis, in words: `Redis at redis://10.0.0.5:6379/ (REDIS_URL)`. */
  where: string;
  /** This command started a private Redis and a `run` (or another command) waits for its folder. */
  handoverWanted(): boolean;
  close(): Promise<void>;
}

export interface OpenStateOptions {
  /** The command, as other processes are told who holds the private Redis (default: from argv). */
  name?: string;
  logger?: Logger;
  /** Real ms to wait for a process that holds the private Redis's folder (default 15 s). */
  waitMs?: number;
}

/** Why Redis does not answer, in plain words, from a client's or the OS's error message. */
export function plainReason(message: string): string {
  if (/ECONNREFUSED/.test(message)) return 'nothing listens there';
  if (/ENOTFOUND|EAI_AGAIN/.test(message)) return 'its host name does not resolve';
  if (/NOAUTH|WRONGPASS|invalid password|invalid username-password/i.test(message))
    return 'it refused the credentials in the URL';
  if (/ETIMEDOUT|timed? ?out|no answer within/i.test(message)) return 'no answer in time';
  if (/max retries per request|Connection is closed|ECONNRESET|EPIPE|isn't writeable|socket/i.test(message))
    return 'the connection was lost';
  if (/LOADING/.test(message)) return 'it is still loading its data';
  if (/RESP type|Protocol error/i.test(message)) return 'what answers there is not Redis';
  return 'it failed to answer';
}

/** Whether an error is Redis being away (not an answer of Redis to a command). */
export function isConnectionError(err: unknown): boolean {
  return isRedisUnavailable(err);
}

/** `err` told in words when it is Redis gone away while `where` was in use; else `err`. */
export function redisTrouble(err: unknown, where: string): unknown {
  if (!isConnectionError(err) || err instanceof FleetError) return err;
  return new FleetError(
    'FLEET_ERR_REDIS_LOST',
    `${where} stopped answering (${plainReason((err as Error).message)}): is it (or the daemon that started it) still running?`,
    { cause: err },
  );
}

export function noRedisMessage(config: Pick<DaemonConfig, 'dataDir'>): string {
  const paths = privateRedisPaths(config.dataDir);
  return (
    `No Redis to read: REDIS_URL is not set, and no private Redis of \`fleet-upgrade run\` was found in ${paths.dir}. ` +
    "Set REDIS_URL to the deployment's Redis, or FLEET_UPGRADE_DATA_DIR to the data folder that `run` used (default .data)."
  );
}

/** How long the first look at REDIS_URL waits for PING. */
const PROBE_MS = 3000;

export async function openState(config: DaemonConfig, options: OpenStateOptions = {}): Promise<StateAccess> {
  const logger = options.logger ?? createLogger({ level: 'silent', name: 'cli' });
  let target: RedisTarget | undefined = redisTargetOf(config);
  let where = target ? `${describeRedis(target)} (${settingOf(target)})` : '';
  let local: PrivateRedis | undefined;
  if (target) {
    const failure = await probeRedis(target, PROBE_MS);
    if (failure !== undefined) {
      const reason = plainReason(failure.reason);
      const told =
        reason === 'no answer in time'
          ? `did not answer PING within ${formatSeconds(PROBE_MS)}`
          : `does not answer (${reason})`;
      throw new FleetError(
        'FLEET_ERR_NO_REDIS',
        `${where} ${told}: start it, or set ${settingOf(target)} to the deployment's Redis.`,
      );
    }
  } else {
    local = await findPrivateRedis({
      dataDir: config.dataDir,
      logger,
      name: options.name ?? process.argv[2] ?? 'command',
      ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
    });
    if (!local) throw new FleetError('FLEET_ERR_NO_REDIS', noRedisMessage(config));
    target = { kind: 'standalone', url: local.url };
    const dir = privateRedisPaths(config.dataDir).dir;
    where = local.started
      ? `The private Redis started from ${dir}`
      : `The private Redis of \`fleet-upgrade run\` (${local.url}, data in ${dir})`;
  }
  // A short disconnectTimeout: ioredis's default keeps a closed command's process alive 2 s longer.
  const redis = createRedis(target, {
    name: 'cli',
    connectTimeoutMs: 3000,
    extra: { disconnectTimeout: 100 },
  });
  const close = async () => {
    await closeRedis(redis, 1000);
    await local?.stop();
  };
  const advice = `try again when it answers, or set ${settingOf(target)} to the deployment's Redis.`;
  try {
    await answerWithin(redis.ping(), { where, what: 'PING', advice });
    const state = createState(redis, config.keyPrefix);
    return {
      ...state,
      clock: await answerWithin(readSharedClock(redis, state.keys.clock), {
        where,
        what: 'the read of its clock',
        advice,
      }),
      where,
      handoverWanted: () => local?.wanted() ?? false,
      close,
    };
  } catch (err) {
    await close();
    throw redisTrouble(err, where);
  }
}

/** Opens the state, runs `work`, closes it; Redis lost meanwhile is told in words. */
export async function withState<T>(
  config: DaemonConfig,
  work: (state: StateAccess) => Promise<T>,
  options: OpenStateOptions = {},
): Promise<T> {
  const state = await openState(config, options);
  try {
    return await work(state);
  } catch (err) {
    throw redisTrouble(err, state.where);
  } finally {
    await state.close();
  }
}
