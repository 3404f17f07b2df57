/**
 * Who may change a rollout over HTTP (and read one, with `--auth-reads`): a pure decision from
 * the configured token, the request's `Authorization` and `Host` headers and the caller's address.
 *
 * - A token is configured: every caller needs `Authorization: Bearer <token>`, loopback included.
 *   The comparison runs in constant time over SHA-256 digests (equal lengths whatever was sent).
 * - No token: only loopback callers (127.0.0.0/8, ::1, ::ffff:127.x) are served, and only when
 *   the `Host` header names a loopback host too, so that a web page that rebinds its own name to
 *   127.0.0.1 (DNS rebinding) cannot drive the daemon from a browser on the operator's machine.
 *
 * The actor recorded in the history, the audit trail and the webhooks: the holder of the token is
 * the admin named `admin` (as with `access:`, docs/access.md); a loopback caller without a token
 * configured is `http:<remote address>`. Never anything of the token.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { inspect } from 'node:util';
import { echo, HttpError } from './http-error.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The control token, kept only as its digest; it cannot be logged or printed. */
export class ControlToken {
  readonly #digest: Buffer;

  constructor(token: string) {
    this.#digest = digest(token);
  }

  /** Constant time whatever `candidate` is: both sides are 32-byte digests. */
  matches(candidate: string): boolean {
    return timingSafeEqual(digest(candidate), this.#digest);
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'ControlToken([redacted])';
  }
}

export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  return address === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** Whether a `Host` header names this machine's loopback (`localhost`, `127.x`, `[::1]`), any port. */
export function isLoopbackHost(host: string): boolean {
  const name = host.startsWith('[')
    ? host.slice(1, host.indexOf(']'))
    : (host.split(':')[0] ?? '').replace(/\.$/, '');
  return name.toLowerCase() === 'localhost' || isLoopbackAddress(name);
}

export interface AuthorizeInput {
  /** Undefined: no token is configured. */
  token: ControlToken | undefined;
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
  /** The `Host` header as sent. */
  host: string | undefined;
  /** The caller's address (`req.socket.remoteAddress`). */
  remoteAddress: string | undefined;
}

export type Authorization = { ok: true; actor: string } | { ok: false; error: HttpError };

const CHALLENGE = 'Bearer realm="fleet-upgrade"';
const TOKEN_SOURCES = 'FLEET_UPGRADE_CONTROL_TOKEN or FLEET_UPGRADE_CONTROL_TOKEN_FILE';

/** The name of the control token's holder, with `access:` or without (access-control.ts). */
export const CONTROL_TOKEN_ADMIN = 'admin';

export function authorizeRequest(input: AuthorizeInput): Authorization {
  if (input.token) {
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(input.authorization ?? '');
    if (!m)
      return {
        ok: false,
        error: new HttpError('unauthorized', 'this endpoint needs the header Authorization: Bearer <token>', {
          'www-authenticate': CHALLENGE,
        }),
      };
    if (!input.token.matches(m[1] as string))
      return {
        ok: false,
        error: new HttpError('unauthorized', 'the bearer token is not the control token', {
          'www-authenticate': `${CHALLENGE}, error="invalid_token"`,
        }),
      };
    return { ok: true, actor: CONTROL_TOKEN_ADMIN };
  }
  const actor = `http:${input.remoteAddress ?? 'unknown'}`;
  if (!isLoopbackAddress(input.remoteAddress))
    return {
      ok: false,
      error: new HttpError(
        'forbidden',
        `no control token is configured (${TOKEN_SOURCES}), so this endpoint answers only to loopback callers (127.0.0.1, ::1); this request came from ${echo(input.remoteAddress ?? 'an unknown address')}`,
      ),
    };
  if (input.host !== undefined && !isLoopbackHost(input.host))
    return {
      ok: false,
      error: new HttpError(
        'forbidden',
        `no control token is configured (${TOKEN_SOURCES}), so this endpoint answers only to requests for localhost, 127.0.0.1 or [::1]; this one was for ${echo(input.host)}`,
      ),
    };
  return { ok: true, actor };
}
