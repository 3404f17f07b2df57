/** Small HTTP pieces the simulator's routes share: bodies, JSON answers, both error shapes. */
import { randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const MAX_BODY = 1024 * 1024;

/** A request id as the service writes them: three dash-separated groups of five, e.g. BOKTB-T8R2I-HESK0. */
export function requestId(): string {
  const group = () => Array.from({ length: 5 }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  return `${group()}-${group()}-${group()}`;
}

export interface Answer {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  /** Error code of an error answer, for the statistics. */
  code?: string;
  /** Content-Type of a string body (default text/html; an object body is always JSON). */
  contentType?: string;
}

export function json(status: number, body: unknown, headers?: Record<string, string>): Answer {
  return { status, body, headers };
}

/** The collector APIs' legacy error body: `{status, id, code, message}`. */
export function legacyError(status: number, code: string, message: string): Answer {
  return { status, code, body: { status, id: requestId(), code, message } };
}

/** The newer error body, used by the service for 429: `{id, errors: [{code, message}]}`. */
export function newerError(status: number, code: string, message: string): Answer {
  return { status, code, body: { id: requestId(), errors: [{ code, message }] } };
}

/** An error of /_sim (not the vendor's): `{error, ...more}`. */
export function simError(status: number, message: string, more: Record<string, unknown> = {}): Answer {
  return json(status, { error: message, ...more });
}

export function send(res: ServerResponse, answer: Answer): void {
  if (typeof answer.body === 'string') {
    res.writeHead(answer.status, {
      'content-type': answer.contentType ?? 'text/html; charset=utf-8',
      ...answer.headers,
    });
    res.end(answer.body);
    return;
  }
  const text = JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...answer.headers,
  });
  res.end(text);
}

/** Reads the body (at most 1 MiB; more is cut off and reported as too large). */
export async function readBody(req: IncomingMessage): Promise<{ text: string; tooLarge: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) tooLarge = true;
    else chunks.push(chunk);
  }
  return { text: Buffer.concat(chunks).toString('utf8'), tooLarge };
}

/** True for `application/json`, with or without parameters such as a charset. */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const media = header.split(';')[0]?.trim().toLowerCase();
  return media === 'application/json';
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

/** Parses `Authorization: Basic ...` into id and key, or undefined. */
export function basicCredentials(header: string | undefined): { id: string; key: string } | undefined {
  if (!header) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { id: decoded.slice(0, colon), key: decoded.slice(colon + 1) };
}

export const UNAUTHORIZED_HTML =
  '<!DOCTYPE html><html><head><title>401 Unauthorized</title></head><body><h1>401 Unauthorized</h1>' +
  '<p>This server could not verify that you are authorized to access the document requested.</p></body></html>';
