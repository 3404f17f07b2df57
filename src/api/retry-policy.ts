/**
 * When to try a request again and how long to wait first: exponential backoff with full jitter
 * (a uniformly random wait between 0 and base·2^(n-1), capped), never shorter than a
 * Retry-After the service sent, bounded in attempts and in total time. Durations are in the
 * service's time (the client's Clock), so a simulator at time scale K waits K times less.
 */

export interface RetryOptions {
  /** Attempts in all, the first included. Default 5. */
  maxAttempts: number;
  /** Cap of the first backoff, in ms. Default 500. */
  baseDelayMs: number;
  /** Largest backoff cap, in ms. Default 30 000. */
  maxDelayMs: number;
  /** No retry whose wait would end more than this many ms after the first attempt began. Default 120 000. */
  maxTotalMs: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 5,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
  maxTotalMs: 120_000,
};

/** Full-jitter backoff before attempt `attempt + 1`, after `attempt` failed ones (attempt ≥ 1). */
export function backoffDelay(
  attempt: number,
  options: RetryOptions,
  random: () => number = Math.random,
): number {
  const cap = Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * cap);
}

export interface RetryDecision {
  retry: boolean;
  /** Wait before the next attempt, in ms (0 when not retrying). */
  delayMs: number;
}

/**
 * Decides whether attempt `attempt` (which failed retryably) gets a successor.
 * `elapsedMs` is the time since the first attempt began.
 */
export function decideRetry(input: {
  attempt: number;
  elapsedMs: number;
  retryAfterMs?: number | undefined;
  options: RetryOptions;
  random?: () => number;
}): RetryDecision {
  const { attempt, elapsedMs, retryAfterMs, options } = input;
  if (attempt >= options.maxAttempts) return { retry: false, delayMs: 0 };
  const delayMs = Math.max(retryAfterMs ?? 0, backoffDelay(attempt, options, input.random));
  if (elapsedMs + delayMs > options.maxTotalMs) return { retry: false, delayMs: 0 };
  return { retry: true, delayMs };
}
