/**
 * Control requests that race over HTTP, on the real Redis (issue 19, part 3, A and B): several
 * `resume`s of an aborted rollout release its policy once (one 200 and one `rollout.resumed`, the
 * others 409); an abort and resumes sent together are recorded in causal order (the abort's event
 * before any release); and `forget` racing `resume` (or any other action) leaves no key of the
 * rollout behind, found by scanning Redis.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Redis } from '../../../src/lib/redis/create-redis.js';
import { deleteKeys, useTestRedis } from '../../support/redis.js';
import { type ApiWorld, openRolloutApi, postAction, seedRollout } from '../../support/rollout-api-world.js';

const ctx = useTestRedis();
const TOKEN = 'tok-5d2e3f4a5b6c7d8e9f0a1b2c3d4e5f60';
const ID = 'linux-fleet@19.470-4';

const worlds: ApiWorld[] = [];
afterEach(async () => {
  await Promise.all(worlds.splice(0).map((w) => w.close()));
});

async function open(): Promise<ApiWorld> {
  const w = await openRolloutApi(ctx.redis, ctx.prefix, { token: TOKEN });
  worlds.push(w);
  return w;
}

const post = (w: ApiWorld, action: string, body: unknown = {}) =>
  postAction(w, ID, action, { body, token: TOKEN });

/**
 * Everything in Redis under the test's prefix that names the rollout id: a key, a field or value
 * of a hash, a member of a set or sorted set, an element of a list (the outbox stream of
 * delivered events is not state and is left out).
 */
async function traces(redis: Redis, prefix: string, id: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    for (const key of keys) {
      if (key.includes(id)) {
        found.push(key);
        continue;
      }
      const type = await redis.type(key);
      let items: string[] = [];
      if (type === 'hash') items = Object.entries(await redis.hgetall(key)).flat();
      else if (type === 'set') items = await redis.smembers(key);
      else if (type === 'zset') items = await redis.zrange(key, '0', '-1');
      else if (type === 'list') items = await redis.lrange(key, 0, -1);
      else if (type === 'string') items = [(await redis.get(key)) ?? ''];
      for (const item of items) if (item.includes(id)) found.push(`${key} ∋ ${item.slice(0, 80)}`);
    }
    cursor = next;
  } while (cursor !== '0');
  return found.sort();
}

describe('resume of an aborted rollout is a compare-and-set', () => {
  it('six resumes at once: one 200 and one rollout.resumed event, five 409', async () => {
    const w = await open();
    await seedRollout(w, ID, { queued: 2 });
    expect((await post(w, 'abort', { reason: 'bad build' })).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(w, 'resume')));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) {
      expect(a.json.error.code).toBe('conflict');
      expect(a.json.error.message).toMatch(/released already/);
    }
    const types = (await w.events.history(ID)).map((e) => e.type);
    expect(types).toEqual(['rollout.aborted', 'rollout.resumed']);
    expect((await w.rollouts.get(ID))?.phase).toBe('aborted');
  });

  it('an abort and resumes sent together: the abort is recorded before any release', async () => {
    for (let round = 0; round < 10; round++) {
      const w = await open();
      const id = `race-${round}@19.470-4`;
      await seedRollout(w, id, { queued: 20 });
      const answers = await Promise.all([
        postAction(w, id, 'abort', { body: { reason: 'x' }, token: TOKEN }),
        ...Array.from({ length: 3 }, () => postAction(w, id, 'resume', { token: TOKEN })),
      ]);
      expect(answers[0]?.status).toBe(200);
      const ok = answers.slice(1).filter((a) => a.status === 200);
      expect(ok.length).toBeLessThanOrEqual(1);
      const types = (await w.events.history(id)).map((e) => e.type);
      expect(types[0]).toBe('rollout.aborted');
      expect(types.filter((t) => t === 'rollout.resumed')).toHaveLength(ok.length);
      // The abort ends its waiting Collectors whatever the resumes did.
      expect(await w.store.counts(id)).toEqual({ aborted: 20 });
    }
  });
});

describe('abort wins every race (issue 25)', () => {
  it('three aborts, three pauses and three resumes at once on a running rollout: it ends aborted, with one rollout.aborted', async () => {
    for (let round = 0; round < 10; round++) {
      const w = await open();
      const id = `burst-${round}@19.470-4`;
      await seedRollout(w, id, { queued: 5, succeeded: 1 });
      const kinds = ['abort', 'pause', 'resume', 'abort', 'pause', 'resume', 'abort', 'pause', 'resume'];
      const answers = await Promise.all(
        kinds.map((k) =>
          postAction(w, id, k, { body: k === 'abort' ? { reason: 'bad build' } : {}, token: TOKEN }),
        ),
      );
      const told = answers.map((a, i) => `${kinds[i]} ${a.status}`).join(', ');
      expect((await w.rollouts.get(id))?.phase, told).toBe('aborted');
      const aborts = answers.filter((_, i) => kinds[i] === 'abort');
      // Exactly one abort made the move; the others found it aborted already (never "try again").
      expect(
        aborts.filter((a) => a.status === 200),
        told,
      ).toHaveLength(1);
      for (const a of aborts.filter((x) => x.status !== 200)) {
        expect(a.status, told).toBe(409);
        expect(a.json.error.message, told).toMatch(/is aborted:/);
      }
      // Pause and resume may lose to each other or to the abort: a 409 with the reason.
      for (const a of answers.filter((_, i) => kinds[i] !== 'abort' && answers[i]?.status !== 200))
        expect(a.status, told).toBe(409);
      const types = (await w.events.history(id)).map((e) => e.type);
      expect(
        types.filter((t) => t === 'rollout.aborted'),
        told,
      ).toHaveLength(1);
      // After it, only a resume that releases the aborted rollout's policy (it stays aborted).
      const after = (await w.events.history(id)).slice(types.indexOf('rollout.aborted') + 1);
      for (const e of after)
        expect(`${e.type} ${e.detail?.released}`, `${told}: ${types.join(' ')}`).toBe(
          'rollout.resumed abort',
        );
      expect(await w.store.counts(id), told).toEqual({ aborted: 5, succeeded: 1 });
      await w.close();
      worlds.splice(worlds.indexOf(w), 1);
    }
  });
});

describe('forget racing other actions leaves no orphan', () => {
  const actions: [string, unknown][] = [
    ['resume', {}],
    ['pause', {}],
    ['abort', { reason: 'again' }],
    ['promote', {}],
    ['retry', { only: ['failed'] }],
    ['rollback', { all: true }],
  ];
  for (const phase of ['aborted', 'converged'] as const)
    for (const [action, body] of actions)
      it(`${phase}: forget and three ${action}s at once leave no trace of the rollout, or a whole one that forget removes`, async () => {
        for (let round = 0; round < 8; round++) {
          const w = await open();
          await seedRollout(
            w,
            ID,
            phase === 'aborted' ? { queued: 3, succeeded: 2, failed: 2 } : { succeeded: 2, failed: 2 },
          );
          if (phase === 'aborted') expect((await post(w, 'abort')).status).toBe(200);
          else
            expect(await w.rollouts.move({ id: ID, phase: 'running' }, 'converge', w.clock.now())).toBe(
              'converged',
            );
          const answers = await Promise.all([
            post(w, 'forget'),
            ...Array.from({ length: 3 }, () => post(w, action, body)),
          ]);
          const statuses = answers.map((a) => a.status).join(' ');
          for (const a of answers) expect([200, 404, 409], statuses).toContain(a.status);
          if (answers[0]?.status !== 200) {
            // Forget lost the race (the action made the rollout unforgettable, or went first):
            // the rollout is whole, and forget removes it once it may.
            expect(await w.rollouts.get(ID), statuses).toBeDefined();
            const again = await post(w, 'forget');
            if (again.status === 409 && /rollback request/.test(JSON.stringify(again.json))) {
              // A rollback request the daemon has not carried out refuses forget unless forced (issue 20).
              expect((await post(w, 'forget', { force: true })).status).toBe(200);
            } else if (again.status === 409) {
              expect((await post(w, 'abort')).status).toBe(200);
              expect((await post(w, 'forget')).status).toBe(200);
            } else expect(again.status, JSON.stringify(again.json)).toBe(200);
          }
          expect(await traces(ctx.redis, ctx.prefix, ID), `round ${round}: ${statuses}`).toEqual([]);
          await w.close();
          worlds.splice(worlds.indexOf(w), 1);
          await deleteKeys(ctx.redis, ctx.prefix);
        }
      });
});
