/** The per-caller token bucket of the control endpoints (src/http/rate-limiter.ts), on a manual clock. */
import { describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/http/rate-limiter.js';

describe('RateLimiter', () => {
  it('allows a burst, then one request per interval, per caller', () => {
    let now = 0;
    const limiter = new RateLimiter({ burst: 3, perSecond: 0.5, now: () => now });
    for (let i = 0; i < 3; i++) expect(limiter.take('a')).toEqual({ ok: true });
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 2 });
    // Another caller has its own bucket.
    expect(limiter.take('b')).toEqual({ ok: true });
    now += 1000;
    expect(limiter.take('a')).toEqual({ ok: false, retryAfterSeconds: 1 });
    now += 1000;
    expect(limiter.take('a')).toEqual({ ok: true });
    expect(limiter.take('a').ok).toBe(false);
    // Refilled to the burst, not beyond.
    now += 3_600_000;
    for (let i = 0; i < 3; i++) expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false);
  });

  it('keeps at most maxCallers buckets, forgetting the least recently used', () => {
    const limiter = new RateLimiter({ burst: 1, perSecond: 0.001, maxCallers: 2, now: () => 0 });
    expect(limiter.take('a').ok).toBe(true);
    expect(limiter.take('b').ok).toBe(true);
    expect(limiter.take('a').ok).toBe(false); // a is now the most recent
    expect(limiter.take('c').ok).toBe(true); // b is forgotten
    expect(limiter.take('a').ok).toBe(false);
    expect(limiter.take('b').ok).toBe(true); // b was forgotten: a fresh bucket (c goes now)
  });
});
