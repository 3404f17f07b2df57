/**
 * A Clock for tests of code that backs off: `sleep` returns at once and moves time forward, and
 * every sleep is recorded, so a test can assert how long the code chose to wait without waiting.
 */
import type { Clock } from '../../src/lib/clock.js';

export interface InstantClock extends Clock {
  readonly sleeps: number[];
}

export function createInstantClock(start = 1_700_000_000_000): InstantClock {
  let now = start;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      now += Math.max(0, ms);
    },
  };
}
