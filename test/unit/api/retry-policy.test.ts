import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_RETRY, decideRetry } from '../../../src/api/retry-policy.js';

const options = { maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000, maxTotalMs: 10_000 };

describe('backoffDelay (full jitter)', () => {
  it('spans 0 up to the doubling cap', () => {
    expect(backoffDelay(1, options, () => 0)).toBe(0);
    expect(backoffDelay(1, options, () => 0.999)).toBe(99);
    expect(backoffDelay(2, options, () => 0.999)).toBe(199);
    expect(backoffDelay(3, options, () => 0.5)).toBe(200);
  });

  it('is capped by maxDelayMs', () => {
    expect(backoffDelay(30, options, () => 0.999)).toBe(999);
  });

  it('spreads waits over the whole range', () => {
    const waits = Array.from({ length: 2000 }, () => backoffDelay(4, options));
    expect(Math.min(...waits)).toBeLessThan(80);
    expect(Math.max(...waits)).toBeGreaterThan(720);
  });
});

describe('decideRetry', () => {
  it('stops after maxAttempts', () => {
    expect(decideRetry({ attempt: 4, elapsedMs: 0, options, random: () => 0.5 }).retry).toBe(true);
    expect(decideRetry({ attempt: 5, elapsedMs: 0, options, random: () => 0.5 })).toEqual({
      retry: false,
      delayMs: 0,
    });
  });

  it('never waits less than Retry-After', () => {
    expect(decideRetry({ attempt: 1, elapsedMs: 0, retryAfterMs: 3000, options, random: () => 0.5 })).toEqual(
      {
        retry: true,
        delayMs: 3000,
      },
    );
  });

  it('gives up when the wait would pass the total budget', () => {
    expect(decideRetry({ attempt: 1, elapsedMs: 9000, retryAfterMs: 2000, options }).retry).toBe(false);
  });

  it('has documented defaults', () => {
    expect(DEFAULT_RETRY).toEqual({
      maxAttempts: 5,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
      maxTotalMs: 120_000,
    });
  });
});
