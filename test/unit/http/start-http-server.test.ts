/**
 * The daemon's HTTP endpoints on a loopback port: /healthz, /readyz naming the failing checks,
 * /metrics in Prometheus's text format, /status, and 404/405 for everything else.
 */
import { Gauge, Registry } from 'prom-client';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ReadinessCheck,
  type RunningHttpServer,
  startHttpServer,
} from '../../../src/http/start-http-server.js';
import { createMetrics } from '../../../src/metrics/create-metrics.js';
import { captureLogger } from '../../support/capture-logger.js';

const servers: RunningHttpServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(
  options: { readiness?: ReadinessCheck[]; status?: () => Promise<unknown>; registry?: Registry } = {},
) {
  const log = captureLogger('debug');
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: options.registry ?? createMetrics().registry,
    readiness: options.readiness ?? [],
    ...(options.status ? { status: options.status } : {}),
    logger: log.logger,
  });
  servers.push(server);
  return { server, log };
}

async function call(server: RunningHttpServer, path: string, method = 'GET') {
  const res = await request(`${server.url}${path}`, { method: method as 'GET' });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, type: String(res.headers['content-type']), text, json };
}

describe('startHttpServer', () => {
  it('listens on the given host and a free port, and says where', async () => {
    const { server } = await start();
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(Number(new URL(server.url).port)).toBeGreaterThan(0);
  });

  it('/healthz answers 200 while the process runs', async () => {
    const { server } = await start({ readiness: [{ name: 'redis', check: async () => 'down' }] });
    const res = await call(server, '/healthz');
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.json).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 when every check passes', async () => {
    const { server } = await start({
      readiness: [
        { name: 'redis', check: async () => undefined },
        { name: 'api', check: async () => undefined },
      ],
    });
    const res = await call(server, '/readyz');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ status: 'ready', checks: { redis: 'ok', api: 'ok' } });
  });

  it('/readyz answers 503 naming the failing checks and why', async () => {
    const { server } = await start({
      readiness: [
        { name: 'redis', check: async () => undefined },
        { name: 'api', check: async () => 'GET collectors/upgrades/targets answered 401' },
        {
          name: 'policies',
          check: async () => {
            throw new Error('config/policies/linux.yaml:3:1: maxInFlight: expected a number');
          },
        },
      ],
    });
    const res = await call(server, '/readyz');
    expect(res.status).toBe(503);
    expect(res.json).toEqual({
      status: 'not ready',
      checks: {
        redis: 'ok',
        api: 'GET collectors/upgrades/targets answered 401',
        policies: 'config/policies/linux.yaml:3:1: maxInFlight: expected a number',
      },
    });
  });

  it('/metrics serves the registry in the Prometheus text format with its content type', async () => {
    const metrics = createMetrics({ role: 'run' });
    metrics.tasksCreated.labels('linux-fleet@19.470-4').inc(3);
    const { server } = await start({ registry: metrics.registry });
    const res = await call(server, '/metrics');
    expect(res.status).toBe(200);
    expect(res.type).toBe(metrics.registry.contentType);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain('fleet_upgrade_tasks_created_total{rollout="linux-fleet@19.470-4"} 3');
    expect(res.text).toContain('# TYPE fleet_upgrade_tasks_created_total counter');
  });

  it('/metrics answers 500 and logs when collecting fails', async () => {
    const registry = new Registry();
    new Gauge({
      name: 'broken',
      help: 'Always fails to collect.',
      registers: [registry],
      collect() {
        throw new Error('collect failed');
      },
    });
    const { server, log } = await start({ registry });
    const res = await call(server, '/metrics');
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: 'internal error' });
    expect(log.lines().some((l) => l.msg === 'http request failed' && l.path === '/metrics')).toBe(true);
  });

  it('/status serves the status as JSON, or 404 when the process has none', async () => {
    const { server } = await start({ status: async () => ({ rollouts: [{ id: 'a@1' }], queue: {} }) });
    const res = await call(server, '/status');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ rollouts: [{ id: 'a@1' }], queue: {} });
    const { server: worker } = await start();
    expect((await call(worker, '/status')).status).toBe(404);
  });

  it('lists its endpoints at /', async () => {
    const { server } = await start();
    expect((await call(server, '/')).json).toEqual({
      endpoints: ['/metrics', '/healthz', '/readyz', '/status'],
    });
  });

  it('answers 404 for an unknown path, and tolerates a trailing slash and a query', async () => {
    const { server } = await start();
    const res = await call(server, '/nope');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: 'no such path: /nope' });
    expect((await call(server, '/healthz/')).status).toBe(200);
    expect((await call(server, '/healthz?verbose=1')).status).toBe(200);
  });

  it('answers 405 to methods other than GET and HEAD', async () => {
    const { server } = await start();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      const res = await call(server, '/metrics', method);
      expect(res.status).toBe(405);
      expect(res.json).toEqual({ error: 'use GET' });
    }
    const head = await call(server, '/healthz', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  it('close() stops listening', async () => {
    const { server } = await start();
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    await expect(request(`${server.url}/healthz`)).rejects.toThrow();
  });
});
