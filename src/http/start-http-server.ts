/**
 * The daemon's HTTP endpoints: /metrics (Prometheus), /healthz (the process answers),
 * /readyz (Redis answers, policies are valid, the API accepted our credentials), always open for
 * probes; on `run` also /status (JSON of every rollout), the rollout API (create-rollout-api.ts) and
 * the web console at / for a browser (serve-console.ts).
 * Listens on 127.0.0.1 by default; serves no secret.
 *
 * No request may stop the process: the target is parsed inside the handler's error handling
 * (parse-request-target.ts), every failure becomes a JSON error (http-error.ts), and the server
 * bounds what a client can hold: header count and time, the whole request's time, connections.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../lib/logger.js';
import { boundedServerOptions, boundServer, type ServerLimits } from '../lib/server-limits.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { FleetStatus } from '../rollout/index.js';
import type { RolloutApi } from './create-rollout-api.js';
import { echo, HttpError, sendError, sendJson } from './http-error.js';
import { parseRequestTarget } from './parse-request-target.js';
import { scopeFleetStatus } from './read-scope.js';
import { sendTaggedJson } from './send-tagged-json.js';
import { type ConsoleAssets, loadConsoleAssets } from './serve-console.js';

const READY_CHECK_MS = 3000;

/** A readiness check's answer, or why there is none: it must not hang the probe. */
function withinTime(check: Promise<string | undefined>, ms: number): Promise<string | undefined> {
  return withTimeout(
    check.catch((e: Error) => e.message),
    ms,
    () => `no answer within ${ms} ms`,
  );
}

export interface ReadinessCheck {
  name: string;
  /** Resolves to undefined when ready, or to the reason it is not. */
  check(): Promise<string | undefined>;
  /**
   * Its problem is named but the process stays ready (`degraded`): a problem of one
   * organization of several, whose part waits while the others go on.
   */
  advisory?: boolean;
}

export interface HttpServerOptions {
  host: string;
  port: number;
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  /** `run`: GET /status. */
  status?: () => Promise<unknown>;
  /**
   * `run`: the deployment's clock, sent with /status as `X-Fleet-Upgrade-Clock: <ms>; scale=<n>`
   * (outside the body, so that the ETag holds while the clock runs): `status --server` draws on it.
   */
  clock?: { now(): number; scale?: number };
  /** `run`: the rollout endpoints, and the access rule of the read endpoints (/status included). */
  api?: RolloutApi;
  logger: Logger;
  /** `run`: the web console's files (default: those built under dist/console, when there are). */
  console?: ConsoleAssets | undefined;
  /** Tighter bounds than SERVER_LIMITS (the tests wait for a time-out in less than 10 s). */
  limits?: Partial<ServerLimits>;
}

export interface RunningHttpServer {
  url: string;
  close(): Promise<void>;
}

const PROBE = ['GET', 'HEAD'];

function allowRead(req: IncomingMessage): void {
  if (!PROBE.includes(req.method ?? ''))
    throw new HttpError('method_not_allowed', 'use GET or HEAD', { allow: PROBE.join(', ') });
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const endpoints = [
    '/metrics',
    '/healthz',
    '/readyz',
    ...(options.status ? ['/status'] : []),
    ...(options.api?.endpoints ?? []),
  ];

  // The console reads the rollout API: only `run` serves it.
  const consoleAssets = options.api ? (options.console ?? loadConsoleAssets()) : undefined;
  const route = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const target = parseRequestTarget(req.url);
    if (consoleAssets?.serve(req, res, target.segments)) return;
    const [first, ...more] = target.segments;
    if (more.length === 0) {
      switch (first) {
        case 'metrics': {
          allowRead(req);
          const text = await options.registry.metrics();
          res.writeHead(200, { 'content-type': options.registry.contentType });
          res.end(text);
          return;
        }
        case 'healthz':
          allowRead(req);
          return sendJson(res, 200, { status: 'ok' });
        case 'readyz': {
          allowRead(req);
          const results = await Promise.all(
            options.readiness.map(async (r) => ({
              name: r.name,
              advisory: r.advisory === true,
              problem: await withinTime(r.check(), READY_CHECK_MS),
            })),
          );
          const problems = results.filter((r) => r.problem && !r.advisory);
          const degraded = results.some((r) => r.problem && r.advisory);
          return sendJson(res, problems.length ? 503 : 200, {
            status: problems.length ? 'not ready' : degraded ? 'degraded' : 'ready',
            checks: Object.fromEntries(results.map((r) => [r.name, r.problem ?? 'ok'])),
          });
        }
        case 'status':
          if (!options.status) break;
          allowRead(req);
          {
            // A person whose `orgs` are limited reads only theirs (read-scope.ts).
            const scope = options.api?.authorizeRead(req);
            const status = (await options.status()) as FleetStatus;
            const clock = options.clock;
            const told: Record<string, string> = clock
              ? { 'x-fleet-upgrade-clock': `${Math.round(clock.now())}; scale=${clock.scale ?? 1}` }
              : {};
            return sendTaggedJson(req, res, scopeFleetStatus(status, scope), told);
          }
        case undefined:
          allowRead(req);
          return sendJson(res, 200, { endpoints });
      }
    }
    if (options.api && (await options.api.handle(req, res, target))) return;
    throw new HttpError('not_found', `no such path: ${echo(target.path)}`);
  };

  const fail = (req: IncomingMessage, res: ServerResponse, err: unknown) => {
    if (err instanceof HttpError) {
      if (!res.headersSent) sendError(res, err);
      return;
    }
    options.logger.error(
      { err: (err as Error)?.message, method: req.method, path: echo((req.url ?? '').split('?')[0] ?? '') },
      'http request failed',
    );
    if (!res.headersSent) sendError(res, new HttpError('internal', 'internal error'));
    else res.destroy();
  };
  const server: Server = createServer(boundedServerOptions(options.limits), (req, res) => {
    // Synchronous throws included: one request must never take the process down.
    const answer = async () => route(req, res);
    answer()
      .catch((err: unknown) => fail(req, res, err))
      .catch(() => res.destroy());
  });
  // Node answers malformed requests itself (400, 431 for headers too large, 408) and closes them.
  boundServer(server, options.limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // After listen: a later server error (EMFILE on accept) is logged, not thrown.
  server.on('error', (err: Error) => options.logger.warn({ err: err.message }, 'http server error'));
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
