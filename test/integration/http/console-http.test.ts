/**
 * What the daemon's HTTP server does for the web console (src/http/serve-console.ts,
 * same-origin.ts, get-whoami.ts): `/` is the console's page to a browser and the JSON index to
 * anyone else; its files come gzipped with an ETag and a Content-Security-Policy of its own
 * origin only; `GET /whoami` names the caller; a control request from the daemon's own page (an
 * Origin equal to Host) passes the Origin rule, and one from any other page does not, nor one
 * whose name was rebound to loopback (DNS rebinding). Needs `npm run build` (dist/console).
 */
import { gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestRedis } from '../../support/redis.js';
import { type ApiWorld, openRolloutApi, seedRollout } from '../../support/rollout-api-world.js';

const ctx = useTestRedis();
const ID = 'linux-fleet@19.470-4';
const TOKEN = 'tok-4c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f';
const worlds: ApiWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function open(options: Parameters<typeof openRolloutApi>[2] = {}): Promise<ApiWorld> {
  const w = await openRolloutApi(ctx.redis, ctx.prefix, options);
  worlds.push(w);
  return w;
}

async function get(w: ApiWorld, path: string, headers: Record<string, string> = {}) {
  const res = await request(`${w.server.url}${path}`, { headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

const pause = async (w: ApiWorld, headers: Record<string, string>) => {
  const res = await request(`${w.server.url}/rollouts/${encodeURIComponent(ID)}/pause`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: '{}',
  });
  return { status: res.statusCode, json: (await res.body.json()) as { error?: { message: string } } };
};

describe('the console over HTTP', () => {
  it('answers / with the page to a browser and the index of endpoints to anyone else', async () => {
    const w = await open();
    const page = await get(w, '/', { accept: 'text/html,application/xhtml+xml' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'self'/);
    expect(page.body.toString()).toContain('<script type="module" src="/console/app.js">');
    const index = await get(w, '/', { accept: 'application/json' });
    expect(JSON.parse(index.body.toString()).endpoints).toContain('/whoami');
    expect(JSON.parse((await get(w, '/')).body.toString()).endpoints).toContain('/status');
  });

  it('sends the script gzipped with an ETag, and 304 when it has not changed', async () => {
    const w = await open();
    const plain = await get(w, '/console/app.js');
    const zipped = await get(w, '/console/app.js', { 'accept-encoding': 'gzip' });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(zipped.body).equals(plain.body)).toBe(true);
    expect(zipped.body.length).toBeLessThan(300 * 1024);
    const etag = String(plain.headers.etag);
    expect((await get(w, '/console/app.js', { 'if-none-match': etag })).status).toBe(304);
    expect((await get(w, '/console/nothing.js')).status).toBe(404);
    expect((await get(w, '/console/../package.json')).status).toBe(404);
  });

  it('tags /status and a rollout with an ETag: 304 while nothing changed, the new state once it did', async () => {
    const w = await open();
    await seedRollout(w, ID, { queued: 2 });
    for (const path of ['/status', `/rollouts/${encodeURIComponent(ID)}`]) {
      const first = await get(w, path);
      const etag = String(first.headers.etag);
      expect(etag).toMatch(/^"[\w-]{27}"$/);
      const same = await get(w, path, { 'if-none-match': etag });
      expect(same.status, path).toBe(304);
      expect(same.body.length).toBe(0);
    }
    const before = String((await get(w, '/status')).headers.etag);
    const paused = await pause(w, {});
    expect(paused.status).toBe(200);
    const after = await get(w, '/status', { 'if-none-match': before });
    expect(after.status).toBe(200);
    expect(JSON.parse(after.body.toString()).rollouts[0].phase).toBe('paused');
  });

  it('names the caller at /whoami: a loopback caller is an admin without a token, a reader with one', async () => {
    const open1 = await open();
    const me = JSON.parse((await get(open1, '/whoami')).body.toString());
    expect(me).toMatchObject({ name: 'http:127.0.0.1', role: 'admin', via: 'loopback', access: false });
    const tokened = await open({ token: TOKEN });
    const reader = JSON.parse((await get(tokened, '/whoami')).body.toString());
    expect(reader).toMatchObject({ name: null, role: null, grants: [] });
    expect(reader.reason).toMatch(/^this endpoint needs the header Authorization/);
    const holder = JSON.parse(
      (await get(tokened, '/whoami', { authorization: `Bearer ${TOKEN}` })).body.toString(),
    );
    expect(holder).toMatchObject({ name: 'admin', role: 'admin', via: 'token' });
    expect(JSON.stringify([me, reader, holder])).not.toContain(TOKEN);
    const closed = await open({ token: TOKEN, authReads: true });
    expect((await get(closed, '/whoami')).status).toBe(401);
  });

  it('lets the daemon’s own page act, and no other page, nor a name rebound to loopback', async () => {
    const w = await open();
    await seedRollout(w, ID, { queued: 2 });
    const host = new URL(w.server.url).host;
    const foreign = await pause(w, { origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    expect(foreign.json.error?.message).toMatch(
      /^control requests from a web page \(Origin http:\/\/evil\.example\) are refused/,
    );
    expect((await pause(w, { origin: `http://${host}`, 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await pause(w, { origin: `https://${host}.evil.example` })).status).toBe(403);
    // DNS rebinding: the page's own name, now pointing at 127.0.0.1, matches Origin and Host alike.
    const rebound = await pause(w, { origin: 'http://evil.example:9464', host: 'evil.example:9464' });
    expect(rebound.status).toBe(403);
    expect((await w.rollouts.get(ID))?.phase).toBe('running');
    const own = await pause(w, { origin: `http://${host}`, 'sec-fetch-site': 'same-origin' });
    expect(own.status).toBe(200);
    expect((await w.rollouts.get(ID))?.phase).toBe('paused');
  });
});
