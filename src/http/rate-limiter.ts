/**
 * A token bucket per caller (the remote address) for the control endpoints: `burst` requests at
 * once, then `perSecond`. Operators act a few times a minute; a script in a loop or a guesser of
 * tokens gets 429 with `Retry-After`. At most `maxCallers` buckets are kept (the oldest go
 * first), so many addresses cannot grow the process's memory. In memory, per process: a bound on
 * one daemon's work, not a budget shared across processes. Real time, not the rollout clock.
 */

export interface RateLimiterOptions {
  burst: number;
  perSecond: number;
  maxCallers?: number;
  /** Real ms (default `performance.now`). */
  now?: () => number;
}

export type RateDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export const CONTROL_RATE = { burst: 20, perSecond: 1 } as const;

export class RateLimiter {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #burst: number;
  readonly #perMs: number;
  readonly #maxCallers: number;
  readonly #now: () => number;

  constructor(options: RateLimiterOptions) {
    this.#burst = options.burst;
    this.#perMs = options.perSecond / 1000;
    this.#maxCallers = options.maxCallers ?? 10_000;
    this.#now = options.now ?? (() => performance.now());
  }

  /** Takes one token of `caller`'s bucket, or says how long to wait for one. */
  take(caller: string): RateDecision {
    const now = this.#now();
    const bucket = this.#buckets.get(caller);
    let tokens = this.#burst;
    if (bucket) {
      tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
      // Re-inserted below: the map's order is the order of last use.
      this.#buckets.delete(caller);
    } else if (this.#buckets.size >= this.#maxCallers) {
      const oldest = this.#buckets.keys().next().value;
      if (oldest !== undefined) this.#buckets.delete(oldest);
    }
    if (tokens < 1) {
      this.#buckets.set(caller, { tokens, at: now });
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - tokens) / this.#perMs / 1000)) };
    }
    this.#buckets.set(caller, { tokens: tokens - 1, at: now });
    return { ok: true };
  }
}
