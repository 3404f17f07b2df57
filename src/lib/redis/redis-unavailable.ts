/**
 * Whether an error means that Redis is unavailable for a while (a dropped connection, a restart,
 * a failover under way, a Cluster electing a new primary), not that a command is wrong. Every
 * loop of a daemon treats such an error as a round that failed (logged, the next round runs);
 * only `redis.giveUpAfter` of them in a row ends a process (cli/boot/guard-daemon.ts). The one
 * place that knows the messages ioredis and Redis use for it.
 */
import { FleetError } from '../errors.js';

/** Socket error codes of a connection that went away or never came. */
const SOCKET_CODES =
  /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH)$/;

/**
 * ioredis's own (a closed connection, a command given up after its retries, the sentinels naming
 * a primary that does not answer yet, a Cluster without a slot's primary) and Redis's answers
 * while it cannot serve (a demoted primary's READONLY, an AOF being loaded, a replica whose link
 * to the primary is down, a Cluster that is down or moving slots).
 */
const MESSAGES =
  /max retries per request|Connection is closed|isn't writeable|All sentinels are unreachable|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|Command timed out|^READONLY|^LOADING|^MASTERDOWN|^CLUSTERDOWN|^TRYAGAIN|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready|Connection in subscriber mode/;

export function isRedisUnavailable(err: unknown): boolean {
  if (err instanceof FleetError) return /^FLEET_ERR_(NO_REDIS|REDIS_)/.test(err.code);
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code ?? '';
  return err.name === 'MaxRetriesPerRequestError' || SOCKET_CODES.test(code) || MESSAGES.test(err.message);
}
