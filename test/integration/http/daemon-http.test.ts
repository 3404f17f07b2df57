/**
 * The rollout API as the daemon serves it (src/cli/boot/start-daemon.ts): `run` in this process and
 * as the built CLI (real Redis, the simulator over HTTP) answers the read and control endpoints,
 * a pause over HTTP holds the rollout and a resume lets it converge, a wrong token changes
 * nothing, `--auth-reads` closes the reads, `GET //` is answered and the process lives on; a
 * `worker` serves only its probes. The spawned daemon writes the token in no log line.
 */
import { connect } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { rehearsalConfig } from '../../../src/cli/boot/daemon-config.js';
import { type Daemon, startDaemon } from '../../../src/cli/boot/start-daemon.js';
import { ControlToken } from '../../../src/http/authorize-request.js';
import { createLogger } from '../../../src/lib/logger.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { converged, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const TOKEN = 'daemon-token-7f3e9a1c5b2d4e6f8a0b';
let harness: Harness | undefined;
const daemons: Daemon[] = [];

afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  await harness?.close();
  harness = undefined;
});

function fleet(count: number): FleetFileInput {
  return {
    builds: ['19.400-5', '19.470-4'],
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 120,
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

async function call(base: string, path: string, options: { method?: 'GET' | 'POST'; token?: string } = {}) {
  const method = options.method ?? 'GET';
  const res = await request(`${base}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
    },
    ...(method === 'POST' ? { body: '{}' } : {}),
  });
  const text = await res.body.text();
  const json = String(res.headers['content-type']).startsWith('application/json')
    ? JSON.parse(text)
    : undefined;
  return { status: res.statusCode, json, text };
}

/** `GET //` on a raw connection: the status line's code. */
function getDoubleSlash(base: string): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write('GET // HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
    );
    let out = '';
    socket.on('data', (d: Buffer) => {
      out += d.toString('latin1');
    });
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(out)?.[1] ?? 0)));
    socket.on('error', reject);
  });
}

describe('the daemon’s rollout API', () => {
  it('run in process: pause over HTTP holds the rollout, a wrong token changes nothing, resume lets it converge', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(12),
      policy: { name: 'steered', maxInFlight: 2, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    const daemon = await h.startRun({ controlToken: new ControlToken(TOKEN) });
    const base = daemon.http?.url as string;
    await h.waitFor((s) => (s.rollouts[0]?.counts.succeeded ?? 0) >= 2, 30_000);
    const list = await call(base, '/rollouts');
    expect(list.status).toBe(200);
    const id = list.json.rollouts[0].id as string;
    const path = `/rollouts/${encodeURIComponent(id)}`;

    expect((await call(base, `${path}/pause`, { method: 'POST' })).status).toBe(401);
    expect((await call(base, `${path}/pause`, { method: 'POST', token: `${TOKEN}x` })).status).toBe(401);
    expect(await h.state.events.history(id)).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ source: 'operator' })]),
    );
    const paused = await call(base, `${path}/pause`, { method: 'POST', token: TOKEN });
    expect(paused.status).toBe(200);
    expect(paused.json.event).toMatchObject({ type: 'rollout.paused', actor: 'admin' });
    await h.waitFor((s) => s.rollouts[0]?.inflight === 0, 30_000);
    const created = (await h.simStats()).tasksCreated;
    await new Promise((r) => setTimeout(r, 600)); // 3 simulated minutes
    expect((await h.simStats()).tasksCreated).toBe(created);
    // Without access:, the token's holder is the admin named admin (issue #28): in status, the
    // audit trail and the webhooks' outbox as in the history.
    expect((await call(base, path)).json).toMatchObject({ phase: 'paused', pausedBy: 'admin' });
    const audit = (await call(base, '/audit?format=json', { token: TOKEN })).text;
    const records = audit
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { who: string; what: string });
    expect(records.filter((r) => r.what === 'pause').map((r) => r.who)).toEqual([
      'unknown',
      'unknown',
      'admin',
    ]);
    const outbox = await h.redis.xrange(h.state.keys.outbox, '-', '+');
    const told = outbox
      .map(([, f]) => JSON.parse(f[f.indexOf('event') + 1] as string) as { type: string; actor?: string })
      .filter((e) => e.type === 'rollout.paused');
    expect(told.map((e) => e.actor)).toEqual(['admin']);

    expect(await getDoubleSlash(base)).toBe(404);
    expect((await call(base, '/healthz')).status).toBe(200);

    expect((await call(base, `${path}/resume`, { method: 'POST', token: TOKEN })).status).toBe(200);
    await h.waitFor(converged, 60_000);
    const events = (await call(base, `${path}/history`)).json.events as { type: string; actor?: string }[];
    expect(events.filter((e) => e.actor === 'admin').map((e) => e.type)).toEqual([
      'rollout.paused',
      'rollout.resumed',
    ]);
  }, 120_000);

  it('a worker serves only its probes, and survives GET //', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(1),
      policy: { name: 'idle', maxInFlight: 1 },
    });
    const h = harness;
    const worker = await startDaemon({
      config: rehearsalConfig({
        redisUrl: h.env.REDIS_URL,
        keyPrefix: h.env.FLEET_UPGRADE_KEY_PREFIX as string,
        dataDir: h.env.FLEET_UPGRADE_DATA_DIR as string,
        timeScale: 300,
        api: { baseUrl: h.sim.baseUrl, accessId: 'ops', accessKey: 'ops-secret' },
        controlToken: new ControlToken(TOKEN),
      }),
      role: 'worker',
      logger: createLogger({ level: 'warn', name: 'test-worker' }),
    });
    daemons.push(worker);
    const base = worker.http?.url as string;
    expect(await getDoubleSlash(base)).toBe(404);
    for (const path of ['/status', '/rollouts', '/rollouts/a@1/pause'])
      expect((await call(base, path, { token: TOKEN })).status, path).toBe(404);
    expect((await call(base, '/healthz')).status).toBe(200);
    expect((await call(base, '/metrics')).status).toBe(200);
  }, 60_000);

  it('the built CLI: run with FLEET_UPGRADE_CONTROL_TOKEN and --auth-reads; the token in no log line', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(4),
      policy: { name: 'cli', maxInFlight: 1, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    h.env.FLEET_UPGRADE_CONTROL_TOKEN = TOKEN;
    h.env.LOG_LEVEL = 'debug';
    const child = h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0', '--auth-reads']);
    let base: string | undefined;
    const deadline = Date.now() + 30_000;
    while (!base && Date.now() < deadline) {
      const line = child
        .output()
        .split('\n')
        .find((l) => l.includes('"http listening"'));
      if (line) base = (JSON.parse(line) as { url: string }).url;
      else await new Promise((r) => setTimeout(r, 100));
    }
    expect(base, child.output()).toBeDefined();
    const url = base as string;
    const listening = child
      .output()
      .split('\n')
      .find((l) => l.includes('"http listening"')) as string;
    expect(JSON.parse(listening)).toMatchObject({ control: 'bearer token', authReads: true });

    expect((await call(url, '/rollouts')).status).toBe(401);
    expect((await call(url, '/status')).status).toBe(401);
    expect((await call(url, '/healthz')).status).toBe(200);
    await h.waitFor((s) => s.rollouts.length > 0, 30_000);
    const list = await call(url, '/rollouts', { token: TOKEN });
    expect(list.status).toBe(200);
    const id = list.json.rollouts[0].id as string;
    expect(await getDoubleSlash(url)).toBe(404);
    const wrong = await call(url, `/rollouts/${encodeURIComponent(id)}/abort`, {
      method: 'POST',
      token: 'not-the-token-000000',
    });
    expect(wrong.status).toBe(401);
    const aborted = await call(url, `/rollouts/${encodeURIComponent(id)}/abort`, {
      method: 'POST',
      token: TOKEN,
    });
    expect(aborted.status, JSON.stringify(aborted.json)).toBe(200);
    expect((await call(url, `/rollouts/${encodeURIComponent(id)}`, { token: TOKEN })).json.phase).toBe(
      'aborted',
    );
    expect(child.exitCode).toBeNull();
    child.kill('SIGTERM');
    expect(await exitOf(child, 20_000)).toBe(0);
    const out = child.output();
    expect(out).toContain('"control action"');
    expect(out).toContain('"http request refused"');
    expect(out).not.toContain(TOKEN);
    expect(out).not.toContain('not-the-token');
  }, 120_000);
});
