/**
 * Turns an HTTP answer that is not a success into facts the client can act on: the error kind
 * by status, the vendor code, message and request id from either error body shape (legacy
 * `{status,id,code,message}` or newer `{id,errors:[...]}`), and tolerates bodies that are not
 * JSON at all (an HTML 401 page, an empty 502 from a proxy) or too large to read. Everything
 * taken from the body is untrusted and clipped (untrusted-text.ts); a Retry-After is capped.
 */
import type { ApiErrorKind } from './api-error.js';
import type { HttpAnswer } from './http-transport.js';
import { MAX_RETRY_AFTER_MS } from './retry-policy.js';
import { ErrorsBody, LegacyErrorBody } from './schema.js';
import { clipText, formatBytes, TEXT_LIMITS } from './untrusted-text.js';

export type ErrorBodyShape = 'legacy' | 'errors' | 'non-json' | 'empty' | 'unrecognised-json' | 'too-large';

export interface ErrorBodyInfo {
  shape: ErrorBodyShape;
  vendorCode?: string;
  message?: string;
  requestId?: string;
}

/**
 * An error body longer than this is not parsed: real ones are a few hundred bytes, and the
 * parts kept from one are clipped to a few hundred characters anyway.
 */
export const MAX_ERROR_BODY_CHARS = 64 * 1024;

/** Reads an error body of either shape; never throws. */
export function parseErrorBody(contentType: string | undefined, text: string): ErrorBodyInfo {
  if (text.length > MAX_ERROR_BODY_CHARS)
    return {
      shape: 'too-large',
      message: `an error body too large to read (over ${formatBytes(MAX_ERROR_BODY_CHARS)})`,
    };
  if (text.trim() === '') return { shape: 'empty' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return nonJsonInfo(contentType);
  }
  const legacy = LegacyErrorBody.safeParse(json);
  if (legacy.success) {
    const { code, message, id } = legacy.data;
    return {
      shape: 'legacy',
      vendorCode: clipText(code, TEXT_LIMITS.code),
      ...opt('message', message, TEXT_LIMITS.message),
      ...opt('requestId', id, TEXT_LIMITS.requestId),
    };
  }
  const newer = ErrorsBody.safeParse(json);
  if (newer.success) {
    const first = newer.data.errors[0];
    return {
      shape: 'errors',
      ...opt('vendorCode', first?.code, TEXT_LIMITS.code),
      ...opt('message', first?.message ?? first?.detail, TEXT_LIMITS.message),
      ...opt('requestId', newer.data.id, TEXT_LIMITS.requestId),
    };
  }
  return { shape: 'unrecognised-json' };
}

/** A body that is not JSON, described by its (clipped) media type. */
export function nonJsonInfo(contentType: string | undefined): ErrorBodyInfo {
  const media = contentType?.split(';')[0]?.trim();
  const named = media ? clipText(media, TEXT_LIMITS.mediaType) : 'unknown content type';
  return { shape: 'non-json', message: `a non-JSON body (${named})` };
}

/** The error facts of an answer, also when the transport stopped reading its body at its cap. */
export function errorInfoOf(answer: HttpAnswer): ErrorBodyInfo {
  if (answer.bodyTooLarge)
    return {
      shape: 'too-large',
      message: `a body larger than ${formatBytes(answer.bodyTooLarge.limitBytes)} (not read past that)`,
    };
  return parseErrorBody(answer.contentType, answer.text);
}

function opt<K extends string>(key: K, value: string | undefined, max: number): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: clipText(value, max) }) as { [P in K]?: string };
}

/** What a status means to the client; 301 is the deployment redirect, handled by the caller. */
export function kindForStatus(status: number): ApiErrorKind | 'moved' {
  if (status === 301) return 'moved';
  if (status === 401) return 'authentication';
  if (status === 403) return 'permission';
  if (status === 404) return 'not_found';
  if (status === 429) return 'rate_limited';
  if (status >= 500) return 'server';
  if (status >= 400) return 'invalid_request';
  return 'protocol'; // 1xx/3xx other than 301, or a 2xx the endpoint does not use
}

/** Whether another attempt may succeed where this one failed. */
export function isRetryableKind(kind: ApiErrorKind): boolean {
  return kind === 'rate_limited' || kind === 'server' || kind === 'network' || kind === 'timeout';
}

/** A Retry-After as read: `ms` to wait (service time), and `note` when the value was not used as is. */
export interface RetryAfter {
  ms: number | undefined;
  /** `capped`: longer than the cap, cut to it; `ignored`: not a delay at all (negative, garbage). */
  note?: 'capped' | 'ignored';
}

// HTTP dates start with a day name; V8's Date.parse alone would also take "-1" or "12" as dates.
const HTTP_DATE = /^(mon|tue|wed|thu|fri|sat|sun)[a-z]*,? /i;

/**
 * Retry-After (delta-seconds or an HTTP date) as milliseconds from `now`, capped at `capMs`
 * (MAX_RETRY_AFTER_MS). A date in the past is 0. A value that is neither (negative, a number
 * in another notation, text) is ignored: the caller's own backoff applies.
 */
export function readRetryAfter(
  header: string | string[] | undefined,
  now: number,
  capMs: number = MAX_RETRY_AFTER_MS,
): RetryAfter {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return { ms: undefined };
  const text = value.trim();
  let ms: number;
  if (/^\d+(\.\d+)?$/.test(text)) ms = Number(text) * 1000;
  else if (HTTP_DATE.test(text) && !Number.isNaN(Date.parse(text))) ms = Math.max(0, Date.parse(text) - now);
  else return { ms: undefined, note: 'ignored' };
  if (ms > capMs) return { ms: capMs, note: 'capped' };
  return { ms: Math.round(ms) };
}

/** Retry-After as capped milliseconds from `now`, or undefined when absent or unreadable. */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | undefined {
  return readRetryAfter(header, now).ms;
}

/** `answered 404 notfound: Upgrade task 7 was not found. (request BOKTB-T8R2I-HESK0)` */
export function describeAnswer(status: number, info: ErrorBodyInfo): string {
  const code = info.vendorCode ? ` ${info.vendorCode}` : '';
  const message = info.message ? `: ${info.message}` : info.shape === 'empty' ? ' with an empty body' : '';
  const request = info.requestId ? ` (request ${info.requestId})` : '';
  return `answered ${status}${code}${message}${request}`;
}
