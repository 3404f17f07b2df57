/**
 * A read's JSON with an ETag (a digest of the body): a client that sends it back in
 * `If-None-Match` gets `304` and no body when nothing changed. The console asks `/status` every
 * 1.5 s: most answers are then a few bytes, and the page redraws nothing.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from './http-error.js';

export function sendTaggedJson(
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  /** Headers of both answers (the 304 too) that are not part of the tag (`/status`'s clock). */
  headers: Readonly<Record<string, string>> = {},
): void {
  const text = JSON.stringify(body);
  const etag = `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`;
  if (req.headers['if-none-match'] === etag) {
    res.writeHead(304, { ...headers, etag, 'cache-control': 'no-cache' });
    res.end();
    return;
  }
  sendJson(res, 200, body, { ...headers, etag });
}
