/**
 * The daemon's HTTP endpoints: /metrics (Prometheus), /healthz (the process answers),
 * /readyz (Redis answers, policies are valid, the API accepted our credentials), /status (JSON of
 * every rollout). Listens on 127.0.0.1 by default; serves no secret.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Logger } from '../lib/logger.js';
import { withTimeout } from '../lib/with-timeout.js';

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
}

export interface HttpServerOptions {
  host: string;
  port: number;
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  status?: () => Promise<unknown>;
  logger: Logger;
}

export interface RunningHttpServer {
  url: string;
  close(): Promise<void>;
}

export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(text);
  };
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://daemon').pathname.replace(/\/+$/, '') || '/';
    const run = async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'use GET' });
      switch (path) {
        case '/metrics': {
          const text = await options.registry.metrics();
          res.writeHead(200, { 'content-type': options.registry.contentType });
          return res.end(text);
        }
        case '/healthz':
          return json(res, 200, { status: 'ok' });
        case '/readyz': {
          const results = await Promise.all(
            options.readiness.map(async (r) => ({
              name: r.name,
              problem: await withinTime(r.check(), READY_CHECK_MS),
            })),
          );
          const problems = results.filter((r) => r.problem);
          return json(res, problems.length ? 503 : 200, {
            status: problems.length ? 'not ready' : 'ready',
            checks: Object.fromEntries(results.map((r) => [r.name, r.problem ?? 'ok'])),
          });
        }
        case '/status':
          if (options.status) return json(res, 200, await options.status());
          return json(res, 404, { error: 'no status here' });
        case '/':
          return json(res, 200, { endpoints: ['/metrics', '/healthz', '/readyz', '/status'] });
        default:
          return json(res, 404, { error: `no such path: ${path}` });
      }
    };
    run().catch((err: Error) => {
      options.logger.error({ err: err.message, path }, 'http request failed');
      if (!res.headersSent) json(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
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
