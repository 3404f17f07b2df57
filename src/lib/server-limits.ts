/**
 * Bounds on what one client can hold on an HTTP server of ours (the daemon's and the
 * simulator's): the time to send the headers and the whole request, the number of headers and
 * of connections. Node's own default keeps the header size at 16 KB. Node enforces both time-outs
 * only when it checks its connections (every 30 s by default), so the check runs at a quarter of
 * the shorter one.
 */
import type { Server, ServerOptions } from 'node:http';

export const SERVER_LIMITS = {
  /** Real ms to receive the request's headers. */
  headersTimeoutMs: 10_000,
  /** Real ms to receive the whole request, body included. */
  requestTimeoutMs: 30_000,
  maxHeadersCount: 100,
  maxConnections: 1_000,
} as const;

export type ServerLimits = { [K in keyof typeof SERVER_LIMITS]: number };

/** The options of `createServer` that carry `limits` (SERVER_LIMITS where not given). */
export function boundedServerOptions(limits: Partial<ServerLimits> = {}): ServerOptions {
  const l = { ...SERVER_LIMITS, ...limits };
  return {
    headersTimeout: l.headersTimeoutMs,
    requestTimeout: l.requestTimeoutMs,
    connectionsCheckingInterval: Math.max(100, Math.min(l.headersTimeoutMs, l.requestTimeoutMs) / 4),
  };
}

/** The bounds that are properties of the server rather than options of `createServer`. */
export function boundServer(server: Server, limits: Partial<ServerLimits> = {}): void {
  const l = { ...SERVER_LIMITS, ...limits };
  server.maxHeadersCount = l.maxHeadersCount;
  server.maxConnections = l.maxConnections;
}
