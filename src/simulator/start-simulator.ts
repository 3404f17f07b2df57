/**
 * Starts the simulated Collector Upgrade Service over HTTP, for one organization or several
 * (`orgs:`): a request to /api/v1 is answered by the organization its credentials name, through
 * the steps of handle-api.ts; /_sim is introspection. Every answer tells the simulator's time
 * scale (X-Simulator-Time-Scale, lib/time-scale-header.ts).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Clock, createScaledClock } from '../lib/clock.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { boundedServerOptions, boundServer, type ServerLimits } from '../lib/server-limits.js';
import { SIM_NOW_HEADER, TIME_SCALE_HEADER } from '../lib/time-scale-header.js';
import type { FleetModel, TaskGauge } from './fleet-model.js';
import { type AnyFleetInput, parseFleet } from './fleet-source.js';
import { type ApiDeps, handleApi } from './handle-api.js';
import { isLoopback, legacyError, readBody, send } from './http-util.js';
import { introspect } from './introspection-routes.js';
import { type Account, Organization } from './organization.js';
import { SimulatorStats } from './simulator-stats.js';

export interface SimulatorOptions {
  /** The fleet file's content, one organization or `orgs:` (defaults applied here). */
  fleet: AnyFleetInput;
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
  /** The first organization's model (the only one's, without `orgs:`). */
  model: FleetModel;
  /** The organizations by name (`default` without `orgs:`), in the order of the fleet file. */
  orgs: ReadonlyMap<string, Organization>;
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions): Promise<RunningSimulator> {
  const fleets = parseFleet(options.fleet);
  const clock = options.clock ?? createScaledClock(options.timeScale ?? 1);
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const start = clock.now();
  const gauge: TaskGauge = { unfinished: 0, maxConcurrentTasks: 0 };
  const orgs = fleets.map((fleet) => new Organization(fleet, start, gauge));
  const accounts = new Map<string, { org: Organization; account: Account }>();
  for (const org of orgs) for (const [id, account] of org.accounts) accounts.set(id, { org, account });
  const unattributed = new SimulatorStats();
  const timeScale =
    'scale' in clock && typeof clock.scale === 'number' ? clock.scale : (options.timeScale ?? 1);
  // Told on every answer (a client notices a scale unlike its own at no cost); not for a clock of
  // the caller's without a scale (a manual clock in tests): that one has none to tell.
  const toldScale = options.clock === undefined || 'scale' in clock ? String(timeScale) : undefined;
  const api: ApiDeps = {
    orgs,
    accounts,
    unattributed,
    clock,
    logger,
    lenientContentType: options.lenientContentType ?? false,
  };

  const server = createServer(
    { ...boundedServerOptions(options.limits), keepAliveTimeout: 65_000 },
    (req, res) => {
      if (toldScale !== undefined) {
        res.setHeader(TIME_SCALE_HEADER, toldScale);
        // Its simulated now: the daemon's clock is set by it (one clock per rehearsal).
        res.setHeader(SIM_NOW_HEADER, String(Math.round(clock.now())));
      }
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
          const view = { orgs, now: clock.now(), timeScale, gauge, unattributed };
          return send(res, introspect(view, req.method ?? 'GET', path, url.searchParams, body.text));
        }
        return handleApi(api, req, res, path, url.searchParams);
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
    model: (orgs[0] as Organization).model,
    orgs: new Map(orgs.map((o) => [o.name, o])),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
