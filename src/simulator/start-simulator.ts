/**
 * Starts the simulated Collector Upgrade Service over HTTP. A request to /api/v1 goes through,
 * in order: routing (404/405), basic authentication (401), the rate limits (429), the added
 * latency, the Content-Type rule (415), injected server errors (500/503), the endpoint itself,
 * and possibly a dropped connection after the endpoint has acted. /_sim is introspection. Every
 * answer tells the simulator's time scale (X-Simulator-Time-Scale, lib/time-scale-header.ts).
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, createScaledClock } from '../lib/clock.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { createRandom } from '../lib/random.js';
import { boundedServerOptions, boundServer, type ServerLimits } from '../lib/server-limits.js';
import { TIME_SCALE_HEADER } from '../lib/time-scale-header.js';
import { FleetModel } from './fleet-model.js';
import {
  type Answer,
  basicCredentials,
  isJsonContentType,
  isLoopback,
  legacyError,
  newerError,
  readBody,
  send,
  UNAUTHORIZED_HTML,
} from './http-util.js';
import { introspect } from './introspection-routes.js';
import { RateLimiter } from './rate-limiter.js';
import { FleetFile, type FleetFileInput, type FleetUser, type RateLimit } from './schema.js';
import {
  type CallContext,
  createTask,
  type Endpoint,
  listTargets,
  listUpgradable,
  taskStatus,
} from './service-routes.js';
import { SimulatorStats } from './simulator-stats.js';

export interface SimulatorOptions {
  /** The fleet file's content (defaults applied here). */
  fleet: FleetFileInput | FleetFile;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** The simulated clock runs this many times faster than the wall clock. Default 1; ignored with `clock`. */
  timeScale?: number;
  /** A clock of the caller's (e.g. a manual one in tests). */
  clock?: Clock;
  /** Tighter bounds on what one client can hold than SERVER_LIMITS (tests). */
  limits?: Partial<ServerLimits>;
  /** Accept a GET without Content-Type, as some public clients send. */
  lenientContentType?: boolean;
  logger?: Logger;
}

export interface RunningSimulator {
  /** http://HOST:PORT */
  url: string;
  /** http://HOST:PORT/api/v1, the base URL a client is configured with. */
  baseUrl: string;
  port: number;
  clock: Clock;
  model: FleetModel;
  close(): Promise<void>;
}

const API_PREFIX = '/api/v1/';

type Route = { endpoint: Endpoint; run: (ctx: CallContext, query: URLSearchParams, body: string) => Answer };

function route(method: string, path: string): Route | Answer {
  if (!path.startsWith(API_PREFIX)) return legacyError(404, 'notfound', `No resource at ${path}.`);
  const rest = path.slice(API_PREFIX.length);
  const expect = (want: string, r: Route): Route | Answer =>
    method === want ? r : legacyError(405, 'method.unsupported', `Method ${method} is not supported here.`);
  if (rest === 'collectors/upgrades/collectors')
    return expect('GET', { endpoint: 'list', run: (c, q) => listUpgradable(c, q) });
  if (rest === 'collectors/upgrades/targets')
    return expect('GET', { endpoint: 'targets', run: (c) => listTargets(c) });
  if (rest === 'collectors/upgrades')
    return expect('POST', { endpoint: 'create', run: (c, _q, b) => createTask(c, b) });
  const m = /^collectors\/upgrades\/([^/]+)$/.exec(rest);
  if (m) {
    let id: string;
    try {
      id = decodeURIComponent(m[1] as string);
    } catch {
      // A malformed percent-encoding names no task.
      id = m[1] as string;
    }
    return expect('GET', { endpoint: 'status', run: (c) => taskStatus(c, id) });
  }
  return legacyError(404, 'notfound', `No resource at ${path}.`);
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const fleet = FleetFile.parse(options.fleet);
  const clock = options.clock ?? createScaledClock(options.timeScale ?? 1);
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const model = new FleetModel(fleet, clock.now());
  const stats = new SimulatorStats();
  const limiter = new RateLimiter();
  const faults = fleet.faults;
  const rng = createRandom(fleet.seed ^ 0x5eed);
  const users = new Map<string, { user: FleetUser; allowed: (id: number) => boolean; limit: RateLimit }>();
  for (const user of fleet.users) {
    const only = user.collectors ? new Set(user.collectors) : undefined;
    users.set(user.accessId, {
      user,
      allowed: only ? (id) => only.has(id) : () => true,
      limit: { ...faults.rateLimit, ...user.rateLimit },
    });
  }
  const timeScale =
    'scale' in clock && typeof clock.scale === 'number' ? clock.scale : (options.timeScale ?? 1);
  // Told on every answer (a client notices a scale unlike its own at no cost); not for a clock of
  // the caller's without a scale (a manual clock in tests): that one has none to tell.
  const toldScale = options.clock === undefined || 'scale' in clock ? String(timeScale) : undefined;
  const statsSnapshot = () => {
    const now = clock.now();
    model.advance(now);
    return stats.snapshot(model.counters, now, { collectors: model.size, timeScale });
  };

  const latency = (): number => {
    const l = faults.latencyMs;
    return typeof l === 'number' ? l : l.min + rng.next() * Math.max(0, l.max - l.min);
  };

  async function handleApi(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    query: URLSearchParams,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const started = performance.now();
    const body = await readBody(req);
    const routed = route(method, path);
    stats.total++;
    stats.byEndpoint['endpoint' in routed ? routed.endpoint : 'other']++;
    const answer = (a: Answer) => {
      stats.record(a.status, a.code);
      send(res, a);
      logger.debug(
        { method, path, status: a.status, code: a.code, ms: Math.round(performance.now() - started) },
        'request',
      );
    };
    if (!('endpoint' in routed)) return answer(routed);
    const creds = basicCredentials(req.headers.authorization);
    const account = creds ? users.get(creds.id) : undefined;
    if (!creds || !account || !sameSecret(creds.key, account.user.accessKey)) {
      if (faults.htmlUnauthorizedRatio > 0 && rng.chance(faults.htmlUnauthorizedRatio)) {
        return answer({
          status: 401,
          code: 'unauthorized',
          body: UNAUTHORIZED_HTML,
          headers: { 'www-authenticate': 'Basic realm="api"' },
        });
      }
      const a = legacyError(401, 'unauthorized', 'Full authentication is required to access this resource.');
      return answer({ ...a, headers: { 'www-authenticate': 'Basic realm="api"' } });
    }
    model.advance(clock.now());
    const admission = limiter.admit(
      account.user.accessId,
      account.user.accessKey,
      account.limit,
      clock.now(),
    );
    if (!admission.ok) {
      stats.rateLimited++;
      stats.rateLimitedBy[admission.reason]++;
      return answer(
        newerError(429, 'rate.limit.exceeded', 'API rate limit for this user has been exceeded.'),
      );
    }
    try {
      const delay = latency();
      if (delay > 0) await clock.sleep(delay);
      const contentType = req.headers['content-type'];
      const lenient = options.lenientContentType && method === 'GET' && contentType === undefined;
      if (!lenient && !isJsonContentType(contentType)) {
        return answer(
          legacyError(
            415,
            'contenttype.invalid',
            `Content-Type must be application/json, got '${contentType ?? ''}'.`,
          ),
        );
      }
      if (body.tooLarge)
        return answer(legacyError(413, 'request.too.large', 'The request body is larger than 1 MiB.'));
      if (faults.errorRatio > 0 && rng.chance(faults.errorRatio)) {
        stats.injectedErrors++;
        return answer(
          rng.chance(0.5)
            ? legacyError(500, 'internal.error', 'Internal server error.')
            : legacyError(503, 'service.unavailable', 'Service is temporarily unavailable.'),
        );
      }
      const now = clock.now();
      model.advance(now);
      const result = routed.run(
        {
          model,
          accessId: account.user.accessId,
          allowed: account.allowed,
          canCreate: account.user.canCreate,
          now,
        },
        query,
        body.text,
      );
      if (faults.dropRatio > 0 && rng.chance(faults.dropRatio)) {
        stats.dropped++;
        stats.record(result.status, result.code);
        req.socket.destroy();
        return;
      }
      answer(result);
    } finally {
      admission.release();
    }
  }

  const server = createServer(
    { ...boundedServerOptions(options.limits), keepAliveTimeout: 65_000 },
    (req, res) => {
      if (toldScale !== undefined) res.setHeader(TIME_SCALE_HEADER, toldScale);
      // A target like `//` or `http://x` must not throw out of the handler (it killed the process).
      const target = req.url ?? '/';
      let url: URL;
      try {
        url = new URL(target.startsWith('/') ? `http://simulator${target}` : target);
      } catch {
        return send(res, legacyError(400, 'request.invalid', 'The request target is not a valid path.'));
      }
      let path = url.pathname;
      if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
      const run = async () => {
        if (path === '/_sim' || path.startsWith('/_sim/')) {
          if (!isLoopback(req.socket.remoteAddress))
            return send(res, { status: 403, body: { error: 'introspection answers loopback callers only' } });
          const body = await readBody(req);
          const now = clock.now();
          model.advance(now);
          return send(
            res,
            introspect(model, req.method ?? 'GET', path, url.searchParams, body.text, now, statsSnapshot),
          );
        }
        return handleApi(req, res, path, url.searchParams);
      };
      run().catch((err: unknown) => {
        logger.error({ err, path }, 'simulator request failed');
        if (!res.headersSent) send(res, legacyError(500, 'internal.error', 'Internal server error.'));
        else res.destroy();
      });
    },
  );

  // A client that never finishes its request is answered 408 or cut off; Node answers malformed ones.
  boundServer(server, options.limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  return {
    url,
    baseUrl: `${url}/api/v1`,
    port: address.port,
    clock,
    model,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
