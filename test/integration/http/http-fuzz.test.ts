import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createRolloutApi } from '../../../src/http/create-rollout-api.js';
import { type RunningHttpServer, startHttpServer } from '../../../src/http/start-http-server.js';
import { createManualClock } from '../../../src/lib/clock.js';
import type { ServerLimits } from '../../../src/lib/server-limits.js';
import { createMetrics } from '../../../src/metrics/create-metrics.js';
import { readFleetStatus } from '../../../src/rollout/life/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { fuzzServer, rawRequest, sendRaw, watchProcess } from '../../support/raw-http-fuzz.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const servers: RunningHttpServer[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function startServer(limits?: Partial<ServerLimits>) {
  const state = createState(ctx.redis, ctx.prefix);
  const clock = createManualClock(Date.UTC(2025, 0, 6, 9));
  const log = captureLogger('warn');
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: createMetrics().registry,
    readiness: [{ name: 'redis', check: async () => undefined }],
    status: () => readFleetStatus(state),
    api: createRolloutApi({
      deps: { rollouts: state.rollouts, store: state.store, events: state.events, clock, keys: state.keys },
      redis: ctx.redis,
      token: undefined,
      authReads: false,
      logger: log.logger,
    }),
    logger: log.logger,
    ...(limits ? { limits } : {}),
  });
  servers.push(server);
  return { server, port: Number(new URL(server.url).port), log };
}

async function stillServes(url: string): Promise<void> {
  for (const path of ['/healthz', '/rollouts', '/status']) {
    const res = await request(`${url}${path}`);
    await res.body.text();
    expect(res.statusCode, path).toBe(200);
  }
}

describe("the daemon's HTTP server under random and malformed requests", () => {
  it('answers or closes every request, never with a 500, and lives on', async () => {
    const { server, port, log } = await startServer();
    const outcomes = (await fuzzServer(port, rawRequest)).map((o) => o.kind);
    expect(outcomes).toContain('answered');
    await stillServes(server.url);
    expect(log.lines().filter((l) => l.msg === 'http request failed')).toEqual([]);
  });

  it('answers or closes a request whose body or headers never end, once its time is up', async () => {
    const watch = watchProcess();
    const { server, port } = await startServer({ headersTimeoutMs: 500, requestTimeoutMs: 1000 });
    const endless = [
      'POST /rollouts/linux-fleet@19.470-4/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n',
      'POST /rollouts/x/abort HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"re',
      'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
      'GET /rollouts HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nffff\r\n',
    ];
    try {
      const ends = await Promise.all(endless.map((text) => sendRaw(port, Buffer.from(text), 8000, true)));
      // Meanwhile (they are all open) and after, the server answers others.
      await stillServes(server.url);
      for (const end of ends) expect(end.kind, JSON.stringify(end)).toMatch(/^(answered|closed)$/);
      await stillServes(server.url);
    } finally {
      const seen = watch.stop();
      expect(seen, String(seen[0])).toEqual([]);
    }
  });
});
