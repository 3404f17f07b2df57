/**
 * The control endpoints' rate limit against callers that cannot act (issue 19, part 3): a page in
 * a browser on the operator's machine, or anything else on loopback without the token, must not
 * empty the bucket of the callers that hold the token (nor, without a token configured, of the
 * operator's own loopback requests). Over HTTP, on the real Redis, with the default rate.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../../src/http/rate-limiter.js';
import { useTestRedis } from '../../support/redis.js';
import { type ApiWorld, openRolloutApi, postAction, seedRollout } from '../../support/rollout-api-world.js';

const ctx = useTestRedis();
const TOKEN = 'tok-6e3f4a5b6c7d8e9f0a1b2c3d4e5f6071';
const ID = 'linux-fleet@19.470-4';

const worlds: ApiWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function open(token?: string, rateLimiter?: RateLimiter): Promise<ApiWorld> {
  const w = await openRolloutApi(ctx.redis, ctx.prefix, {
    ...(token === undefined ? {} : { token }),
    ...(rateLimiter ? { rateLimiter } : {}),
  });
  worlds.push(w);
  await seedRollout(w, ID, { queued: 2 });
  return w;
}

describe('the rate limit of control requests', () => {
  it('callers without the token (or with a wrong one) are limited apart: the token holder still acts', async () => {
    const w = await open(TOKEN);
    const refused = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        postAction(w, ID, 'pause', i % 2 ? {} : { token: 'wrong-token-0123456789abcdef' }),
      ),
    );
    const statuses = new Set(refused.map((r) => r.status));
    expect([...statuses].sort()).toEqual([401, 429]);
    // The bucket of the callers who hold the token is untouched.
    const paused = await postAction(w, ID, 'pause', { token: TOKEN });
    expect(paused.status, JSON.stringify(paused.json)).toBe(200);
    expect((await postAction(w, ID, 'resume', { token: TOKEN })).status).toBe(200);
  });

  it('a token holder past its own rate gets 429; the callers without it are not let through by that', async () => {
    const w = await open(TOKEN, new RateLimiter({ burst: 2, perSecond: 0.01, now: () => 0 }));
    expect((await postAction(w, ID, 'pause', { token: TOKEN })).status).toBe(200);
    expect((await postAction(w, ID, 'resume', { token: TOKEN })).status).toBe(200);
    const limited = await postAction(w, ID, 'pause', { token: TOKEN });
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBe('100');
    expect((await postAction(w, ID, 'pause')).status).toBe(401);
  });

  it('no token configured: a page in a browser posting to loopback cannot empty the operator’s bucket', async () => {
    const w = await open();
    // What a page can send without asking first: a "simple" POST, text/plain, with its Origin.
    const page = await Promise.all(
      Array.from({ length: 40 }, () =>
        postAction(w, ID, 'pause', {
          headers: { 'content-type': 'text/plain', origin: 'https://evil.example' },
        }),
      ),
    );
    for (const r of page) expect([403, 415]).toContain(r.status);
    expect((await w.rollouts.get(ID))?.phase).toBe('running');
    const paused = await postAction(w, ID, 'pause');
    expect(paused.status, JSON.stringify(paused.json)).toBe(200);
  });
});
