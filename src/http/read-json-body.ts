/**
 * The JSON body of a control request, read within bounds: `Content-Type: application/json` or
 * 415 (a browser cannot send that type to another origin without asking first, so a web page
 * cannot post to the daemon), at most `limit` bytes or 413 (a declared `Content-Length` above it
 * is refused before a byte is read), UTF-8 and JSON or 400. An empty body is `{}`.
 */
import type { IncomingMessage } from 'node:http';
import { echo, HttpError } from './http-error.js';

/** Largest body of a control request: every one of them fits in a few hundred bytes. */
export const BODY_LIMIT_BYTES = 16 * 1024;

/** Throws the 415 unless the request declares `Content-Type: application/json`. */
export function requireJsonType(req: IncomingMessage): void {
  const type = req.headers['content-type'];
  if (type?.split(';')[0]?.trim().toLowerCase() !== 'application/json')
    throw new HttpError(
      'unsupported_media_type',
      `send the header Content-Type: application/json${type === undefined ? '' : `, not ${echo(type)}`}`,
    );
}

export function readJsonBody(req: IncomingMessage, limit = BODY_LIMIT_BYTES): Promise<unknown> {
  try {
    requireJsonType(req);
  } catch (err) {
    return Promise.reject(err);
  }
  const tooLarge = () => new HttpError('payload_too_large', `the body is larger than ${limit} bytes`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (err?: HttpError) => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      // Left unread, the rest is discarded by the server after the answer (within requestTimeout).
      if (err) reject(err);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) done(tooLarge());
      else chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      try {
        resolve(parseJson(Buffer.concat(chunks)));
      } catch (err) {
        reject(err);
      }
    };
    const onClose = () => done(new HttpError('invalid', 'the request ended before its body'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    // An aborted upload emits 'error'; without a listener it would be thrown.
    req.on('error', () => undefined);
  });
}

function parseJson(bytes: Buffer): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new HttpError('invalid', 'the body is not UTF-8');
  }
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError('invalid', `the body is not JSON: ${echo((err as Error).message)}`);
  }
}
