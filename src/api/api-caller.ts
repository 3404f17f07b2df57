/**
 * The HTTP policy of the client, in one place. One call moves through:
 *   budget (lease + slot) → the caller's `beforeSend` → send → answer?
 *     301 moved   → resolve the deployment's base URL once (only to the service's own hosts,
 *                   redirect-target.ts), remember it, send again at once
 *     429 / 5xx   → (429: tell the budget) back off with full jitter, honour Retry-After (capped
 *                   at 60 s, MAX_RETRY_AFTER_MS), retry
 *     no answer   → idempotent: back off and retry; a create that may have been sent: "ambiguous"
 *     otherwise   → the final answer, for the operation to interpret
 * bounded by `retry.maxAttempts` and `retry.maxTotalMs`. Backoff runs on the injected Clock.
 * Every answer's text is scrubbed of the credentials sent (the Basic header, `id:key`, the key:
 * src/lib/scrub-secrets.ts) before anything reads it, so an echo of them is kept nowhere.
 */
import type { Clock } from '../lib/clock.js';
import { FleetError } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { createScrubber } from '../lib/scrub-secrets.js';
import { type ApiEndpoint, ApiError, isVendorCreateCode } from './api-error.js';
import type { ApiHooks, ApiOutcome } from './api-hooks.js';
import { describeAnswer, errorInfoOf, kindForStatus, readRetryAfter } from './classify-response.js';
import type { HttpAnswer, HttpTransport } from './http-transport.js';
import { TransportError } from './http-transport.js';
import { redirectTarget } from './redirect-target.js';
import { REQUEST_PRIORITY, type RequestBudget } from './request-budget.js';
import { decideRetry, MAX_RETRY_AFTER_MS, type RetryOptions } from './retry-policy.js';
import { clipText, TEXT_LIMITS } from './untrusted-text.js';

export interface CallSpec {
  endpoint: ApiEndpoint;
  method: 'GET' | 'POST';
  /** Relative to the base URL, without a leading slash: `collectors/upgrades/targets`. */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** False for a create: a failure after sending is reported as ambiguous, never retried. */
  idempotent: boolean;
  signal?: AbortSignal | undefined;
  /**
   * Called for each attempt once the budget allows it, right before it is sent: a create's
   * record says `creating` only while its request may be on its way, not while it waits for the
   * budget. A rejection ends the call with that error; nothing is sent.
   */
  beforeSend?: (() => Promise<void>) | undefined;
}

export type CallResult =
  | { type: 'answer'; answer: HttpAnswer; attempts: number; rateLimitedCount: number }
  | { type: 'ambiguous'; error: ApiError; attempts: number; rateLimitedCount: number };

export interface ApiCallerDeps {
  baseUrl: string;
  authorization: string;
  transport: HttpTransport;
  budget: RequestBudget;
  clock: Clock;
  logger: Logger;
  hooks: ApiHooks;
  retry: RetryOptions;
  timeoutMs: number;
  userAgent: string;
  random: () => number;
}

export interface ApiCaller {
  call(spec: CallSpec): Promise<CallResult>;
  /** The base URL in use: the configured one, or the one a 301 pointed to. */
  baseUrl(): string;
}

export function createApiCaller(deps: ApiCallerDeps): ApiCaller {
  let base = deps.baseUrl;
  let redirected = false;
  const { logger, hooks } = deps;
  const secrets = createScrubber([deps.authorization]);
  const headers = {
    authorization: deps.authorization,
    accept: 'application/json',
    'content-type': 'application/json',
    'user-agent': deps.userAgent,
  };

  const emit = <K extends keyof ApiHooks>(name: K, event: Parameters<NonNullable<ApiHooks[K]>>[0]) => {
    try {
      (hooks[name] as ((e: typeof event) => void) | undefined)?.(event);
    } catch (err) {
      logger.warn({ hook: name, err: (err as Error).message }, 'api metrics hook failed');
    }
  };

  /**
   * Follows a 301 `moved` to the right deployment (redirect-target.ts says where it may go), at
   * most once for the life of the client. Returns the error when it cannot be followed.
   */
  function followRedirect(spec: CallSpec, sentBase: string, answer: HttpAnswer): ApiError | undefined {
    if (sentBase !== base) return undefined; // another request already resolved it
    const info = errorInfoOf(answer);
    const fail = (why: string) =>
      new ApiError('protocol', `${spec.method} ${spec.path} ${describeAnswer(301, info)}: ${why}`, {
        endpoint: spec.endpoint,
        status: 301,
        ...(info.vendorCode ? { vendorCode: info.vendorCode } : {}),
        ...(info.requestId ? { requestId: info.requestId } : {}),
      });
    if (redirected) return fail('redirected again after following one redirect');
    const raw = answer.headers.location;
    const target = redirectTarget({
      configuredBase: deps.baseUrl,
      sentBase,
      path: spec.path,
      location: Array.isArray(raw) ? raw[0] : raw,
    });
    if (!target.ok) return fail(target.reason);
    logger.warn(
      { from: sentBase, to: clipText(target.base, 200), code: info.vendorCode },
      'api base URL moved: using the deployment the service redirected to (set SUMOLOGIC_BASE_URL to it)',
    );
    base = target.base;
    redirected = true;
    return undefined;
  }

  async function call(spec: CallSpec): Promise<CallResult> {
    const startedService = deps.clock.now();
    let rateLimitedCount = 0;
    let redirects = 0;
    for (let attempt = 1; attempt <= deps.retry.maxAttempts + redirects; attempt++) {
      const sentBase = base;
      const url = buildUrl(sentBase, spec.path, spec.query);
      const lease = await acquire(spec);
      if (spec.beforeSend) {
        try {
          await spec.beforeSend();
        } catch (err) {
          await lease.release();
          throw err;
        }
      }
      const t0 = performance.now();
      let answer: HttpAnswer | undefined;
      let failure: TransportError | undefined;
      try {
        const sent = await deps.transport.send({
          method: spec.method,
          url,
          headers,
          ...(spec.body === undefined ? {} : { body: JSON.stringify(spec.body) }),
          timeoutMs: deps.timeoutMs,
          onSent: () => lease.sent(),
          ...(spec.signal ? { signal: spec.signal } : {}),
        });
        answer = { ...sent, text: secrets.scrub(sent.text) };
      } catch (err) {
        if (!(err instanceof TransportError)) throw err;
        failure = err;
      } finally {
        await lease.release();
      }
      const n = attempt - redirects;
      const attemptEvent = (statusCode: number | undefined, outcome: ApiOutcome) =>
        emit('onAttempt', {
          endpoint: spec.endpoint,
          method: spec.method,
          attempt: n,
          statusCode,
          outcome,
          durationMs: performance.now() - t0,
          budgetWaitMs: lease.waitedMs,
          rateLimited: statusCode === 429,
        });

      let error: ApiError;
      let retryAfterMs: number | undefined;
      if (failure) {
        error = new ApiError(failure.kind, `${spec.method} ${spec.path}: ${failure.message}`, {
          endpoint: spec.endpoint,
          cause: failure,
          attempts: n,
          rateLimitedCount,
        });
        if (!spec.idempotent && failure.maybeSent) {
          attemptEvent(undefined, 'ambiguous');
          logger.warn({ endpoint: spec.endpoint, err: failure.message }, 'api request outcome unknown');
          return { type: 'ambiguous', error, attempts: n, rateLimitedCount };
        }
        attemptEvent(undefined, failure.kind);
      } else if (answer) {
        const kind = kindForStatus(answer.status);
        if (kind === 'moved') {
          const refused = followRedirect(spec, sentBase, answer);
          attemptEvent(301, refused ? 'protocol' : 'moved');
          if (refused) throw refused.withAttempts(n);
          redirects++;
          continue;
        }
        if (kind !== 'rate_limited' && kind !== 'server') {
          const info = answer.status >= 400 ? errorInfoOf(answer) : undefined;
          const vendor = spec.endpoint === 'create' && answer.status === 400 ? info?.vendorCode : undefined;
          attemptEvent(
            answer.status,
            answer.status < 300 ? 'ok' : isVendorCreateCode(vendor) ? vendor : kind,
          );
          return { type: 'answer', answer, attempts: n, rateLimitedCount };
        }
        const info = errorInfoOf(answer);
        retryAfterMs = readRetryAfterOf(spec, answer);
        if (kind === 'rate_limited') {
          rateLimitedCount++;
          // Advisory: a budget that cannot record the 429 (Redis away) must not fail the call.
          await deps.budget.rateLimited(retryAfterMs).catch((err: Error) => {
            logger.warn({ err: err.message }, 'request budget could not record a 429');
          });
        }
        attemptEvent(answer.status, kind);
        error = new ApiError(kind, `${spec.method} ${spec.path} ${describeAnswer(answer.status, info)}`, {
          endpoint: spec.endpoint,
          status: answer.status,
          attempts: n,
          rateLimitedCount,
          ...(info.vendorCode ? { vendorCode: info.vendorCode } : {}),
          ...(info.requestId ? { requestId: info.requestId } : {}),
        });
      } else {
        throw new Error('unreachable: neither an answer nor a failure');
      }

      const decision = decideRetry({
        attempt: n,
        elapsedMs: deps.clock.now() - startedService,
        retryAfterMs,
        options: deps.retry,
        random: deps.random,
      });
      if (!decision.retry) throw error;
      logger.debug(
        {
          endpoint: spec.endpoint,
          attempt: n,
          kind: error.kind,
          status: error.status,
          delayMs: decision.delayMs,
        },
        'api request retried',
      );
      await deps.clock.sleep(decision.delayMs, spec.signal);
    }
    throw new ApiError('protocol', `${spec.method} ${spec.path}: too many redirects`, {
      endpoint: spec.endpoint,
    });
  }

  /** The answer's Retry-After, capped; one log line when it was capped or ignored. */
  function readRetryAfterOf(spec: CallSpec, answer: HttpAnswer): number | undefined {
    const raw = answer.headers['retry-after'];
    const read = readRetryAfter(raw, deps.clock.now());
    if (read.note) {
      const value = Array.isArray(raw) ? raw[0] : raw;
      logger.warn(
        {
          endpoint: spec.endpoint,
          status: answer.status,
          retryAfter: clipText(value ?? '', TEXT_LIMITS.header),
          usedMs: read.ms,
          capMs: MAX_RETRY_AFTER_MS,
        },
        read.note === 'capped' ? 'api Retry-After capped' : 'api Retry-After ignored',
      );
    }
    return read.ms;
  }

  async function acquire(spec: CallSpec) {
    try {
      return await deps.budget.acquire(spec.signal, REQUEST_PRIORITY[spec.endpoint]);
    } catch (err) {
      if (err instanceof FleetError && err.code === 'FLEET_ERR_API_BUDGET')
        throw new ApiError('rate_limited', `${spec.method} ${spec.path}: ${err.message}`, {
          endpoint: spec.endpoint,
          cause: err,
          attempts: 0,
          local: true,
        });
      throw err;
    }
  }

  return { call, baseUrl: () => base };
}

export function buildUrl(base: string, path: string, query?: CallSpec['query']): string {
  const url = `${base.replace(/\/+$/, '')}/${path}`;
  if (!query) return url;
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, String(v));
  const qs = params.toString();
  return qs ? `${url}?${qs}` : url;
}
