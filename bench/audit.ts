/**
 * Benchmark: the audit trail through the HTTP API (issue #28). The control API of `run`
 * (createRolloutApi on the real stores, `access:` with one operator, a real Redis) on a loopback
 * port; `--workers` clients, each owning one rollout, alternate `pause {org}` and `resume {org}`
 * paced so that together they send `--rate` requests a second for `--seconds`. Every request is
 * valid: any answer but 200 is a refusal. Each allowed action writes its rollout, history, outbox
 * and audit record in one Lua step. Then the stream is topped up to `--stream` records and read
 * back whole through `GET /audit`, by a client that counts lines without keeping them, while the
 * process's heap is sampled: bounded memory means the heap grows by far less than what streams.
 *
 * Reported: requests sent, refused (non-200), answered per second, latency p50/p99/max, audit
 * records written (must equal the requests: none lost), and the read's records, bytes, time and
 * heap growth. The per-address rate limit of the control API (1/s, burst 20) would refuse this on
 * purpose; the bench gives the API a limiter sized to the rate (what is measured is the audit
 * path, not the limiter).
 *
 * Run: npm run bench -- audit [--rate 1000] [--seconds 60] [--workers 50] [--stream 100000]
 * Needs Redis as the other benchmarks do (scripts/provision-redis.mjs).
 */

import { randomBytes } from 'node:crypto';
import { request } from 'undici';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { createState } from '../src/cli/boot/create-state.js';
import { AccessControl } from '../src/http/access-control.js';
import { createRolloutApi } from '../src/http/create-rollout-api.js';
import { RateLimiter } from '../src/http/rate-limiter.js';
import { startHttpServer } from '../src/http/start-http-server.js';
import { systemClock } from '../src/lib/clock.js';
import { createLogger } from '../src/lib/logger.js';
import { closeRedis, createRedis } from '../src/lib/redis/create-redis.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { createMetrics } from '../src/metrics/create-metrics.js';
import { AuditLog, type RolloutSettings } from '../src/rollout/index.js';
import { TEST_SETTINGS } from '../test/support/rollout-settings.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}
const RATE = arg('rate', 1000);
const SECONDS = arg('seconds', 60);
const WORKERS = arg('workers', 50);
const STREAM = arg('stream', 100_000);
const TOKEN = randomBytes(24).toString('hex');
const SETTINGS: RolloutSettings = TEST_SETTINGS;

const logger = createLogger({ level: 'silent', name: 'bench' });
const provisioned = await provisionRedis({ ensureRedis, logger });
const redis = createRedis(provisioned.url, { name: 'bench-audit' });
const prefix = `bench:${randomBytes(6).toString('hex')}:`;
const state = createState(redis, prefix);
const clock = systemClock;
const audit = new AuditLog(redis, state.keys);
const ids: string[] = [];
for (let w = 0; w < WORKERS; w++) {
  const { rollout } = await state.rollouts.start({
    policy: `bench-${w}`,
    target: '19.470-4',
    build: '19.470-4',
    maxInFlight: 10,
    settings: SETTINGS,
    now: clock.now(),
  });
  ids.push(rollout.id);
}
const access = new AccessControl(
  [{ name: 'bench-operator', grant: { role: 'operator' }, token: { kind: 'value', value: TOKEN } }],
  undefined,
  { read: () => '', version: () => undefined },
  logger,
);
const api = createRolloutApi({
  deps: { rollouts: state.rollouts, store: state.store, events: state.events, clock, keys: state.keys },
  redis,
  token: undefined,
  authReads: false,
  access,
  audit,
  logger,
  rateLimiter: new RateLimiter({ burst: RATE * 2, perSecond: RATE * 2 }),
});
const server = await startHttpServer({
  host: '127.0.0.1',
  port: 0,
  registry: createMetrics().registry,
  readiness: [],
  api,
  logger,
});

const latencies: number[] = [];
const refusals = new Map<number, number>();
let sent = 0;
const started = performance.now();
const end = started + SECONDS * 1000;
const perWorkerMs = (1000 * WORKERS) / RATE;

async function worker(id: string, offset: number): Promise<void> {
  let next = started + offset;
  let paused = false;
  while (next < end) {
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const action = paused ? 'resume' : 'pause';
    const t = performance.now();
    sent++;
    const res = await request(`${server.url}/rollouts/${encodeURIComponent(id)}/${action}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: '{"org":"default"}',
    });
    await res.body.dump();
    latencies.push(performance.now() - t);
    if (res.statusCode === 200) paused = !paused;
    else refusals.set(res.statusCode, (refusals.get(res.statusCode) ?? 0) + 1);
    next += perWorkerMs;
  }
}

await Promise.all(ids.map((id, i) => worker(id, (i * perWorkerMs) / WORKERS)));
const elapsed = (performance.now() - started) / 1000;
const records = await redis.xlen(state.keys.audit);
const sorted = [...latencies].sort((a, b) => a - b);
const q = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
const lines = [
  `audit through the HTTP API: ${WORKERS} clients, ${RATE}/s asked for ${SECONDS} s`,
  `  requests sent        ${sent} in ${elapsed.toFixed(1)} s (${(sent / elapsed).toFixed(0)}/s answered)`,
  `  refused (non-200)    ${[...refusals.values()].reduce((a, b) => a + b, 0)}${refusals.size ? ` ${JSON.stringify(Object.fromEntries(refusals))}` : ''}`,
  `  latency ms           p50 ${q(0.5).toFixed(1)}  p99 ${q(0.99).toFixed(1)}  max ${q(1).toFixed(1)}`,
  `  audit records        ${records} (lost: ${sent - records})`,
];

// Top up to STREAM records, then read them all back through GET /audit, counting only.
const missing = STREAM - records;
for (let i = 0; i < missing; i += 1000) {
  const pipe = redis.pipeline();
  for (let j = i; j < Math.min(missing, i + 1000); j++)
    pipe.xadd(
      state.keys.audit,
      '*',
      'r',
      JSON.stringify({
        who: 'bench-operator',
        via: 'token',
        what: 'pause',
        rollout: ids[j % WORKERS],
        answer: 'allowed',
        status: 200,
      }),
    );
  await pipe.exec();
}
global.gc?.();
const heapBefore = process.memoryUsage().heapUsed;
let heapMax = heapBefore;
const sampler = setInterval(() => {
  heapMax = Math.max(heapMax, process.memoryUsage().heapUsed);
}, 20);
const readStart = performance.now();
const res = await request(`${server.url}/audit?format=json`, {
  headers: { authorization: `Bearer ${TOKEN}` },
});
let bytes = 0;
let count = 0;
for await (const chunk of res.body) {
  bytes += chunk.length;
  for (const b of chunk as Buffer) if (b === 10) count++;
}
clearInterval(sampler);
const readSeconds = (performance.now() - readStart) / 1000;
lines.push(
  `  GET /audit           ${count} records, ${(bytes / 1e6).toFixed(1)} MB in ${readSeconds.toFixed(1)} s; heap grew at most ${((heapMax - heapBefore) / 1e6).toFixed(1)} MB`,
);
process.stdout.write(`${lines.join('\n')}\n`);

await server.close();
let cursor = '0';
do {
  const [nextCursor, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
  cursor = nextCursor;
  if (keys.length) await redis.del(...keys);
} while (cursor !== '0');
await closeRedis(redis);
await provisioned.stop();
