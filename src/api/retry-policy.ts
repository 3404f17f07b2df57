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

/**
 * The longest Retry-After honoured, in ms of service time; a longer one (`999999`, a date next
 * year) is cut to this. Why 60 s: the service counts requests per second (4/s, a 1 s window),
 * and no Retry-After is documented for it at all, so a real one is a few seconds; every process
 * sharing the budget pauses for it, so one hostile header could otherwise stop the whole fleet
 * for days. 60 s is also the largest pause that fits inside the defaults around it: a retry
 * after it still ends within `maxTotalMs` (120 s), and a request waiting for the budget still
 * gets its slot within the budget's `maxWaitMs` (120 s real) instead of failing.
 */
export const MAX_RETRY_AFTER_MS = 60_000;

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
