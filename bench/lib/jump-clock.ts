/**
 * A clock for a single serial actor: `sleep(ms)` moves time forward by `ms` at once. With a
 * simulator on this clock (it settles its events lazily, at each request), a script that only
 * sleeps and calls runs as a discrete-event simulation: the same simulated times as on a scaled
 * clock, without waiting for them and without the real milliseconds of the host in them (every
 * call takes no simulated time unless the caller says so). Only for one caller at a time.
 */
import type { Clock } from '../../src/lib/clock.js';

export function createJumpClock(start: number = Date.now()): Clock {
  let current = start;
  return {
    now: () => current,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason ?? new Error('aborted');
      current += Math.max(0, ms);
    },
  };
}
