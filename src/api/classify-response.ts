/**
 * Turns an HTTP answer that is not a success into facts the client can act on: the error kind
 * by status, the vendor code, message and request id from either error body shape (legacy
 * `{status,id,code,message}` or newer `{id,errors:[...]}`), and tolerates bodies that are not
 * JSON at all (an HTML 401 page, an empty 502 from a proxy).
 */
import type { ApiErrorKind } from './api-error.js';
import { ErrorsBody, LegacyErrorBody } from './schema.js';

export type ErrorBodyShape = 'legacy' | 'errors' | 'non-json' | 'empty' | 'unrecognised-json';

export interface ErrorBodyInfo {
  shape: ErrorBodyShape;
  vendorCode?: string;
  message?: string;
  requestId?: string;
}

const MAX_MESSAGE = 300;

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > MAX_MESSAGE ? `${oneLine.slice(0, MAX_MESSAGE)}…` : oneLine;
}

/** Reads an error body of either shape; never throws. */
export function parseErrorBody(contentType: string | undefined, text: string): ErrorBodyInfo {
  if (text.trim() === '') return { shape: 'empty' };
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const media = contentType?.split(';')[0]?.trim() || 'unknown content type';
    return { shape: 'non-json', message: `a non-JSON body (${media})` };
  }
  const legacy = LegacyErrorBody.safeParse(json);
  if (legacy.success) {
    const { code, message, id } = legacy.data;
    return { shape: 'legacy', vendorCode: code, ...opt('message', message), ...opt('requestId', id) };
  }
  const newer = ErrorsBody.safeParse(json);
  if (newer.success) {
    const first = newer.data.errors[0];
    return {
      shape: 'errors',
      ...opt('vendorCode', first?.code),
      ...opt('message', first?.message ?? first?.detail),
      ...opt('requestId', newer.data.id),
    };
  }
  return { shape: 'unrecognised-json' };
}

function opt<K extends string>(key: K, value: string | undefined): { [P in K]?: string } {
  return (value === undefined ? {} : { [key]: clip(value) }) as { [P in K]?: string };
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

/**
 * Retry-After as milliseconds from `now` (delta-seconds or an HTTP date), or undefined when
 * absent or unreadable. Negative values count as 0.
 */
export function parseRetryAfter(header: string | string[] | undefined, now: number): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // HTTP dates start with a day name; V8's Date.parse would also take "-1" or "12" as dates.
  if (!/^(mon|tue|wed|thu|fri|sat|sun)/i.test(text)) return undefined;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** `answered 404 notfound: Upgrade task 7 was not found. (request BOKTB-T8R2I-HESK0)` */
export function describeAnswer(status: number, info: ErrorBodyInfo): string {
  const code = info.vendorCode ? ` ${info.vendorCode}` : '';
  const message = info.message ? `: ${info.message}` : info.shape === 'empty' ? ' with an empty body' : '';
  const request = info.requestId ? ` (request ${info.requestId})` : '';
  return `answered ${status}${code}${message}${request}`;
}
