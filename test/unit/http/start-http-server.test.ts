/**
 * The daemon's HTTP endpoints on a loopback port: /healthz, /readyz naming the failing checks,
 * /metrics in Prometheus's text format, /status, and 404/405 for everything else, as
 * `{error: {code, message}}`; hostile requests (`GET //`, broken percent-encodings, absolute
 * targets, garbage request lines, header floods) get an answer or a closed connection, and the
 * server answers the next request.
 */
import { connect } from 'node:net';
import { Gauge, Registry } from 'prom-client';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ReadinessCheck,
  type RunningHttpServer,
  startHttpServer,
} from '../../../src/http/start-http-server.js';
import { SERVER_LIMITS } from '../../../src/lib/server-limits.js';
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
  return {
    status: res.statusCode,
    type: String(res.headers['content-type']),
    allow: res.headers.allow,
    text,
    json,
  };
}

/** Sends `raw` as is on a new connection; resolves to what came back until the server closed it. */
function rawRequest(server: RunningHttpServer, raw: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(raw));
    let out = '';
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      out += d;
    });
    socket.on('end', () => resolve(out));
    socket.on('close', () => resolve(out));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' ? resolve(out) : reject(err),
    );
    socket.setTimeout(5000, () => {
      socket.destroy();
      resolve(out);
    });
  });
}

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);

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
    metrics.tasksCreated.labels({ rollout: 'linux-fleet@19.470-4', org: 'default' }).inc(3);
    const { server } = await start({ registry: metrics.registry });
    const res = await call(server, '/metrics');
    expect(res.status).toBe(200);
    expect(res.type).toBe(metrics.registry.contentType);
    expect(res.type).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.text).toContain(
      'fleet_upgrade_tasks_created_total{rollout="linux-fleet@19.470-4",org="default"} 3',
    );
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
    expect(res.json).toEqual({ error: { code: 'internal', message: 'internal error' } });
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
    expect((await call(server, '/')).json).toEqual({ endpoints: ['/metrics', '/healthz', '/readyz'] });
    const { server: run } = await start({ status: async () => ({}) });
    expect((await call(run, '/')).json).toEqual({
      endpoints: ['/metrics', '/healthz', '/readyz', '/status'],
    });
  });

  it('answers 404 for an unknown path, and tolerates a trailing slash and a query', async () => {
    const { server } = await start();
    const res = await call(server, '/nope');
    expect(res.status).toBe(404);
    expect(res.json).toEqual({ error: { code: 'not_found', message: 'no such path: /nope' } });
    expect((await call(server, '/healthz/')).status).toBe(200);
    expect((await call(server, '/healthz?verbose=1')).status).toBe(200);
  });

  it('answers 405 to methods other than GET and HEAD, with Allow', async () => {
    const { server } = await start();
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      const res = await call(server, '/metrics', method);
      expect(res.status).toBe(405);
      expect(res.allow).toBe('GET, HEAD');
      expect(res.json).toEqual({ error: { code: 'method_not_allowed', message: 'use GET or HEAD' } });
    }
    const head = await call(server, '/healthz', 'HEAD');
    expect(head.status).toBe(200);
    expect(head.text).toBe('');
  });

  describe('hostile requests', () => {
    const request = (target: string, extra = '') =>
      `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${extra}Connection: close\r\n\r\n`;

    it('GET // (which killed the process) answers 404, and the server answers afterwards', async () => {
      const { server } = await start({ status: async () => ({ rollouts: [] }) });
      for (const target of ['//', '///', '//status', '//127.0.0.1:1/healthz']) {
        const answer = await rawRequest(server, request(target));
        expect(statusOf(answer), target).toBe(404);
        expect(answer).toContain('"code":"not_found"');
      }
      expect((await call(server, '/healthz')).status).toBe(200);
    });

    it('a malformed percent-encoding answers 400, and the server answers afterwards', async () => {
      const { server } = await start();
      for (const target of ['/%E0%A4%A', '/%', '/metrics%ZZ', '/healthz/%C0%80']) {
        const answer = await rawRequest(server, request(target));
        expect(statusOf(answer), target).toBe(400);
        expect(answer).toContain('"code":"invalid"');
      }
      expect((await call(server, '/healthz')).status).toBe(200);
    });

    it('absolute, asterisk and garbage targets and request lines get a 4xx or a closed connection', async () => {
      const { server } = await start();
      const answers = [
        await rawRequest(server, request('http://evil.example/healthz')),
        await rawRequest(server, 'OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'),
        await rawRequest(server, 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n'),
        await rawRequest(server, '\x00\x01\x02 garbage\r\n\r\n'),
        await rawRequest(server, `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`),
        await rawRequest(server, request('/healthz', 'Content-Length: 5\r\nTransfer-Encoding: chunked\r\n')),
      ];
      for (const answer of answers) {
        const status = statusOf(answer);
        if (answer !== '') expect(status >= 400 && status < 500, answer.slice(0, 80)).toBe(true);
      }
      expect((await call(server, '/healthz')).status).toBe(200);
    });

    it('too many headers are refused; the limits on time are set', async () => {
      const { server } = await start();
      const headers = Array.from({ length: 3000 }, (_, i) => `X-H${i}: v\r\n`).join('');
      const answer = await rawRequest(server, request('/healthz', headers));
      // Node stops reading at maxHeadersCount (100) or the 16 KB header size: 431 or the 200 of the first 100.
      expect([200, 431]).toContain(statusOf(answer));
      expect((await call(server, '/healthz')).status).toBe(200);
      expect(SERVER_LIMITS.headersTimeoutMs).toBeLessThanOrEqual(SERVER_LIMITS.requestTimeoutMs);
    });
  });

  it('close() stops listening', async () => {
    const { server } = await start();
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    await expect(request(`${server.url}/healthz`)).rejects.toThrow();
  });
});
