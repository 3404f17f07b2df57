/**
 * When the scheduler watches tasks through the listings instead of reading their status
 * (listing-pass.ts), and how a watched task's job sleeps (poll-schedule.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  WATCH_MAX_INTERVAL_MS,
  WATCH_MIN_INTERVAL_MS,
  watchDecision,
} from '../../../src/rollout/listings/index.js';
import { watchedDelay } from '../../../src/worker/poll-schedule.js';

const MIN = 60_000;

describe('watchDecision', () => {
  it('watches a small fleet: one page per pass costs far less than a read per task', () => {
    const d = watchDecision({ pagesPerPass: 1, inFlight: 10, medianMs: 3 * MIN, watching: false });
    // A pass every fifth of the median: completions noticed a tenth of it late on average.
    expect(d.intervalMs).toBe(36_000);
    expect(d.cost).toBeCloseTo(0.5, 5);
    expect(d.watch).toBe(true);
  });

  it('passes more often while they stay cheap: a quarter of a request per finished task', () => {
    // 50 under way: a page every 14.4 s (180 s / (50 × 0.25)) instead of every 36 s.
    const d = watchDecision({ pagesPerPass: 1, inFlight: 50, medianMs: 3 * MIN, watching: false });
    expect(d.intervalMs).toBe(14_000);
    expect(d.cost).toBeCloseTo(180 / (50 * 14), 5);
    expect(d.watch).toBe(true);
    // Never below the minimum, however many are under way.
    expect(
      watchDecision({ pagesPerPass: 1, inFlight: 1000, medianMs: 3 * MIN, watching: false }).intervalMs,
    ).toBe(WATCH_MIN_INTERVAL_MS);
  });

  it('reads statuses for a large fleet: 100 pages per pass cost more than the reads', () => {
    const d = watchDecision({ pagesPerPass: 100, inFlight: 50, medianMs: 3 * MIN, watching: false });
    expect(d.cost).toBeCloseTo(10, 5);
    expect(d.watch).toBe(false);
  });

  it('does not flap: on below 0.8, off above 1.2', () => {
    // cost = pages × median / (inFlight × interval) = pages / (inFlight × 0.2) here.
    const at = (pages: number, watching: boolean) =>
      watchDecision({ pagesPerPass: pages, inFlight: 5, medianMs: 3 * MIN, watching });
    expect(at(1, false).cost).toBe(1);
    expect(at(1, false).watch).toBe(false);
    expect(at(1, true).watch).toBe(true);
    expect(at(1.3, true).watch).toBe(false);
  });

  it('keeps the interval between its bounds', () => {
    expect(watchDecision({ pagesPerPass: 1, inFlight: 10, medianMs: 1000, watching: false }).intervalMs).toBe(
      WATCH_MIN_INTERVAL_MS,
    );
    expect(
      watchDecision({ pagesPerPass: 1, inFlight: 10, medianMs: 10 * 60 * MIN, watching: false }).intervalMs,
    ).toBe(WATCH_MAX_INTERVAL_MS);
  });
});

describe('watchedDelay', () => {
  it('reads a third of taskTimeout apart, and once just after the deadline', () => {
    const timeout = 36 * MIN;
    expect(watchedDelay(timeout, 0)).toBe(12 * MIN);
    expect(watchedDelay(timeout, 12 * MIN)).toBe(12 * MIN);
    expect(watchedDelay(timeout, 30 * MIN)).toBe(6 * MIN + 1);
    expect(watchedDelay(timeout, 40 * MIN)).toBe(12 * MIN);
  });
});
