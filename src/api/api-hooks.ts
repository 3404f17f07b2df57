/**
 * Per-request observations for the metrics module (and anyone else): one event per HTTP attempt
 * and one per operation. Events carry no credentials and no URLs with query strings, only the
 * endpoint name, so they are safe to turn into labels.
 */
import type { ApiEndpoint, ApiErrorKind, VendorCreateCode } from './api-error.js';

/** What became of an attempt or an operation. */
export type ApiOutcome = 'ok' | ApiErrorKind | VendorCreateCode | 'moved' | 'ambiguous';

export interface ApiAttemptEvent {
  endpoint: ApiEndpoint;
  method: 'GET' | 'POST';
  /** 1 for the first attempt. */
  attempt: number;
  /** HTTP status, or undefined when no answer came (network error, time-out). */
  statusCode: number | undefined;
  outcome: ApiOutcome;
  /** From sending to the end of the body, in real ms (budget wait excluded). */
  durationMs: number;
  /** Real ms spent waiting for the request budget before sending. */
  budgetWaitMs: number;
  /** The service answered 429. */
  rateLimited: boolean;
}

export interface ApiOperationEvent {
  endpoint: ApiEndpoint;
  outcome: ApiOutcome;
  /** HTTP attempts in all (1 = no retry). */
  attempts: number;
  /** attempts - 1 */
  retries: number;
  /** 429s met along the way. */
  rateLimitedCount: number;
  /** From the call to its result, in real ms (budget waits and backoff included). */
  durationMs: number;
}

export interface ApiHooks {
  onAttempt?(event: ApiAttemptEvent): void;
  onOperation?(event: ApiOperationEvent): void;
}
