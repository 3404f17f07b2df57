/**
 * An operator's action and its audit record are one atomic step (rollout/life/audit-log.ts,
 * lua/write-rollout-6.lua, lua/forget-rollout-22.lua), on a real Redis: a kill of the process between
 * the action and its record is impossible by construction, because there is no "between".
 *
 * - MONITOR shows the record travelling inside the very EVALSHA that writes the rollout's phase,
 *   and no command outside a script ever touches the audit stream for it;
 * - an audit stream that cannot be written (a key of the wrong type) fails the whole step: the
 *   rollout is not paused and has no history event (no action without its record);
 * - a refused action (wrong phase) writes no `allowed` record;
 * - forget carries its record in its own step too, and so does a one-off upgrade (it writes no
 *   rollout yet: lua/add-one-off-3.lua writes its policy and its record together);
 * - the size cap drops the oldest records and counts them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { createLogger } from '../../../src/lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import { type EnsuredRedis, findExecutable, startLocalRedis } from '../../../src/lib/redis/redis-server.js';
import { AuditLog, type AuditRecord } from '../../../src/rollout/index.js';
import { OneOffPolicies } from '../../../src/rollout/one-off/index.js';
import { ControlError, forget, pause } from '../../../src/rollout/operator/index.js';
import { testRedisUrl, useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';

const ctx = useTestRedis();
// MONITOR on the run's shared Redis sees every other test file's traffic, and ioredis's monitor
// parser once lost its footing in it ("Command queue state error"): the tests that watch commands
// do it on a server of their own when redis-server is at hand (else on the shared one).
let own: EnsuredRedis | undefined;
let monitored = '';
beforeAll(async () => {
  const binary = findExecutable('redis-server');
  own = binary
    ? { ...(await startLocalRedis(binary, { logger: createLogger({ level: 'silent' }) })), source: 'local' }
    : undefined;
  monitored = own?.url ?? testRedisUrl();
});
afterAll(async () => {
  await own?.stop();
});

/** A client on the watched server (closed after `body`), for tests that look at MONITOR's lines. */
async function onWatched<T>(body: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = createRedis(monitored, { name: 'watched' });
  try {
    return await body(redis);
  } finally {
    await closeRedis(redis);
  }
}

/** MONITOR's lines `[source, command, ...args]` on the watched server while `body` runs. */
async function watching<T>(body: () => Promise<T>): Promise<{ result: T; seen: string[][] }> {
  const monitor = createRedis(monitored, { name: 'monitor' });
  const seen: string[][] = [];
  const m = await monitor.monitor();
  m.on('monitor', (_time: string, args: string[], source: string) => seen.push([source, ...args]));
  try {
    const result = await body();
    await new Promise((r) => setTimeout(r, 50));
    return { result, seen };
  } finally {
    m.disconnect();
    await closeRedis(monitor);
  }
}
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const ID = 'linux-fleet@19.470-4';

const record = (what: string): AuditRecord => ({
  who: 'alice',
  via: 'token',
  from: '10.0.0.7',
  what,
  rollout: ID,
  answer: 'allowed',
  status: 200,
});

async function world(redis: Redis = ctx.redis) {
  const state = createState(redis, ctx.prefix);
  const clock = createManualClock(T0);
  await state.rollouts.start({
    policy: 'linux-fleet',
    target: '19.470-4',
    build: '19.470-4',
    maxInFlight: 10,
    settings: SETTINGS,
    now: T0,
  });
  const audit = new AuditLog(redis, state.keys, { maxRecords: 1000, retentionMs: 400 * 86_400_000 });
  const deps = { rollouts: state.rollouts, store: state.store, clock, keys: state.keys };
  return { state, clock, audit, deps };
}

describe('an action and its audit record', () => {
  it('travel in one EVALSHA: the record is never written by a command of its own', () =>
    onWatched(async (redis) => {
      const { state, audit, deps } = await world(redis);
      const note = audit.note(record('pause'));
      const { seen } = await watching(() =>
        pause({ ...deps, rollouts: deps.rollouts.audited(note) }, ID, 'alice'),
      );
      expect(note.written).toBe(true);
      const evals = seen.filter(([, cmd]) => /^evalsha$|^eval$/i.test(cmd ?? ''));
      const carrying = evals.filter((a) => a.some((x) => x.includes('"what":"pause"')));
      expect(carrying).toHaveLength(1);
      // The same call names the rollout and the audit stream, and brings the phase's compare-and-set.
      expect(carrying[0]).toEqual(
        expect.arrayContaining([state.keys.rollout(ID), state.keys.audit, 'phase', 'running']),
      );
      // Outside scripts, nothing writes the audit stream.
      const outside = seen.filter(([source, cmd]) => !/lua/.test(source ?? '') && /^xadd$/i.test(cmd ?? ''));
      expect(outside.filter((a) => a.includes(state.keys.audit))).toEqual([]);
      const [entry] = await collect(audit);
      expect(entry).toMatchObject({ who: 'alice', what: 'pause', answer: 'allowed', rollout: ID });
      expect((await state.rollouts.get(ID))?.phase).toBe('paused');
    }));

  it('fails together: an audit stream that cannot be written leaves the action undone', async () => {
    const { state, audit, deps } = await world();
    await ctx.redis.set(state.keys.audit, 'not a stream');
    const note = audit.note(record('pause'));
    await expect(pause({ ...deps, rollouts: deps.rollouts.audited(note) }, ID, 'alice')).rejects.toThrow(
      /WRONGTYPE/,
    );
    expect(note.written).toBe(false);
    expect((await state.rollouts.get(ID))?.phase).toBe('running');
    expect(await state.events.history(ID)).toEqual([]);
    expect(await ctx.redis.xlen(state.keys.outbox)).toBe(0);
  });

  it('writes no allowed record for an action refused by the rollout’s phase, and carries forget’s', async () => {
    const { state, audit, deps } = await world();
    const note = audit.note(record('forget'));
    // A running rollout cannot be forgotten: nothing is written.
    await expect(
      forget({ ...deps, rollouts: deps.rollouts.audited(note) }, ID, { force: true }),
    ).rejects.toThrow(ControlError);
    expect(note.written).toBe(false);
    expect(await ctx.redis.exists(state.keys.audit)).toBe(0);
    await state.rollouts.move({ id: ID, phase: 'running' }, 'abort', T0, 'test');
    const again = audit.note(record('forget'));
    await forget({ ...deps, rollouts: deps.rollouts.audited(again) }, ID, { force: true });
    expect(again.written).toBe(true);
    expect(await state.rollouts.get(ID)).toBeUndefined();
    expect((await collect(audit)).map((e) => e.what)).toEqual(['forget']);
  });

  it('carries a one-off upgrade’s record in the step that writes the one-off, or writes neither', () =>
    onWatched(async (redis) => {
      const { state, audit } = await world(redis);
      const oneOffs = new OneOffPolicies(redis, state.keys);
      const request = { collectors: [101, 102], to: '19.470-4', allowDowngrade: false };
      let note: ReturnType<AuditLog['note']> | undefined;
      const { result: name, seen } = await watching(() =>
        oneOffs.add(request, 'alice', T0, (n) => {
          note = audit.note({ ...record('upgrade'), reason: `2 Collectors to 19.470-4: ${n}` });
          return note;
        }),
      );
      expect(note?.written).toBe(true);
      const evals = seen.filter(([, cmd]) => /^evalsha$|^eval$/i.test(cmd ?? ''));
      const carrying = evals.filter((a) => a.some((x) => x.includes('"what":"upgrade"')));
      expect(carrying).toHaveLength(1);
      // The same call writes the one-off's policy and appends the record.
      expect(carrying[0]).toEqual(expect.arrayContaining([state.keys.oneOffs, state.keys.audit, name]));
      const outside = seen.filter(
        ([source, cmd]) => !/lua/.test(source ?? '') && /^(xadd|hset)$/i.test(cmd ?? ''),
      );
      expect(outside.filter((a) => a.includes(state.keys.audit) || a.includes(state.keys.oneOffs))).toEqual(
        [],
      );
      expect((await oneOffs.list()).map((p) => p.name)).toEqual([name]);
      const [entry] = await collect(audit);
      expect(entry).toMatchObject({
        who: 'alice',
        what: 'upgrade',
        reason: `2 Collectors to 19.470-4: ${name}`,
      });

      // An audit stream that cannot be written: neither the one-off nor its record.
      await redis.del(state.keys.audit);
      await redis.set(state.keys.audit, 'not a stream');
      let refused: ReturnType<AuditLog['note']> | undefined;
      await expect(
        oneOffs.add(request, 'alice', T0 + 1000, () => {
          refused = audit.note(record('upgrade'));
          return refused;
        }),
      ).rejects.toThrow(/WRONGTYPE/);
      expect(refused?.written).toBe(false);
      expect((await oneOffs.list()).map((p) => p.name)).toEqual([name]);
    }));

  it('keeps at most the cap, dropping the oldest and counting them', async () => {
    const { state } = await world();
    const small = new AuditLog(ctx.redis, state.keys, { maxRecords: 1000, retentionMs: 400 * 86_400_000 });
    for (let i = 0; i < 1005; i++) await small.append({ ...record('pause'), reason: `n${i}` });
    const all = await collect(small);
    expect(all).toHaveLength(1000);
    expect(all[0]?.reason).toBe('n5');
    expect(await small.dropped()).toEqual({ cap: 5, retention: 0 });
    // Pages: the same records whatever the page size.
    const paged: string[] = [];
    for await (const e of small.read({}, 7)) paged.push(e.reason ?? '');
    expect(paged).toEqual(all.map((e) => e.reason));
  });
});

async function collect(log: AuditLog) {
  const out = [];
  for await (const e of log.read()) out.push(e);
  return out;
}
