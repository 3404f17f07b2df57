/**
 * The service's rate limits, in simulated time: at most `perSecond` requests per user in any
 * sliding one-second window (only admitted requests count), and at most `concurrent` requests
 * under way per access key. A limit of 0 is off.
 */
import type { RateLimit } from './schema.js';

export type Admission = { ok: true; release: () => void } | { ok: false; reason: 'rate' | 'concurrency' };

export class RateLimiter {
  private readonly windows = new Map<string, number[]>();
  private readonly inFlight = new Map<string, number>();

  /** Admits a request of `user` (by its access id) with `key` (its access key), or says why not. */
  admit(user: string, key: string, limit: RateLimit, now: number): Admission {
    const running = this.inFlight.get(key) ?? 0;
    if (limit.concurrent > 0 && running >= limit.concurrent) return { ok: false, reason: 'concurrency' };
    if (limit.perSecond > 0) {
      let window = this.windows.get(user);
      if (!window) {
        window = [];
        this.windows.set(user, window);
      }
      let drop = 0;
      while (drop < window.length && (window[drop] as number) <= now - 1000) drop++;
      if (drop > 0) window.splice(0, drop);
      if (window.length >= limit.perSecond) return { ok: false, reason: 'rate' };
      window.push(now);
    }
    this.inFlight.set(key, running + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.inFlight.set(key, (this.inFlight.get(key) ?? 1) - 1);
      },
    };
  }
}
