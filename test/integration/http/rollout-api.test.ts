/**
 * The rollout API of `run` (src/http/create-rollout-api.ts behind startHttpServer) on a loopback
 * port, over the real Redis with rollouts seeded by the real stores: every read and control
 * endpoint with its answer and its effect (the rollout's phase, its Collectors, its history with
 * the actor `admin` for the token's holder, `http:<address>` for a loopback caller without one); the refusals with their stable codes and statuses; a missing or
 * wrong token changes nothing; no token configured: loopback callers are served (non-loopback
 * callers are refused by the pure decision, test/unit/http/authorize-request.test.ts);
 * `--auth-reads`; hostile input (`GET //`, broken percent-encodings, a 1 MB body, bad JSON,
 * another content type); the token in no log line.
 */
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/http/rate-limiter.js';
import type { CollectorState } from '../../../src/rollout/collector/index.js';
import type { RecordedEvent } from '../../../src/rollout/life/index.js';
import { useTestRedis } from '../../support/redis.js';
import { type ApiWorld, openRolloutApi, seedRollout, T0 } from '../../support/rollout-api-world.js';

const ctx = useTestRedis();

const MINUTE = 60_000;
const POLICY = 'linux-fleet';
const BUILD = '19.470-4';
const ID = `${POLICY}@${BUILD}`;
const PATH_ID = encodeURIComponent(ID);
const TOKEN = 'tok-4c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f';

type World = ApiWorld;

const worlds: ApiWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function open(options: Parameters<typeof openRolloutApi>[2] = {}): Promise<World> {
  const w = await openRolloutApi(ctx.redis, ctx.prefix, options);
  worlds.push(w);
  return w;
}

const seed = (w: World, states: Partial<Record<CollectorState, number>>, id = ID): Promise<void> =>
  seedRollout(w, id, states);

interface CallOptions {
  method?: 'GET' | 'POST' | 'HEAD' | 'PUT' | 'DELETE' | 'OPTIONS';
  /** An object is sent as JSON with its content type. */
  body?: unknown;
  token?: string;
  headers?: Record<string, string>;
}

/** The answer's JSON (any: each test reads the fields it expects), or undefined. */
function parseJson(text: string) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function call(w: World, path: string, options: CallOptions = {}) {
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
  const json = parseJson(await res.body.text());
  return { status: res.statusCode, headers: res.headers, json };
}

const post = (w: World, action: string, body: unknown = {}, token?: string, id = PATH_ID) =>
  call(w, `/rollouts/${id}/${action}`, { method: 'POST', body, ...(token === undefined ? {} : { token }) });

const history = async (w: World, id = ID): Promise<RecordedEvent[]> => w.events.history(id);

describe('read endpoints', () => {
  it('GET /rollouts lists every rollout with its counts; GET /status as before', async () => {
    const w = await open();
    await seed(w, { queued: 2, failed: 1 });
    const res = await call(w, '/rollouts');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.json.rollouts).toHaveLength(1);
    expect(res.json.rollouts[0]).toMatchObject({
      id: ID,
      policy: POLICY,
      build: BUILD,
      phase: 'running',
      counts: { queued: 2, failed: 1 },
      total: 3,
      done: 1,
      inflight: 0,
    });
    const status = await call(w, '/status');
    expect(status.status).toBe(200);
    expect(status.json.rollouts[0]).toMatchObject({ id: ID, counts: { queued: 2, failed: 1 } });
  });

  it('GET /rollouts/{id} answers one rollout (the id raw or percent-encoded), 404 when unknown', async () => {
    const w = await open();
    await seed(w, { succeeded: 1 });
    for (const path of [`/rollouts/${ID}`, `/rollouts/${PATH_ID}`, `/rollouts/${PATH_ID}/`]) {
      const res = await call(w, path);
      expect(res.status, path).toBe(200);
      expect(res.json).toMatchObject({ id: ID, phase: 'running', counts: { succeeded: 1 }, total: 1 });
    }
    const unknown = await call(w, '/rollouts/nobody@1.0-1');
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({
      error: { code: 'not_found', message: "no rollout 'nobody@1.0-1' (see GET /rollouts)" },
    });
    expect((await call(w, `/rollouts/${'x'.repeat(5000)}`)).json.error.code).toBe('not_found');
    expect((await call(w, `/rollouts/${PATH_ID}/nothing`)).status).toBe(404);
    expect((await call(w, `/rollouts/${PATH_ID}/pause/more`)).status).toBe(404);
  });

  it('GET /rollouts/{id}/history answers the audit trail, oldest first; ?limit takes the newest', async () => {
    const w = await open();
    await seed(w, { queued: 1 });
    await post(w, 'pause');
    w.clock.set(T0 + MINUTE);
    await post(w, 'resume');
    const res = await call(w, `/rollouts/${PATH_ID}/history`);
    expect(res.status).toBe(200);
    expect(res.json.rollout).toBe(ID);
    expect(res.json.events.map((e: RecordedEvent) => e.type)).toEqual(['rollout.paused', 'rollout.resumed']);
    expect(res.json.events[1]).toMatchObject({
      at: T0 + MINUTE,
      source: 'operator',
      actor: 'http:127.0.0.1',
    });
    const last = await call(w, `/rollouts/${PATH_ID}/history?limit=1`);
    expect(last.json.events.map((e: RecordedEvent) => e.type)).toEqual(['rollout.resumed']);
    for (const limit of ['0', '-1', '1.5', 'x', '10001']) {
      const bad = await call(w, `/rollouts/${PATH_ID}/history?limit=${limit}`);
      expect(bad.status, limit).toBe(400);
      expect(bad.json.error.code).toBe('invalid');
    }
    expect((await call(w, '/rollouts/nobody@1.0-1/history')).json.error.code).toBe('not_found');
  });

  it('answers 405 with Allow to other methods', async () => {
    const w = await open();
    for (const [path, method, allow] of [
      ['/rollouts', 'POST', 'GET, HEAD'],
      [`/rollouts/${PATH_ID}`, 'DELETE', 'GET, HEAD'],
      [`/rollouts/${PATH_ID}/history`, 'PUT', 'GET, HEAD'],
      [`/rollouts/${PATH_ID}/pause`, 'GET', 'POST'],
      [`/rollouts/${PATH_ID}/abort`, 'OPTIONS', 'POST'],
      ['/status', 'POST', 'GET, HEAD'],
    ] as const) {
      const res = await call(w, path, { method });
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json.error.code).toBe('method_not_allowed');
    }
  });
});

describe('control endpoints', () => {
  it('pause and resume: the answer, the phase, and the history with the actor admin (the token holder)', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { queued: 2, pending: 1 });
    w.clock.set(T0 + MINUTE);
    const paused = await post(w, 'pause', {}, TOKEN);
    expect(paused.status).toBe(200);
    expect(paused.json).toMatchObject({
      rollout: ID,
      message: `${ID} paused by admin: nothing new starts; tasks under way finish`,
      event: { type: 'rollout.paused', source: 'operator', actor: 'admin', at: T0 + MINUTE },
    });
    expect(paused.json.event.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await w.rollouts.get(ID)).toMatchObject({ phase: 'paused', pausedBy: 'admin' });

    const again = await post(w, 'pause', {}, TOKEN);
    expect(again.status).toBe(409);
    expect(again.json).toEqual({
      error: {
        code: 'conflict',
        message: `rollout ${ID} is paused: only a running or converged rollout can be paused`,
      },
    });

    // An empty body is {}.
    const resumed = await call(w, `/rollouts/${PATH_ID}/resume`, {
      method: 'POST',
      token: TOKEN,
      headers: { 'content-type': 'application/json' },
    });
    expect(resumed.status).toBe(200);
    expect(resumed.json.message).toBe(`${ID} resumed by admin: released the pause by admin`);
    expect((await w.rollouts.get(ID))?.phase).toBe('running');
    expect((await history(w)).map((e) => [e.type, e.actor])).toEqual([
      ['rollout.paused', 'admin'],
      ['rollout.resumed', 'admin'],
    ]);
  });

  it('abort with a reason: waiting Collectors end aborted', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { queued: 3, pending: 1 });
    const res = await post(w, 'abort', { reason: 'bad build, see INC-42' }, TOKEN);
    expect(res.status).toBe(200);
    expect(res.json.message).toBe(
      // Who, then why, as the command records it (issue #26: status showed the reason without who).
      `${ID} aborted (by admin: bad build, see INC-42): 3 Collectors that had not started end aborted; tasks under way finish`,
    );
    expect(res.json.event).toMatchObject({ type: 'rollout.aborted', actor: 'admin' });
    expect(await w.store.counts(ID)).toEqual({ aborted: 3, pending: 1 });
    for (const [body, message] of [
      [{ reason: '' }, /reason: write a reason/],
      [{ reason: 'x'.repeat(501) }, /reason: at most 500 characters/],
      [{ reason: 'a\u001b[31mred' }, /reason: control characters are refused/],
      [{ reason: 42 }, /reason:/],
    ] as const) {
      const bad = await post(w, 'abort', body, TOKEN);
      expect(bad.status).toBe(400);
      expect(bad.json.error.code).toBe('invalid');
      expect(bad.json.error.message).toMatch(message);
    }
    // Aborted: a second abort is a conflict.
    expect((await post(w, 'abort', {}, TOKEN)).status).toBe(409);
  });

  it('promote ends an approval wait; full opens every remaining wave', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { succeeded: 2, queued: 6 });
    const idle = await post(w, 'promote', {}, TOKEN);
    expect(idle.status).toBe(409);
    expect(idle.json.error.message).toBe(`rollout ${ID} is running: nothing waits: wave 1 of 1 is under way`);
    await w.rollouts.setWave(ID, 0, { index: 0, waitingFor: 'approval', of: 4 }, T0);
    const res = await post(w, 'promote', {}, TOKEN);
    expect(res.status).toBe(200);
    expect(res.json.message).toBe(`${ID} promoted by admin: wave 2 of 4 opens now`);
    expect(res.json.event.detail).toEqual({ full: false, wave: 2, ended: 'approval' });
    await w.rollouts.setWave(ID, 1, { index: 1, waitingFor: 'approval', of: 4 }, T0);
    const full = await post(w, 'promote', { full: true }, TOKEN);
    expect(full.json.message).toBe(`${ID} promoted by admin: every remaining wave opens now`);
    expect((await post(w, 'promote', { full: 'yes' }, TOKEN)).json.error.code).toBe('invalid');
    expect((await post(w, 'promote', { ful: true }, TOKEN)).json.error.message).toContain('ful');
  });

  it('retry gives exactly the chosen outcomes one new attempt; other values are 400', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { failed: 2, timed_out: 1, succeeded: 1 });
    const res = await post(w, 'retry', { only: ['failed'] }, TOKEN);
    expect(res.status).toBe(200);
    expect(res.json.message).toBe(`${ID}: 2 Collectors get one new attempt (failed)`);
    expect(res.json.event).toMatchObject({
      type: 'rollout.retried',
      detail: { retried: 2, byState: { failed: 2 } },
    });
    expect(await w.store.counts(ID)).toMatchObject({ timed_out: 1, succeeded: 1 });
    expect((await w.store.counts(ID)).failed ?? 0).toBe(0);
    for (const body of [
      {},
      { only: [] },
      { only: ['succeeded'] },
      { only: 'failed' },
      { only: ['failed'], x: 1 },
    ]) {
      const bad = await post(w, 'retry', body, TOKEN);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.json.error.code).toBe('invalid');
    }
    expect((await post(w, 'retry', { only: ['succeeded'] }, TOKEN)).json.error.message).toContain(
      'expected one of failed, timed_out, not_alive, error, rejected, unhealthy, manual, quarantined',
    );
  });

  it('rollback files a request for the outcomes chosen, or all; other values are 400, nothing to roll back 409', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { failed: 2, succeeded: 1 });
    const res = await post(w, 'rollback', {}, TOKEN);
    expect(res.status).toBe(200);
    expect(res.json.message).toMatch(
      /rollback of 2 Collectors \(unhealthy, failed, timed_out\) to their previous builds requested/,
    );
    expect(res.json.event).toMatchObject({ type: 'rollback.requested', actor: 'admin' });
    const all = await post(w, 'rollback', { all: true }, TOKEN);
    expect(all.json.message).toMatch(
      /rollback of 3 Collectors \(succeeded, verifying, unhealthy, failed, timed_out\)/,
    );
    expect((await post(w, 'rollback', { only: ['timed_out'] }, TOKEN)).status).toBe(409);
    for (const body of [
      { only: [] },
      { only: ['skipped'] },
      { only: ['failed'], all: true },
      { all: 'yes' },
      { x: 1 },
    ]) {
      const bad = await post(w, 'rollback', body, TOKEN);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.json.error.code).toBe('invalid');
    }
  });

  it('forget removes a finished rollout; a running one is a conflict, an unknown one 404', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { queued: 1 });
    const running = await post(w, 'forget', {}, TOKEN);
    expect(running.status).toBe(409);
    await post(w, 'abort', {}, TOKEN);
    const res = await post(w, 'forget', {}, TOKEN);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ rollout: ID, message: `forgot ${ID} and the records of its 1 Collector` });
    expect(await w.rollouts.get(ID)).toBeUndefined();
    const gone = await post(w, 'forget', {}, TOKEN);
    expect(gone.status).toBe(404);
    expect(gone.json.error.code).toBe('not_found');
    expect((await post(w, 'pause', {}, TOKEN, 'nobody@1.0-1')).json).toEqual({
      error: { code: 'not_found', message: "no rollout 'nobody@1.0-1' (see `fleet-upgrade status`)" },
    });
  });
});

describe('authorization', () => {
  it('a missing or wrong token answers 401 and changes nothing; the token is in no log line', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { queued: 2, failed: 1 });
    const before = { rollout: await w.rollouts.get(ID), counts: await w.store.counts(ID) };
    const wrong = `${TOKEN.slice(0, -1)}0`;
    for (const [action, body] of [
      ['pause', {}],
      ['resume', {}],
      ['abort', { reason: 'x' }],
      ['promote', { full: true }],
      ['retry', { only: ['failed'] }],
      ['forget', {}],
    ] as const) {
      const refused: Record<string, string>[] = [
        {},
        { authorization: `Bearer ${wrong}` },
        { authorization: `Basic ${TOKEN}` },
      ];
      for (const headers of refused) {
        const res = await call(w, `/rollouts/${PATH_ID}/${action}`, { method: 'POST', body, headers });
        expect(res.status, `${action} ${JSON.stringify(headers)}`).toBe(401);
        expect(res.json.error.code).toBe('unauthorized');
        expect(res.headers['www-authenticate']).toMatch(/^Bearer realm="fleet-upgrade"/);
      }
    }
    expect(await history(w)).toEqual([]);
    expect(await w.rollouts.get(ID)).toEqual(before.rollout);
    expect(await w.store.counts(ID)).toEqual(before.counts);
    // The right token works; it is not in the history nor in any log line, nor the wrong one.
    expect((await post(w, 'pause', {}, TOKEN)).status).toBe(200);
    expect(JSON.stringify(await history(w))).not.toContain(TOKEN);
    expect(w.log.lines().some((l) => l.msg === 'http request refused' && l.code === 'unauthorized')).toBe(
      true,
    );
    expect(w.log.lines().some((l) => l.msg === 'control action' && l.actor === 'admin')).toBe(true);
    expect(w.log.text()).not.toContain(TOKEN);
    expect(w.log.text()).not.toContain(wrong);
    // What the logger does with the header should anyone log it (redacted at the logger).
    w.log.logger.info({ headers: { authorization: `Bearer ${TOKEN}` } }, 'headers');
    w.log.logger.info({ req: { headers: { authorization: `Bearer ${TOKEN}` } } }, 'request');
    w.log.logger.info({ authorization: `Bearer ${TOKEN}` }, 'header');
    expect(w.log.text()).not.toContain(TOKEN);
  });

  it('without a token, loopback callers are served; another Host (DNS rebinding) is refused with 403', async () => {
    const w = await open();
    await seed(w, { queued: 1 });
    const res = await post(w, 'pause');
    expect(res.status).toBe(200);
    expect(res.json.event.actor).toBe('http:127.0.0.1');
    const rebound = await call(w, `/rollouts/${PATH_ID}/resume`, {
      method: 'POST',
      body: {},
      headers: { host: 'evil.example:9464' },
    });
    expect(rebound.status).toBe(403);
    expect(rebound.json.error.code).toBe('forbidden');
    expect(rebound.json.error.message).toContain('no control token is configured');
    expect((await w.rollouts.get(ID))?.phase).toBe('paused');
  });

  it('--auth-reads: the read endpoints need the token; the probes never do', async () => {
    const w = await open({ token: TOKEN, authReads: true });
    await seed(w, { queued: 1 });
    for (const path of ['/status', '/rollouts', `/rollouts/${PATH_ID}`, `/rollouts/${PATH_ID}/history`]) {
      const res = await call(w, path);
      expect(res.status, path).toBe(401);
      expect(res.json.error.code).toBe('unauthorized');
      expect((await call(w, path, { token: 'wrong-token-0123456789' })).status).toBe(401);
      expect((await call(w, path, { token: TOKEN })).status, path).toBe(200);
    }
    // An unknown rollout is not revealed to a caller without the token.
    expect((await call(w, '/rollouts/nobody@1.0-1')).status).toBe(401);
    for (const path of ['/metrics', '/healthz', '/readyz'])
      expect((await call(w, path)).status, path).toBe(200);
    // Without --auth-reads the reads are open even when a token is configured.
    const open2 = await open({ token: TOKEN });
    expect((await call(open2, '/rollouts')).status).toBe(200);
  });

  it('answers 429 with Retry-After past the rate of control requests', async () => {
    const w = await open({
      token: TOKEN,
      rateLimiter: new RateLimiter({ burst: 2, perSecond: 0.01, now: () => 0 }),
    });
    await seed(w, { queued: 1 });
    expect((await post(w, 'pause', {}, TOKEN)).status).toBe(200);
    expect((await post(w, 'pause', {}, TOKEN)).status).toBe(409);
    const limited = await post(w, 'resume', {}, TOKEN);
    expect(limited.status).toBe(429);
    expect(limited.json.error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('100');
    expect((await w.rollouts.get(ID))?.phase).toBe('paused');
    // Refused callers spend a bucket of their own: 401 twice, then 429.
    expect((await post(w, 'pause', {}, 'wrong-token-0123456789')).status).toBe(401);
    expect((await post(w, 'pause', {})).status).toBe(401);
    expect((await post(w, 'pause', {}, 'wrong-token-0123456789')).status).toBe(429);
    // Reads are not limited.
    expect((await call(w, '/rollouts')).status).toBe(200);
  });
});

describe('hostile input', () => {
  function raw(w: World, text: string): Promise<string> {
    const { hostname, port } = new URL(w.server.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => socket.write(text));
      let out = '';
      socket.on('data', (d: Buffer) => {
        out += d.toString('latin1');
      });
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
    });
  }

  it('GET // and malformed percent-encodings answer 4xx, and the server answers afterwards', async () => {
    const w = await open();
    await seed(w, { queued: 1 });
    const get = (target: string) =>
      raw(w, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
    expect(await get('//')).toMatch(/^HTTP\/1\.1 404 /);
    expect(await get('//rollouts')).toMatch(/^HTTP\/1\.1 404 /);
    expect(await get('/rollouts/%E0%A4%A')).toMatch(/^HTTP\/1\.1 400 /);
    expect(await get('/rollouts/%E0%A4%A/history')).toMatch(/^HTTP\/1\.1 400 /);
    const post = await raw(
      w,
      'POST /rollouts/%zz/pause HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}',
    );
    expect(post).toMatch(/^HTTP\/1\.1 400 /);
    expect((await call(w, '/rollouts')).status).toBe(200);
    expect((await w.rollouts.get(ID))?.phase).toBe('running');
  });

  it('a 1 MB body answers 413, declared or chunked, and nothing changes', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { queued: 1 });
    const big = JSON.stringify({ reason: 'x'.repeat(1024 * 1024) });
    const declared = await call(w, `/rollouts/${PATH_ID}/abort`, { method: 'POST', body: big, token: TOKEN });
    expect(declared.status).toBe(413);
    expect(declared.json.error).toEqual({
      code: 'payload_too_large',
      message: 'the body is larger than 16384 bytes',
    });
    const res = await request(`${w.server.url}/rollouts/${PATH_ID}/abort`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: Readable.from(
        (function* () {
          for (let i = 0; i < 64; i++) yield Buffer.alloc(16 * 1024, 0x20);
        })(),
      ),
    });
    expect(res.statusCode).toBe(413);
    await res.body.dump();
    expect((await w.rollouts.get(ID))?.phase).toBe('running');
    expect((await call(w, '/healthz')).status).toBe(200);
  });

  it('a body that is not JSON answers 400; another content type 415', async () => {
    const w = await open({ token: TOKEN });
    await seed(w, { queued: 1 });
    const notJson = await post(w, 'abort', '{"reason": ', TOKEN);
    expect(notJson.status).toBe(400);
    expect(notJson.json.error.code).toBe('invalid');
    expect(notJson.json.error.message).toMatch(/^the body is not JSON: /);
    for (const body of ['[]', '"x"', 'null', '42'])
      expect((await post(w, 'pause', body, TOKEN)).status, body).toBe(400);
    const bytes = await call(w, `/rollouts/${PATH_ID}/pause`, {
      method: 'POST',
      token: TOKEN,
      body: Buffer.from([0x7b, 0xff, 0x7d]).toString('latin1'),
      headers: { 'content-type': 'application/json' },
    });
    expect(bytes.status).toBe(400);
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await call(w, `/rollouts/${PATH_ID}/pause`, {
        method: 'POST',
        token: TOKEN,
        body: '{}',
        headers: { 'content-type': type },
      });
      expect(res.status, type).toBe(415);
      expect(res.json.error.code).toBe('unsupported_media_type');
    }
    // No content type at all: refused too (a browser could send that to another origin).
    const none = await call(w, `/rollouts/${PATH_ID}/pause`, { method: 'POST', token: TOKEN });
    expect(none.status).toBe(415);
    expect(
      (
        await call(w, `/rollouts/${PATH_ID}/pause`, {
          method: 'POST',
          token: TOKEN,
          body: '{}',
          headers: { 'content-type': 'application/json; charset=utf-8' },
        })
      ).status,
    ).toBe(200);
  });
});
