/**
 * The wait before the next attempt after `failures` failed attempts in a row: `initial`, doubled
 * after each failure, at most `max`, less up to a fifth at random so that processes and webhooks
 * that failed together do not all come back at the same instant.
 */
import type { WebhookRetry } from './read-webhooks.js';

export function retryDelay(
  failures: number,
  retry: Pick<WebhookRetry, 'initialMs' | 'maxMs'>,
  random: () => number = Math.random,
): number {
  const exponent = Math.min(Math.max(failures - 1, 0), 40);
  const base = Math.min(retry.maxMs, retry.initialMs * 2 ** exponent);
  return Math.round(base * (1 - 0.2 * random()));
}
