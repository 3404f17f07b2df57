/**
 * The rollout API across organizations, over the real Redis with a rollout of two organizations
 * seeded by the real stores: the reads carry each organization's part (`byOrg`) and every
 * organization's problem (`orgProblems`); `pause`, `resume`, `retry` and `rollback` take `org`
 * (that organization's part only), refuse one the rollout does not cover with a 400 naming those
 * it covers, refuse a malformed `org` with a 400 naming the field; `org` is no field of the other
 * actions; the token rule holds for scoped actions as for the others.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { type CollectorState, OrgHealth } from '../../../src/rollout/index.js';
import { useTestRedis } from '../../support/redis.js';
import { type ApiWorld, openRolloutApi } from '../../support/rollout-api-world.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';
import { newRecord, seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();

const T0 = Date.UTC(2026, 10, 25, 10, 0, 0);
const ID = 'spread@19.470-4';
const PATH_ID = encodeURIComponent(ID);
const TOKEN = 'tok-0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d';

const worlds: ApiWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function open(): Promise<ApiWorld> {
  const state = await openRolloutApi(ctx.redis, ctx.prefix, { token: TOKEN, at: T0 });
  worlds.push(state);
  // us: 2 failed, 1 queued; emea: 1 failed, 2 queued (ids repeat across the two).
  await state.rollouts.start({
    policy: 'spread',
    target: 'latest',
    build: '19.470-4',
    maxInFlight: 50,
    settings: SETTINGS,
    now: T0,
    patch: { orgs: ['us', 'emea'] },
  });
  const seeds: [string, number, CollectorState][] = [
    ['us', 1, 'failed'],
    ['us', 2, 'failed'],
    ['us', 3, 'queued'],
    ['emea', 1, 'failed'],
    ['emea', 2, 'queued'],
    ['emea', 3, 'queued'],
  ];
  for (const [org, id, s] of seeds)
    await seedCollector(
      { store: state.store, rolloutId: ID, settings: SETTINGS, now: T0 },
      newRecord({ id, name: `${org}-${id}`, collectorVersion: '19.400-5' }, '19.470-4', T0, undefined, org),
      s,
    );
  return state;
}

type World = ApiWorld;

async function call(w: World, path: string, body?: unknown, token: string | null = TOKEN) {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await request(`${w.server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  // biome-ignore lint/suspicious/noExplicitAny: each test reads the fields it expects
  return { status: res.statusCode, json: (await res.body.json()) as any };
}

const post = (w: World, action: string, body: unknown, token: string | null = TOKEN) =>
  call(w, `/rollouts/${PATH_ID}/${action}`, body, token);

describe('reads across organizations', () => {
  it('GET /rollouts/{id} and GET /rollouts carry each organization’s part; /rollouts every problem', async () => {
    const w = await open();
    await new OrgHealth(ctx.redis, w.keys).report(
      'emea',
      { kind: 'credentials', reason: 'credentials refused (401)' },
      T0 + 60_000,
    );
    const one = await call(w, `/rollouts/${PATH_ID}`);
    expect(one.status).toBe(200);
    expect(one.json.total).toBe(6);
    expect(one.json.byOrg).toEqual([
      expect.objectContaining({
        org: 'us',
        build: '19.470-4',
        total: 3,
        done: 2,
        counts: { failed: 2, queued: 1 },
      }),
      expect.objectContaining({
        org: 'emea',
        total: 3,
        done: 1,
        waiting: 'org emea: credentials refused (401) since 2026-11-25 10:01 UTC',
        problem: 'credentials',
      }),
    ]);
    const all = await call(w, '/rollouts');
    expect(all.json.rollouts[0].byOrg.map((p: { org: string }) => p.org)).toEqual(['us', 'emea']);
    expect(all.json.orgProblems).toEqual([
      expect.objectContaining({ org: 'emea', kind: 'credentials', since: T0 + 60_000 }),
    ]);
    const status = await call(w, '/status');
    expect(status.json.orgProblems).toHaveLength(1);
    expect(status.json.rollouts[0].byOrg).toHaveLength(2);
  });
});

describe('control endpoints scoped to an organization', () => {
  it('pause and resume take org: that part only, recorded with the actor and the org', async () => {
    const w = await open();
    const paused = await post(w, 'pause', { org: 'emea' });
    expect(paused.status).toBe(200);
    expect(paused.json.message).toMatch(/org emea paused by admin: .*the other organizations go on/);
    expect(paused.json.event).toMatchObject({ type: 'rollout.paused', detail: { org: 'emea' } });
    const rollout = await w.rollouts.get(ID);
    expect(rollout?.phase).toBe('running');
    expect(rollout?.pausedOrgs).toEqual([{ org: 'emea', by: 'admin', at: T0 }]);
    // Paused already: a conflict, as for the whole rollout.
    const again = await post(w, 'pause', { org: 'emea' });
    expect([again.status, again.json.error.code]).toEqual([409, 'conflict']);
    const notPaused = await post(w, 'resume', { org: 'us' });
    expect([notPaused.status, notPaused.json.error.message]).toEqual([
      409,
      `rollout ${ID} is running: org us is not paused`,
    ]);
    const resumed = await post(w, 'resume', { org: 'emea' });
    expect(resumed.status).toBe(200);
    expect(resumed.json.event.detail).toEqual({ released: 'org', org: 'emea' });
    expect((await w.rollouts.get(ID))?.pausedOrgs).toEqual([]);
  });

  it('retry and rollback take org: only that organization’s Collectors', async () => {
    const w = await open();
    const retried = await post(w, 'retry', { only: ['failed'], org: 'us' });
    expect(retried.status).toBe(200);
    expect(retried.json.message).toBe(`${ID}: 2 Collectors of org us get one new attempt (failed)`);
    expect(retried.json.event.detail).toMatchObject({ retried: 2, org: 'us' });
    expect((await w.store.orgCounts(ID)).get('emea')).toEqual({ failed: 1, queued: 2 });
    const rollback = await post(w, 'rollback', { only: ['failed'], org: 'emea' });
    expect(rollback.status).toBe(200);
    expect(rollback.json.message).toMatch(/rollback of 1 Collector of org emea \(failed\)/);
    expect(rollback.json.event.detail).toMatchObject({ collectors: 1, org: 'emea' });
    // us has no failed Collector left: nothing to roll back there.
    const none = await post(w, 'rollback', { only: ['failed'], org: 'us' });
    expect([none.status, none.json.error.code]).toEqual([409, 'conflict']);
  });

  it('an organization the rollout does not cover is a 400 naming those it covers', async () => {
    const w = await open();
    for (const [action, body] of [
      ['pause', { org: 'apac' }],
      ['resume', { org: 'apac' }],
      ['retry', { only: ['failed'], org: 'apac' }],
      ['rollback', { org: 'apac' }],
    ] as const) {
      const res = await post(w, action, body);
      expect(res.status, action).toBe(400);
      expect(res.json.error.code).toBe('invalid');
      expect(res.json.error.message).toMatch(/no organization 'apac' \((it covers )?us, emea\)/);
    }
    expect(await w.events.history(ID)).toEqual([]);
  });

  it('a malformed org is a 400 naming the field; other actions take no org', async () => {
    const w = await open();
    for (const org of ['', 5, 'a b', 'x'.repeat(65), 'a\u0007b', null]) {
      const res = await post(w, 'pause', { org });
      expect(res.status, JSON.stringify(org)).toBe(400);
      expect(res.json.error.message).toMatch(/^org: /);
    }
    for (const action of ['abort', 'promote', 'forget']) {
      const res = await post(w, action, { org: 'us' });
      expect(res.status, action).toBe(400);
      expect(res.json.error.message).toMatch(/org/);
    }
    expect((await w.rollouts.get(ID))?.phase).toBe('running');
  });

  it('the token rule holds: without it, nothing is done', async () => {
    const w = await open();
    for (const token of [null, 'wrong-token-0123456789abcdef']) {
      const res = await post(w, 'pause', { org: 'us' }, token);
      expect(res.status).toBe(401);
    }
    expect((await w.rollouts.get(ID))?.pausedOrgs).toBeUndefined();
    expect(w.log.text()).not.toContain(TOKEN);
  });
});
