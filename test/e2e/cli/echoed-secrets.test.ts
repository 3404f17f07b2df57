/**
 * Secrets the product sends, echoed back by whatever answers (issue 19, part 3, C and D), through
 * the built CLI: `run` against the simulator behind a proxy that echoes the API's Basic
 * credentials in its error bodies, an analysis gate whose Prometheus answers 401 and 403 echoing
 * the gate's `Authorization` header, and a webhook receiver (its URL with `user:password@`, from
 * the environment) that answers 401 echoing the credentials it was sent. Afterwards no secret may
 * be found in `run`'s log, `status` (table and JSON), `/status`, `history`, `report`, the webhook
 * bodies or anything under the deployment's prefix in Redis. The webhook's credentials arrive as
 * HTTP basic auth; written into the settings file's `url:` they stop `run` (exit 78, naming the
 * file, line and field).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';
import { reply, startStubServer, stopStubServers } from '../../support/stub-server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const ACCESS_ID = 'gate';
const ACCESS_KEY = 'gate-key-7Qx2Vb9LmP';
const PROM_TOKEN = 'prom-token-Zr81Kq5TsW';
const HOOK_USER = 'hook';
const HOOK_PASSWORD = 'hook-pass-N4c8Jd2YfH';
const b64 = (text: string) => Buffer.from(text).toString('base64');
/** Every form in which a secret could come back. */
const SECRETS = [
  ACCESS_KEY,
  b64(`${ACCESS_ID}:${ACCESS_KEY}`),
  PROM_TOKEN,
  HOOK_PASSWORD,
  b64(`${HOOK_USER}:${HOOK_PASSWORD}`),
];

let harness: Harness | undefined;
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await receiver?.close();
  receiver = undefined;
  await stopStubServers();
});

function fleet(): FleetFileInput {
  return {
    builds: ['19.400-5', '19.470-4'],
    users: [{ accessId: ACCESS_ID, accessKey: ACCESS_KEY }],
    collectors: Array.from({ length: 4 }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 120,
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

/** Runs a command of the built CLI to its end. */
async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

/** Every value under the prefix, whatever its type, as text. */
async function redisDump(h: Harness, prefix: string): Promise<string> {
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await h.redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    for (const key of keys) {
      const type = await h.redis.type(key);
      if (type === 'string') parts.push((await h.redis.get(key)) ?? '');
      else if (type === 'hash') parts.push(JSON.stringify(await h.redis.hgetall(key)));
      else if (type === 'list') parts.push(...(await h.redis.lrange(key, 0, -1)));
      else if (type === 'set') parts.push(...(await h.redis.smembers(key)));
      else if (type === 'zset') parts.push(...(await h.redis.zrange(key, '0', '-1')));
      else if (type === 'stream') parts.push(JSON.stringify(await h.redis.xrange(key, '-', '+')));
    }
    cursor = next;
  } while (cursor !== '0');
  return parts.join('\n');
}

function leaks(where: string, text: string): string[] {
  return SECRETS.filter((s) => text.includes(s)).map((s) => `${where} holds ${s}`);
}

describe('secrets echoed back', () => {
  it('an echo of the API key, the gate’s token or the webhook’s password is kept nowhere', async () => {
    let simUrl = '';
    const seen = { targets: 0, list: 0, create: 0, failedTask: false };
    // The vendor's answers pass through; its first build list, first listing page and first
    // create are refused with a body that echoes the credentials sent.
    const vendor = await startStubServer(async (req, res) => {
      const auth = String(req.headers.authorization ?? '');
      const echo = `${auth} (${Buffer.from(auth.replace(/^Basic /, ''), 'base64').toString()})`;
      const endpoint = req.url.includes('/targets')
        ? 'targets'
        : req.url.includes('/upgrades/collectors')
          ? 'list'
          : req.method === 'POST'
            ? 'create'
            : undefined;
      if (endpoint) seen[endpoint]++;
      if (endpoint && seen[endpoint] === 1) {
        if (endpoint === 'create')
          return reply(res, 400, {
            status: 400,
            id: 'ECH0E-ECH0E-ECH0E',
            code: 'collector.not.alive',
            message: `not alive; you sent ${echo}`,
          });
        return reply(res, 401, {
          status: 401,
          id: 'ECH0E-ECH0E-ECH0E',
          code: 'unauthorized',
          message: `bad credentials ${echo}`,
        });
      }
      const headers = { ...req.headers };
      delete headers.host;
      delete headers.connection;
      const answer = await request(`${simUrl}${req.url}`, {
        method: req.method as 'GET',
        headers: headers as Record<string, string>,
        ...(req.body ? { body: req.body } : {}),
      });
      let text = await answer.body.text();
      // The first task that ends is told failed, with a message that echoes the credentials.
      if (/\/upgrades\/\d+$/.test(req.url) && !seen.failedTask) {
        const body = JSON.parse(text) as { upgrade: { status: number; message: string } };
        if (body.upgrade.status === 2) {
          seen.failedTask = true;
          body.upgrade.status = 3;
          body.upgrade.message = `Upgrade failed: the host refused ${echo}`;
          text = JSON.stringify(body);
        }
      }
      const type = answer.headers['content-type'];
      res.writeHead(answer.statusCode, typeof type === 'string' ? { 'content-type': type } : {});
      res.end(text);
    });
    // Prometheus (or a proxy in front of it) refuses the gate's token, echoing it: 401 as JSON,
    // then 403 as HTML.
    const prometheus = await startStubServer((req, res, n) => {
      const auth = String(req.headers.authorization ?? '');
      if (n % 2 === 1)
        return reply(res, 401, {
          status: 'error',
          errorType: 'unauthorized',
          error: `token ${auth} is refused`,
        });
      return reply(res, 403, `<html><body>Forbidden: ${auth} may not query</body></html>`);
    });
    receiver = await startWebhookReceiver();
    receiver.answer = (r, n) => {
      if (n > 2) return 200;
      return (res) => {
        res.writeHead(401, { 'content-type': 'text/plain' });
        res.end(
          `who is ${r.headers.authorization} (${Buffer.from(String(r.headers.authorization).replace(/^Basic /, ''), 'base64')})?`,
        );
      };
    };
    const hookUrl = new URL(`${receiver.url}/hook`);
    hookUrl.username = HOOK_USER;
    hookUrl.password = HOOK_PASSWORD;

    harness = await startHarness({
      timeScale: 60,
      fleet: fleet(),
      policy: {
        name: 'echoed',
        maxInFlight: 2,
        verify: false,
        poll: { initial: '30s', max: '1m' },
        waves: [
          {
            size: 2,
            analysis: [
              {
                name: 'errors',
                prometheus: prometheus.url,
                query: 'vector(0)',
                condition: { below: 1 },
                interval: '1m',
                count: 3,
                inconclusiveLimit: 1,
                headers: [{ name: 'Authorization', valueEnv: 'PROM_AUTH' }],
              },
            ],
          },
          '100%',
        ],
      },
      env: { PROM_AUTH: `Bearer ${PROM_TOKEN}`, HOOK_URL: hookUrl.toString(), LOG_LEVEL: 'info' },
    });
    const h = harness;
    simUrl = h.sim.url;
    h.env.SUMOLOGIC_BASE_URL = vendor.baseUrl;
    const settings = join(h.policyFile, '..', 'settings.yaml');
    writeFileSync(
      settings,
      stringify({
        webhooks: [{ name: 'audit', urlEnv: 'HOOK_URL', retry: { initial: '50ms', max: '200ms' } }],
      }),
    );
    const port = await freeLoopbackPort();
    const run = h.spawnCli([
      'run',
      '--policy',
      h.policyFile,
      '--config',
      settings,
      '--listen',
      `127.0.0.1:${port}`,
    ]);
    const status = await h.waitFor(
      (s) => s.rollouts[0]?.phase === 'paused' && s.rollouts[0]?.wave.waitingFor === 'analysis',
      60_000,
    );
    const id = status.rollouts[0]?.id as string;
    await receiver.waitForRequests(6, 30_000);
    const delivered = async () => receiver?.delivered().length ?? 0;
    const deadline = Date.now() + 20_000;
    while ((await delivered()) < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(seen.failedTask, 'a task was told failed').toBe(true);
    const httpStatus = await (await request(`http://127.0.0.1:${port}/status`)).body.text();

    const texts: [string, string][] = [
      ['status', (await cli(h, ['status', '--wide'])).out],
      ['status --json', (await cli(h, ['status', '--json'])).out],
      ['/status', httpStatus],
      ['history', (await cli(h, ['history', id, '--json'])).out],
      ['report', (await cli(h, ['report', id, '--format', 'json'])).out],
      ['webhook bodies', receiver.requests.map((r) => r.body).join('\n')],
      ['Redis', await redisDump(h, h.env.FLEET_UPGRADE_KEY_PREFIX as string)],
    ];
    run.kill('SIGTERM');
    await exitOf(run, 20_000);
    texts.push(['the log of run', run.output()]);
    // The echoes did come back, and were kept in their scrubbed form.
    expect(texts.find(([w]) => w === 'history')?.[1]).toMatch(/is refused|Forbidden/);
    expect(texts.find(([w]) => w === 'report')?.[1]).toMatch(/the host refused/);
    expect(run.output()).toMatch(/answered 401: who is \[redacted\].*webhook delivery failed/);
    expect(texts.flatMap(([where, text]) => leaks(where, text))).toEqual([]);

    // D: the webhook's credentials went as HTTP basic auth, never in the URL.
    for (const r of receiver.requests) {
      expect(r.headers.authorization).toBe(`Basic ${b64(`${HOOK_USER}:${HOOK_PASSWORD}`)}`);
      expect(r.path).toBe('/hook');
    }
  }, 120_000);

  it('a webhook url: with credentials written in the settings file stops run, naming the file, line and field', async () => {
    harness = await startHarness({ timeScale: 60, fleet: fleet(), policy: { name: 'inline' } });
    const h = harness;
    const settings = join(h.policyFile, '..', 'settings.yaml');
    writeFileSync(
      settings,
      stringify({
        webhooks: [{ name: 'audit', url: `http://${HOOK_USER}:${HOOK_PASSWORD}@127.0.0.1:9/hook` }],
      }),
    );
    const run = await cli(h, ['run', '--policy', h.policyFile, '--config', settings]);
    expect(run.code).toBe(78);
    expect(run.out).toContain(`${settings}:3:5: webhooks[0].url: credentials in the URL are refused here`);
    expect(run.out).not.toContain(HOOK_PASSWORD);
  }, 60_000);
});
