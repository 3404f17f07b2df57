/**
 * Clear words when Redis is away: the reasons a client or the OS gives, told plainly; which
 * errors are Redis gone (and which are not); what `status` says when it found nothing; the
 * back-off of `status --watch`.
 */
import { describe, expect, it } from 'vitest';
import {
  isConnectionError,
  noRedisMessage,
  plainReason,
  redisTrouble,
} from '../../../src/cli/boot/open-state.js';
import { retryDelayMs } from '../../../src/cli/commands/status.js';
import { FleetError } from '../../../src/lib/errors.js';

describe('plainReason', () => {
  it.each([
    ['connect ECONNREFUSED 127.0.0.1:6379', 'nothing listens there'],
    ['getaddrinfo ENOTFOUND redis.invalid', 'its host name does not resolve'],
    [
      'WRONGPASS invalid username-password pair or user is disabled.',
      'it refused the credentials in the URL',
    ],
    ['NOAUTH Authentication required.', 'it refused the credentials in the URL'],
    ['no answer within 3000 ms', 'no answer in time'],
    ['connect ETIMEDOUT', 'no answer in time'],
    [
      'Reached the max retries per request limit (which is 3). Refer to "maxRetriesPerRequest" option for details.',
      'the connection was lost',
    ],
    ['Connection is closed.', 'the connection was lost'],
    ['Unknown RESP type 72 "H". Please report this.', 'what answers there is not Redis'],
    ['LOADING Redis is loading the dataset in memory', 'it is still loading its data'],
    ['something else', 'it failed to answer'],
  ])('%s → %s', (message, plain) => {
    expect(plainReason(message)).toBe(plain);
  });
});

describe('redisTrouble', () => {
  it('tells a lost connection in one sentence that names the Redis, without the client library’s words', () => {
    const raw = Object.assign(new Error('Reached the max retries per request limit (which is 3).'), {
      name: 'MaxRetriesPerRequestError',
    });
    expect(isConnectionError(raw)).toBe(true);
    const told = redisTrouble(raw, 'Redis at redis://10.0.0.5:6379 (REDIS_URL)') as FleetError;
    expect(told).toBeInstanceOf(FleetError);
    expect(told.code).toBe('FLEET_ERR_REDIS_LOST');
    expect(told.message).toBe(
      'Redis at redis://10.0.0.5:6379 (REDIS_URL) stopped answering (the connection was lost): is it (or the daemon that started it) still running?',
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
    expect((redisTrouble(refused, 'X') as Error).message).toMatch(
      /^X stopped answering \(nothing listens there\)/,
    );
  });

  it('leaves other errors as they are', () => {
    const wrongType = new Error('WRONGTYPE Operation against a key holding the wrong kind of value');
    expect(isConnectionError(wrongType)).toBe(false);
    expect(redisTrouble(wrongType, 'X')).toBe(wrongType);
    const usage = new FleetError('FLEET_ERR_USAGE', 'no rollout');
    expect(isConnectionError(usage)).toBe(false);
    expect(redisTrouble(usage, 'X')).toBe(usage);
    expect(isConnectionError(new FleetError('FLEET_ERR_NO_REDIS', 'none'))).toBe(true);
  });
});

describe('noRedisMessage', () => {
  it('names the variable to set and the folder looked at', () => {
    expect(noRedisMessage({ dataDir: '/var/lib/fleet-upgrade' })).toBe(
      'No Redis to read: REDIS_URL is not set, and no private Redis of `fleet-upgrade run` was found in /var/lib/fleet-upgrade/redis. ' +
        "Set REDIS_URL to the deployment's Redis, or FLEET_UPGRADE_DATA_DIR to the data folder that `run` used (default .data).",
    );
  });
});

describe('status --watch back-off', () => {
  it('waits 1, 2, 4 … seconds between attempts, at most 30', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 100].map(retryDelayMs)).toEqual([
      1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});
