/**
 * `POST /upgrades` and `GET /rollouts/{id}/report` (issue #20) on a loopback port, through the real
 * HTTP server over the real Redis, the one-off's checks asking the real simulator over HTTP: the
 * checks of `fleet-upgrade upgrade` (a build not offered: 400 and nothing written; hosted and
 * unknown Collectors named and left out; none left: 409), the token rule, a web page's Origin, the
 * content type, the body limit and the rate limit shared with the control actions; the report as
 * CSV or JSON by `?format=` or `Accept`, streamed for 10,000 rows, under `--auth-reads`.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createCollectorUpgradeClient } from '../../../src/api/collector-upgrade-client.js';
import { createState, type FleetState } from '../../../src/cli/boot/create-state.js';
import { ControlToken } from '../../../src/http/authorize-request.js';
import { createRolloutApi } from '../../../src/http/create-rollout-api.js';
import { RateLimiter } from '../../../src/http/rate-limiter.js';
import { UPGRADE_BODY_LIMIT_BYTES } from '../../../src/http/schema.js';
import { type RunningHttpServer, startHttpServer } from '../../../src/http/start-http-server.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { createMetrics } from '../../../src/metrics/create-metrics.js';
import { keyOf, newRecord } from '../../../src/rollout/collector/index.js';
import {
  ONE_OFF_MAX_COLLECTORS,
  OneOffPolicies,
  REPORT_COLUMNS,
  WORKLIST_COLUMNS,
} from '../../../src/rollout/index.js';
import { readFleetStatus } from '../../../src/rollout/life/index.js';
import { type RunningSimulator, startSimulator } from '../../../src/simulator/start-simulator.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';
import { seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const TOKEN = 'tok-9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d';

interface World extends FleetState {
  server: RunningHttpServer;
  sim: RunningSimulator;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function open(options: { authReads?: boolean; rateLimiter?: RateLimiter } = {}): Promise<World> {
  const sim = await startSimulator({
    fleet: {
      builds: ['19.400-5', '19.450-12', '19.470-4'],
      users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
      collectors: [
        { id: 1, version: '19.400-5' },
        { id: 2, version: '19.450-12', alive: false },
        { id: 3, version: '19.470-4' },
        { id: 4, version: '19.400-5', type: 'Hosted' },
      ],
    },
    timeScale: 60,
  });
  closers.push(() => sim.close());
  const client = createCollectorUpgradeClient({
    config: { baseUrl: sim.baseUrl, accessId: 'ops', accessKey: 'ops-secret' },
  });
  closers.push(() => client.close());
  const state = createState(ctx.redis, ctx.prefix);
  const clock = createManualClock(T0);
  const log = captureLogger('debug');
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: createMetrics().registry,
    readiness: [],
    status: () => readFleetStatus(state),
    api: createRolloutApi({
      deps: { rollouts: state.rollouts, store: state.store, events: state.events, clock, keys: state.keys },
      redis: ctx.redis,
      token: new ControlToken(TOKEN),
      authReads: options.authReads ?? false,
      logger: log.logger,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
      oneOffs: { orgs: ['default'], client: () => client },
    }),
    logger: log.logger,
  });
  closers.push(() => server.close());
  return { ...state, server, sim };
}

/** The answer's JSON (any: each test reads the fields it expects), or undefined. */
function parseJson(text: string) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function call(
  w: World,
  path: string,
  options: {
    method?: 'GET' | 'POST' | 'HEAD';
    body?: unknown;
    token?: string;
    headers?: Record<string, string>;
  } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await request(`${w.server.url}${path}`, {
    method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(body === undefined ? {} : { body }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text, json: parseJson(text) };
}

/** `token` null: none sent. */
const upgrade = (w: World, body: unknown, token: string | null = TOKEN, headers = {}) =>
  call(w, '/upgrades', { method: 'POST', body, headers, ...(token === null ? {} : { token }) });

const oneOffs = (w: World) => new OneOffPolicies(ctx.redis, w.keys).list();

/** `n` distinct Collector ids at their longest (16 digits), none of them in the service's fleet. */
const longIds = (n: number): number[] => Array.from({ length: n }, (_, i) => 9_000_000_000_000_000 + i);

describe('POST /upgrades', () => {
  it('takes as many ids as the command in one request, at their longest; one more is a 400', async () => {
    const w = await open();
    const most = [1, 2, ...longIds(ONE_OFF_MAX_COLLECTORS - 2)];
    expect(Buffer.byteLength(JSON.stringify({ collectors: most, to: 'latest' }))).toBeGreaterThan(16 * 1024);
    const res = await upgrade(w, { collectors: most, to: 'latest' });
    expect(res.status, res.text.slice(0, 300)).toBe(201);
    expect(res.json.collectors).toEqual([1, 2]);
    expect(res.json.named).toHaveLength(ONE_OFF_MAX_COLLECTORS - 1); // 2 is offline, the others unknown
    const tooMany = await upgrade(w, { collectors: longIds(ONE_OFF_MAX_COLLECTORS + 1), to: 'latest' });
    expect(tooMany.status).toBe(400);
    expect(tooMany.json.error.message).toBe(
      `collectors: at most ${ONE_OFF_MAX_COLLECTORS} Collectors in one upgrade`,
    );
    // None left: the refusal names the first ten and counts the rest, in one readable line.
    const none = await upgrade(w, { collectors: longIds(ONE_OFF_MAX_COLLECTORS), to: 'latest' });
    expect(none.status).toBe(409);
    expect(none.json.error.message).toMatch(
      /^no one-off started: none of the 10000 named Collectors can be upgraded to latest \(Collector 9000000000000000: not found .*; and 9990 more\)$/,
    );
    expect(none.json.error.message.length).toBeLessThan(2000);
    expect((await oneOffs(w)).map((p) => p.name)).toEqual([res.json.oneOff]);
  });

  it('writes the one-off with the checks of `fleet-upgrade upgrade`', async () => {
    const w = await open();
    const res = await upgrade(w, { collectors: [1, 2, 3, 4, 99], to: 'latest' });
    expect(res.status, res.text).toBe(201);
    expect(res.json).toMatchObject({ org: 'default', build: '19.470-4', collectors: [1, 2] });
    expect(
      Object.fromEntries(res.json.named.map((n: { id: number; finding: string }) => [n.id, n.finding])),
    ).toEqual({
      2: 'offline',
      3: 'current',
      4: 'hosted',
      99: 'unknown',
    });
    const written = await oneOffs(w);
    expect(written.map((p) => p.name)).toEqual([res.json.oneOff]);
    expect(written[0]?.select).toMatchObject([{ ids: [1, 2] }]);
    expect(res.json.message).toMatch(/one-off upgrade-\S+: 2 Collectors to latest \(now 19\.470-4\)/);
  });

  it('refuses a build the service does not offer (400, nothing written), and a one-off with no Collector left (409)', async () => {
    const w = await open();
    const bad = await upgrade(w, { collectors: [1], to: '19.999-9' });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toEqual({
      code: 'invalid',
      message: expect.stringMatching(
        /does not offer build 19\.999-9 \(it offers .*19\.470-4 \(latest\)\); nothing was started/,
      ),
    });
    const none = await upgrade(w, { collectors: [3, 4], to: '19.470-4' });
    expect(none.status).toBe(409);
    expect(none.json.error.message).toMatch(/no one-off started: none of the 2 named Collectors/);
    expect(await oneOffs(w)).toEqual([]);
  });

  it('the same token, Origin, content type, body and rate rules as the control actions', async () => {
    const w = await open({ rateLimiter: new RateLimiter({ burst: 5, perSecond: 0.001 }) });
    const body = { collectors: [1], to: '19.470-4' };
    expect((await upgrade(w, body, null)).status).toBe(401);
    expect((await upgrade(w, body, 'tok-wrong')).status).toBe(401);
    expect((await upgrade(w, body, TOKEN, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await upgrade(w, body, TOKEN, { 'content-type': 'text/plain' })).status).toBe(415);
    const large = await upgrade(w, { collectors: longIds(12_000), to: 'latest' });
    expect(large.status).toBe(413);
    expect(large.json.error.message).toBe(`the body is larger than ${UPGRADE_BODY_LIMIT_BYTES} bytes`);
    const invalid = await upgrade(w, { collectors: [0, 1.5], to: 'newest', fast: true });
    expect(invalid.status).toBe(400);
    expect(invalid.json.error.message).toMatch(/collectors\[0\]: expected a Collector id/);
    expect(invalid.json.error.message).toMatch(/to: expected "latest" or a build/);
    expect(invalid.json.error.message).toMatch(/fast/);
    expect((await call(w, '/upgrades', { token: TOKEN })).status).toBe(405);
    // The allowed caller's bucket (5) is spent by the requests that passed the gate (the 413 and
    // the 400 above, then three 409s): the next upgrade, and any control action, get 429 (one
    // limiter for all of them).
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await upgrade(w, { collectors: [3], to: '19.470-4' })).status);
    const pause = await call(w, '/rollouts/x%401.0-1/pause', { method: 'POST', body: {}, token: TOKEN });
    expect(statuses).toEqual([409, 409, 409, 429]);
    expect(pause.status).toBe(429);
    expect(pause.headers['retry-after']).toBeDefined();
    expect(await oneOffs(w)).toEqual([]);
  });
});

describe('GET /rollouts/{id}/report', () => {
  const ID = 'big@19.470-4';

  /** A rollout of `n` Collectors, their records written as the store keeps them. */
  async function seedBig(w: World, n: number): Promise<void> {
    await w.rollouts.start({
      policy: 'big',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    const pipeline = ctx.redis.pipeline();
    for (let i = 1; i <= n; i++) {
      const r = {
        ...newRecord(
          { id: i, name: `c,${i}`, hostName: `h-${i}`, collectorVersion: '19.400-5' },
          '19.470-4',
          T0,
        ),
        state: 'succeeded',
        finishedAt: T0 + i,
      };
      pipeline.hset(w.keys.results(ID), String(keyOf(r as never)), JSON.stringify(r));
    }
    await pipeline.exec();
  }

  it('CSV by ?format= or Accept, JSON otherwise; 10,000 rows streamed in order', async () => {
    const w = await open();
    await seedBig(w, 10_000);
    const csv = await call(w, `/rollouts/${encodeURIComponent(ID)}/report?format=csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    // Streamed: no length known in advance, chunks as the socket takes them.
    expect(csv.headers['transfer-encoding']).toBe('chunked');
    const lines = csv.text.trim().split('\n');
    expect(lines).toHaveLength(10_001);
    expect(lines[0]).toBe(REPORT_COLUMNS.join(','));
    expect(lines[1]).toMatch(/^1,"c,1",h-1,19\.400-5,19\.470-4,succeeded,/);
    expect(lines[1]).toContain(new Date(T0 + 1).toISOString());
    expect(lines[10_000]?.startsWith('10000,')).toBe(true);

    const byAccept = await call(w, `/rollouts/${encodeURIComponent(ID)}/report`, {
      headers: { accept: 'text/csv, application/json;q=0.5' },
    });
    expect(byAccept.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(byAccept.text.trim().split('\n')).toHaveLength(10_001);

    const json = await call(w, `/rollouts/${encodeURIComponent(ID)}/report`);
    expect(json.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(json.json.rollout).toMatchObject({ id: ID, phase: 'running' });
    expect(json.json.collectors).toHaveLength(10_000);
    expect(json.json.collectors[0]).toMatchObject({ id: 1, name: 'c,1', state: 'succeeded', org: 'default' });
  }, 60_000);

  it('?worklist=true: only the Collectors that need a person, with the command that resolves each, as report --worklist', async () => {
    const w = await open();
    await w.rollouts.start({
      policy: 'big',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    const states = ['succeeded', 'manual', 'failed', 'unknown', 'queued'] as const;
    for (const [i, state] of states.entries())
      await seedCollector(
        { store: w.store, rolloutId: ID, settings: SETTINGS, now: T0 },
        newRecord({ id: i + 1, name: `c-${i + 1}`, collectorVersion: '19.400-5' }, '19.470-4', T0),
        state,
      );
    const path = `/rollouts/${encodeURIComponent(ID)}/report?worklist=true`;
    const json = await call(w, path);
    expect(json.status).toBe(200);
    expect(json.json.rollout).toBe(ID);
    expect(json.json.worklist.map((r: { id: number; state: string }) => [r.id, r.state])).toEqual([
      [2, 'manual'],
      [4, 'unknown'],
    ]);
    expect(json.json.worklist[1].resolve).toBe(`fleet-upgrade retry ${ID} --only unknown`);
    const csv = await call(w, `${path}&format=csv`);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toBe(WORKLIST_COLUMNS.join(','));
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['2', '4']);
    expect(lines[2]).toContain(`fleet-upgrade retry ${ID} --only unknown`);
    // The whole report is unchanged without it, or with worklist=false.
    expect(
      (await call(w, `/rollouts/${encodeURIComponent(ID)}/report?worklist=false`)).json.collectors,
    ).toHaveLength(5);
    const bad = await call(w, `/rollouts/${encodeURIComponent(ID)}/report?worklist=yes`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toBe("worklist: expected true or false, not 'yes'");
  });

  it('refuses an unknown format or rollout; under --auth-reads, needs the token', async () => {
    const w = await open({ authReads: true });
    await seedBig(w, 3);
    const path = `/rollouts/${encodeURIComponent(ID)}/report`;
    expect((await call(w, path)).status).toBe(401);
    expect((await call(w, path, { token: TOKEN })).json.collectors).toHaveLength(3);
    const xml = await call(w, `${path}?format=xml`, { token: TOKEN });
    expect(xml.status).toBe(400);
    expect(xml.json.error.message).toBe("format: expected csv or json, not 'xml'");
    expect((await call(w, '/rollouts/nope%401.0-1/report', { token: TOKEN })).status).toBe(404);
    expect((await call(w, path, { method: 'POST', body: {}, token: TOKEN })).status).toBe(405);
  });
});
