/**
 * The gate of every request that changes something (`POST /rollouts/{id}/{action}`, `POST
 * /upgrades`), in this order: who calls (with `access:`, a named person: access-control.ts; else
 * the token or loopback rule, 401/403, authorize-request.ts; a refused
 * caller spends the bucket of refused callers at its address, and past it gets 429), a request
 * from a web page (an `Origin` header other than the daemon's own console's: 403), the content type (415), then the caller's own rate
 * (429). One gate and one rate limiter for all of them: the same rules, the same budget.
 */
import type { IncomingMessage } from 'node:http';
import type { Logger } from '../lib/logger.js';
import type { AccessControl, Identity } from './access-control.js';
import { authorizeRequest, type ControlToken } from './authorize-request.js';
import { echo, HttpError } from './http-error.js';
import type { RateLimiter } from './rate-limiter.js';
import { requireJsonType } from './read-json-body.js';
import { isSameOrigin } from './same-origin.js';

export interface ControlGate {
  /** The whole gate: who calls, or the HttpError that refuses the request. */
  admit(req: IncomingMessage): Identity;
}

/**
 * Who calls: with `access`, a person it knows (the control token is its admin `admin`), or a 401
 * HttpError; without it, the holder of the token (the admin `admin`, as with `access`) or a
 * loopback caller when no token is configured (`http:<address>`), with every right.
 */
export function identifyCaller(
  access: AccessControl | undefined,
  token: ControlToken | undefined,
  req: IncomingMessage,
): { ok: true; who: Identity } | { ok: false; error: HttpError } {
  if (access) {
    const who = access.identify(req);
    return who instanceof HttpError ? { ok: false, error: who } : { ok: true, who };
  }
  const decision = authorizeRequest({
    token,
    authorization: req.headers.authorization,
    host: req.headers.host,
    remoteAddress: req.socket.remoteAddress,
  });
  if (!decision.ok) return decision;
  const from = req.socket.remoteAddress ?? 'unknown';
  return {
    ok: true,
    who: {
      name: decision.actor,
      role: 'admin',
      grants: [{ role: 'admin' }],
      via: token ? 'token' : 'loopback',
      from,
    },
  };
}

export function createControlGate(options: {
  token: ControlToken | undefined;
  access?: AccessControl | undefined;
  limiter: RateLimiter;
  logger: Logger;
  /** Told of each caller refused here (the audit trail). */
  onRefused?: (req: IncomingMessage, error: HttpError) => void;
}): ControlGate {
  const { limiter, logger } = options;
  const take = (bucket: string) => {
    const rate = limiter.take(bucket);
    if (!rate.ok)
      throw new HttpError(
        'rate_limited',
        `too many control requests; try again in ${rate.retryAfterSeconds} s`,
        {
          'retry-after': String(rate.retryAfterSeconds),
        },
      );
  };
  return {
    admit(req) {
      const caller = req.socket.remoteAddress ?? 'unknown';
      const decision = identifyCaller(options.access, options.token, req);
      if (!decision.ok) {
        // Refused callers (no token, a wrong one, not loopback) spend a bucket per address of their
        // own: a guesser is slowed down, and the callers that may act keep theirs.
        take(`refused ${caller}`);
        logger.warn(
          { remote: req.socket.remoteAddress, method: req.method, code: decision.error.code },
          'http request refused',
        );
        options.onRefused?.(req, decision.error);
        throw decision.error;
      }
      // What a page in a browser can send to loopback without asking first carries an Origin, or
      // is not JSON: refused before it spends anything. The one page let through is the daemon's
      // own console (same-origin.ts): its Origin names the host the request was sent to.
      if (req.headers.origin !== undefined && !isSameOrigin(req))
        throw new HttpError(
          'forbidden',
          `control requests from a web page (Origin ${echo(req.headers.origin)}) are refused; use the console served at /, the CLI or a script`,
        );
      requireJsonType(req);
      take(`allowed ${caller}`);
      return decision.who;
    },
  };
}
