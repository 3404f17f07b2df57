/**
 * The one shape of every error the daemon's HTTP endpoints answer: `{"error": {"code", "message"}}`
 * with a stable `code` that scripts switch on and the HTTP status that goes with it. The message
 * is for a person and may change; the code does not.
 */
import type { ServerResponse } from 'node:http';

export const HTTP_ERROR_STATUS = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  unavailable: 503,
} as const;
export type HttpErrorCode = keyof typeof HTTP_ERROR_STATUS;

/** Longest piece of a request (a path, a rollout id) repeated in an error message. */
const ECHO_LIMIT = 200;

export class HttpError extends Error {
  readonly status: number;
  constructor(
    readonly code: HttpErrorCode,
    message: string,
    /** Extra response headers (`Allow`, `Retry-After`, `WWW-Authenticate`). */
    readonly headers: Readonly<Record<string, string>> = {},
    /** What the answer says beside `error` (`POST /upgrades`'s 409: what was found of each Collector). */
    readonly said: Readonly<Record<string, unknown>> = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = HTTP_ERROR_STATUS[code];
  }
}

/** Untrusted text fit to repeat in an answer: clipped, control characters shown as `?`. */
export function echo(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  const clean = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
  return clean.length > ECHO_LIMIT ? `${clean.slice(0, ECHO_LIMIT)}…` : clean;
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  // Node sends no body to a HEAD request by itself.
  res.end(text);
}

export function sendError(res: ServerResponse, err: HttpError): void {
  sendJson(res, err.status, { ...err.said, error: { code: err.code, message: err.message } }, err.headers);
}
