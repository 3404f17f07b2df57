/**
 * One HTTP exchange over undici (keep-alive connection pool per origin), with a hard time-out
 * covering connect, headers and body. A failure without an answer is a `TransportError` that
 * says whether the request may have reached the service (`maybeSent`): a refused connection
 * certainly did not, a connection dropped after the request was written may have.
 * A body is read only up to `maxBodyBytes` (8 MiB): past it the connection is dropped and the
 * answer says so (`bodyTooLarge`), so a hostile or broken answer cannot fill the memory.
 */
import { Agent, type Dispatcher, request } from 'undici';

export interface HttpRequest {
  method: 'GET' | 'POST';
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Real ms for the whole exchange. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Called once the request has been written to a connection (after any connection set-up). */
  onSent?: () => void;
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  contentType: string | undefined;
  text: string;
  /** Set when the body was longer than the transport reads; `text` is then empty. */
  bodyTooLarge?: { limitBytes: number };
}

export interface HttpTransport {
  send(req: HttpRequest): Promise<HttpAnswer>;
  close(): Promise<void>;
}

export class TransportError extends Error {
  readonly kind: 'network' | 'timeout';
  /** False only when the request certainly never reached the service. */
  readonly maybeSent: boolean;
  /** The system or undici error code (ECONNRESET, UND_ERR_SOCKET, ...). */
  readonly errorCode: string | undefined;
  constructor(
    kind: 'network' | 'timeout',
    message: string,
    maybeSent: boolean,
    errorCode?: string,
    cause?: unknown,
  ) {
    super(message, { cause });
    this.name = 'TransportError';
    this.kind = kind;
    this.maybeSent = maybeSent;
    this.errorCode = errorCode;
  }
}

/** Error codes raised before any byte of the request left: safe to retry any request. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/**
 * The most of one answer body read, in bytes. The largest real answer is a listing page: about
 * 700 bytes per Collector, so 0.7 MB for a page of 1000 (the largest `limit` either description
 * suggests); 8 MiB leaves ten times that, and bounds ten concurrent answers to 80 MiB.
 */
export const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

type LegacyHandler = Dispatcher.DispatchHandler & { onRequestSent?(): void };

/**
 * A facade over `dispatcher` for one request that reports when undici has written it out
 * (`onRequestSent`, called on handlers of undici's classic shape, which `request()` uses).
 * Handlers of the newer shape are passed through untouched: the hook is then silent.
 */
function withSentHook(dispatcher: Dispatcher, onSent: () => void): Dispatcher {
  const facade = {
    dispatch(opts: Dispatcher.DispatchOptions, handler: LegacyHandler): boolean {
      if (handler.onRequestStart) return dispatcher.dispatch(opts, handler);
      let fired = false;
      const wrapped: LegacyHandler = {
        onConnect: (abort, ...rest: unknown[]) =>
          (handler.onConnect as (...a: unknown[]) => void)?.(abort, ...rest),
        onHeaders: (...a) => handler.onHeaders?.(...a) ?? true,
        onData: (chunk) => handler.onData?.(chunk) ?? true,
        onComplete: (trailers) => handler.onComplete?.(trailers),
        onError: (err) => handler.onError?.(err),
        onUpgrade: (...a) => handler.onUpgrade?.(...a),
        onResponseStarted: () => handler.onResponseStarted?.(),
        onBodySent: (...a) => handler.onBodySent?.(...a),
        onRequestSent: () => {
          if (!fired) {
            fired = true;
            onSent();
          }
          handler.onRequestSent?.();
        },
      };
      return dispatcher.dispatch(opts, wrapped);
    },
  };
  return facade as unknown as Dispatcher;
}

export interface UndiciTransportOptions {
  /** Sockets per origin (default 16; the service allows 10 concurrent requests per key). */
  connections?: number;
  /** Idle keep-alive sockets close after this many ms (default 30 000). */
  keepAliveTimeoutMs?: number;
  /** Connection set-up limit in ms (default 10 000). */
  connectTimeoutMs?: number;
  /** Use this dispatcher instead of a new Agent (tests, proxies). */
  dispatcher?: Dispatcher;
  /** The most of one answer body read, in bytes (default MAX_ANSWER_BYTES, 8 MiB). */
  maxBodyBytes?: number;
}

export function createUndiciTransport(options: UndiciTransportOptions = {}): HttpTransport {
  const ownAgent = options.dispatcher === undefined;
  const maxBodyBytes = options.maxBodyBytes ?? MAX_ANSWER_BYTES;
  const dispatcher =
    options.dispatcher ??
    new Agent({
      connections: options.connections ?? 16,
      keepAliveTimeout: options.keepAliveTimeoutMs ?? 30_000,
      keepAliveMaxTimeout: 600_000,
      connect: { timeout: options.connectTimeoutMs ?? 10_000 },
    });

  return {
    async send(req) {
      const timer = new AbortController();
      const timeout = setTimeout(() => timer.abort(new Error('request timed out')), req.timeoutMs);
      const signal = req.signal ? AbortSignal.any([req.signal, timer.signal]) : timer.signal;
      try {
        const res = await request(req.url, {
          dispatcher: req.onSent ? withSentHook(dispatcher, req.onSent) : dispatcher,
          method: req.method,
          headers: req.headers,
          body: req.body,
          signal,
          headersTimeout: req.timeoutMs,
          bodyTimeout: req.timeoutMs,
        });
        const type = res.headers['content-type'];
        const answer = {
          status: res.statusCode,
          headers: res.headers,
          contentType: Array.isArray(type) ? type[0] : type,
        };
        const tooLarge = () => {
          // Destroying the body closes the connection: the rest is never read.
          res.body.destroy();
          return { ...answer, text: '', bodyTooLarge: { limitBytes: maxBodyBytes } };
        };
        if (Number(res.headers['content-length']) > maxBodyBytes) return tooLarge();
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of res.body) {
          size += (chunk as Buffer).length;
          if (size > maxBodyBytes) return tooLarge();
          chunks.push(chunk as Buffer);
        }
        return { ...answer, text: Buffer.concat(chunks).toString('utf8') };
      } catch (err) {
        if (err instanceof TransportError) throw err;
        if (req.signal?.aborted) throw req.signal.reason ?? err;
        const code = errorCode(err);
        const notSent = code !== undefined && NOT_SENT.has(code);
        if (timer.signal.aborted || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
          throw new TransportError('timeout', `no answer within ${req.timeoutMs} ms`, !notSent, code, err);
        if (code === 'UND_ERR_CONNECT_TIMEOUT')
          throw new TransportError('timeout', 'connection set-up timed out', false, code, err);
        const message = err instanceof Error ? err.message : String(err);
        throw new TransportError('network', `${message}${code ? ` (${code})` : ''}`, !notSent, code, err);
      } finally {
        clearTimeout(timeout);
      }
    },
    async close() {
      if (ownAgent) await dispatcher.close();
    },
  };
}
