/**
 * The daemon's guard (issue 25): an unhandled error that is Redis being away is logged and the
 * process goes on; any other one is logged and stops it with exit 1; a Redis that does not answer
 * PING for `giveUpAfterMs` stops it with exit 1 and one line; one that answers again before that
 * does not.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { type DaemonGuard, guardDaemon } from '../../../src/cli/boot/guard-daemon.js';
import type { Redis } from '../../../src/lib/redis/create-redis.js';
import { captureLogger } from '../../support/capture-logger.js';

const guards: DaemonGuard[] = [];
afterEach(() => {
  for (const g of guards.splice(0)) g.close();
});

function world(answers: () => boolean) {
  const log = captureLogger('debug');
  const events = new EventEmitter();
  const stops: number[] = [];
  let clock = 0;
  const redis = {
    status: 'ready',
    ping: async () => {
      if (!answers()) throw new Error('Connection is closed.');
      return 'PONG';
    },
  } as unknown as Redis;
  const guard = guardDaemon({
    logger: log.logger,
    redis,
    giveUpAfterMs: 10_000,
    stop: (code) => stops.push(code()),
    everyMs: 10,
    events,
    now: () => clock,
  });
  guards.push(guard);
  return { log, events, stops, advance: (ms: number) => (clock += ms), guard };
}

const tick = () => new Promise((r) => setTimeout(r, 40));

describe('the daemon guard', () => {
  it('an unhandled Redis-away error is logged and the process goes on; another one stops it with exit 1', () => {
    const w = world(() => true);
    w.events.emit('unhandledRejection', new Error('Connection is closed.'));
    expect(w.stops).toEqual([]);
    w.events.emit('uncaughtException', new TypeError('x is not a function'));
    expect(w.stops).toEqual([1]);
    const lines = w.log.lines().filter((l) => l.msg === 'unhandled error');
    expect(lines.map((l) => [l.kind, l.redisAway])).toEqual([
      ['unhandledRejection', true],
      ['uncaughtException', false],
    ]);
  });

  it('Redis silent for giveUpAfter: one line and exit 1; answering again before it: nothing', async () => {
    let up = false;
    const w = world(() => up);
    await tick();
    w.advance(9_000);
    await tick();
    expect(w.stops).toEqual([]);
    up = true;
    await tick();
    expect(w.guard.downMs()).toBe(0);
    up = false;
    await tick();
    w.advance(10_001);
    await tick();
    expect(w.stops).toEqual([1]);
    const gaveUp = w.log.lines().filter((l) => String(l.msg).includes('redis.giveUpAfter'));
    expect(gaveUp).toHaveLength(1);
    expect(w.log.lines().filter((l) => l.msg === 'redis answers again')).toHaveLength(1);
  });
});
