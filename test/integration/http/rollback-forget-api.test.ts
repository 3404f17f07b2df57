/**
 * The HTTP API's side of issue 20: `POST /rollouts/{id}/forget` is refused (409, why and what to
 * do) while a rollback request waits or the daemon's policies in force still select the build,
 * and `{"force": true}` forgets it; `GET /rollouts/{id}` carries what became of its rollbacks.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { useTestRedis } from '../../support/redis.js';
import {
  type ApiWorld,
  openRolloutApi,
  postAction,
  seedRollout,
  T0,
} from '../../support/rollout-api-world.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';
import { newRecord, seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();
const ID = 'linux-fleet@19.470-4';
const worlds: ApiWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function converged(): Promise<ApiWorld> {
  const w = await openRolloutApi(ctx.redis, ctx.prefix);
  worlds.push(w);
  await seedRollout(w, ID, { succeeded: 2, failed: 1 });
  expect(await w.rollouts.move({ id: ID, phase: 'running' }, 'converge', T0)).toBe('converged');
  return w;
}

describe('POST /rollouts/{id}/forget, guarded', () => {
  it('409 while a rollback request waits; {"force": true} forgets', async () => {
    const w = await converged();
    expect((await postAction(w, ID, 'rollback', { body: { all: true } })).status).toBe(200);
    const refused = await postAction(w, ID, 'forget');
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toMatch(/rollback request the daemon has not carried out yet/);
    const forced = await postAction(w, ID, 'forget', { body: { force: true } });
    expect(forced.status, JSON.stringify(forced.json)).toBe(200);
    expect(await w.rollouts.get(ID)).toBeUndefined();
  });

  it('409 while the policies in force still select the build; not once it is disabled', async () => {
    const w = await converged();
    w.deps.policies = () => [{ name: 'linux-fleet', enabled: true, target: 'latest' }];
    const refused = await postAction(w, ID, 'forget');
    expect(refused.status).toBe(409);
    expect(refused.json.error.message).toMatch(/still selects: the policy is enabled and selects 19\.470-4/);
    expect((await postAction(w, ID, 'forget', { body: { force: 'yes' } })).status).toBe(400);
    w.deps.policies = () => [{ name: 'linux-fleet', enabled: false, target: 'latest' }];
    expect((await postAction(w, ID, 'forget')).status).toBe(200);
  });
});

describe('GET /rollouts/{id}', () => {
  it('carries each rollback entry with its rollout’s phase, and the account', async () => {
    const w = await converged();
    const entry = {
      request: 'r1',
      policy: 'rollback-x',
      build: '19.400-5',
      collectors: 3,
      state: 'started' as const,
      at: T0,
      by: 'ops',
      reason: 'rollback by ops',
    };
    const source = await w.rollouts.get(ID);
    await w.rollouts.write(source as never, { patch: { rollbacks: [entry] } }, T0);
    // Its rollout: one back, one not alive; the third was on its previous build already.
    await w.rollouts.start({
      policy: 'rollback-x',
      target: '19.400-5',
      build: '19.400-5',
      maxInFlight: 3,
      settings: SETTINGS,
      now: T0,
      patch: { rollbackOf: ID, unmatched: [{ id: 3, finding: 'on_build' }] },
    });
    for (const [id, state] of [
      [1, 'succeeded'],
      [2, 'not_alive'],
    ] as const)
      await seedCollector(
        { store: w.store, rolloutId: 'rollback-x@19.400-5', settings: SETTINGS, now: T0 },
        newRecord({ id, name: `c-${id}`, collectorVersion: '19.470-4' }, '19.400-5', T0),
        state,
      );
    await w.rollouts.move({ id: 'rollback-x@19.400-5', phase: 'running' }, 'converge', T0);
    const res = await request(`${w.server.url}/rollouts/${encodeURIComponent(ID)}`);
    expect(res.statusCode).toBe(200);
    // biome-ignore lint/suspicious/noExplicitAny: the fields this test reads
    const body = (await res.body.json()) as any;
    expect(body.rollbacks).toEqual([{ ...entry, phase: 'converged' }]);
    expect(body.rollbackAccounts).toEqual([
      expect.objectContaining({ requested: 3, back: 1, notAlive: 1, onBuild: 1, failed: 0, underWay: 0 }),
    ]);
    // The rollback's rollout forgotten (or expired): its source keeps what it came to.
    expect((await postAction(w, 'rollback-x@19.400-5', 'forget')).status).toBe(200);
    const later = (await (
      await request(`${w.server.url}/rollouts/${encodeURIComponent(ID)}`)
    ).body.json()) as {
      rollbackAccounts: unknown[];
    };
    expect(later.rollbackAccounts).toEqual([
      expect.objectContaining({
        requested: 3,
        back: 1,
        notAlive: 1,
        onBuild: 1,
        unknown: 0,
        rollouts: [expect.objectContaining({ phase: 'gone' })],
      }),
    ]);
  });
});
