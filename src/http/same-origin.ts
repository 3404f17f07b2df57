/**
 * Whether a request that carries an `Origin` comes from a page the daemon served itself (the
 * console at `/`): the origin's host and port are those the request was sent to (`Host`), and the
 * browser does not say it crossed sites (`Sec-Fetch-Site`, when sent, is `same-origin`).
 *
 * A page of another origin cannot forge either header (a browser sets both). A page that rebinds
 * its own name to the daemon's address (DNS rebinding) does get a matching pair, which is why this
 * rule only lifts the Origin refusal: the caller must still pass the rest of the gate (a person's
 * token, which that page does not have, or the loopback rule, which checks that `Host` names
 * loopback: authorize-request.ts).
 */
import type { IncomingMessage } from 'node:http';

export function isSameOrigin(req: IncomingMessage): boolean {
  const { origin, host } = req.headers;
  if (origin === undefined || host === undefined) return false;
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  if (parsed.origin !== origin.toLowerCase().replace(/\/$/, '')) return false;
  return parsed.host === host.toLowerCase();
}
