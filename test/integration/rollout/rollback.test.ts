/**
 * Rollback requests and how the scheduler carries them out (src/rollout/operator/rollback.ts), on a real
 * Redis without a daemon: the request names the outcomes; carrying it out makes one one-off
 * rollout per previous build with the source's settings and its policy's gate; a build the
 * service no longer offers is reported (on the rollout and in an event), never guessed; a request
 * carried out twice (a crash before it was removed) adds nothing; Collectors under verification
 * end their verification as successes.
 */
import { describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { Policy } from '../../../src/policy/schema.js';
import type { CollectorState } from '../../../src/rollout/collector/index.js';
import { OneOffPolicies, rollbackSource } from '../../../src/rollout/one-off/index.js';
import {
  ControlError,
  carryOutRollback,
  parseRollbackRequest,
  requestRollback,
  rollbackStates,
} from '../../../src/rollout/operator/index.js';
import { settingsOf } from '../../../src/rollout/tick/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';
import { newRecord, seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();
const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const BUILD = '19.470-4';
const ID = `linux-fleet@${BUILD}`;
const POLICY = Policy.parse({
  name: 'linux-fleet',
  maxInFlight: 20,
  failureGate: { unhealthy: { max: 0 }, onTrip: 'rollback-wave' },
  api: { requestsPerSecond: 2, maxConcurrent: 3 },
  verify: { within: '15m', bake: '7m', interval: '2m' },
});

async function world() {
  const state = createState(ctx.redis, ctx.prefix);
  const clock = createManualClock(T0);
  const deps = {
    rollouts: state.rollouts,
    store: state.store,
    events: state.events,
    clock,
    keys: state.keys,
  };
  const settings = settingsOf(POLICY);
  await state.rollouts.start({
    policy: 'linux-fleet',
    target: 'latest',
    build: BUILD,
    maxInFlight: 20,
    settings,
    now: T0,
  });
  /** Collectors `ids` from build `from`, each put into `state`. */
  const seed = async (ids: number[], from: string, state: CollectorState) => {
    for (const id of ids)
      await seedCollector(
        { store: deps.store, rolloutId: ID, settings, now: T0 },
        newRecord({ id, name: `c-${id}`, hostName: `h-${id}`, collectorVersion: from }, BUILD, T0),
        state,
      );
  };
  const oneOffs = new OneOffPolicies(ctx.redis, state.keys);
  /** What carrying the request out recorded (in the history, with the entries). */
  const emitted = async () =>
    (await state.events.history(ID)).filter(
      (e) => e.type === 'rollback.started' || e.type === 'rollback.unavailable',
    );
  const rollbackDeps = {
    store: state.store,
    rollouts: state.rollouts,
    oneOffs,
    logger: captureLogger('warn').logger,
  };
  /** The request filed for the rollout, as the scheduler reads it. */
  const filed = async () => {
    const raw = await ctx.redis.hget(state.keys.rollbackRequests, ID);
    const request = raw ? parseRollbackRequest(raw) : undefined;
    if (!raw || !request) throw new Error('no rollback request filed');
    return { raw, request };
  };
  return { state, clock, deps, seed, oneOffs, emitted, rollbackDeps, filed };
}

describe('rollback', () => {
  it('files a request for the outcomes chosen, recorded in the history; refuses what it cannot do', async () => {
    const w = await world();
    await w.seed([1, 2], '19.400-5', 'unhealthy');
    await w.seed([3], '19.400-5', 'succeeded');
    const result = await requestRollback(w.deps, ID, 'ops@host', rollbackStates({}));
    expect(result.message).toMatch(/rollback of 2 Collectors \(unhealthy, failed, timed_out\)/);
    const { request } = await w.filed();
    expect(request).toMatchObject({
      states: ['unhealthy', 'failed', 'timed_out'],
      by: 'ops@host',
      source: 'operator',
    });
    expect((await w.state.events.history(ID)).map((e) => [e.type, e.actor])).toEqual([
      ['rollback.requested', 'ops@host'],
    ]);
    expect(rollbackStates({ all: true })).toEqual([
      'succeeded',
      'verifying',
      'unhealthy',
      'failed',
      'timed_out',
    ]);
    const none = await requestRollback(w.deps, ID, 'ops', ['timed_out']).catch((e: unknown) => e);
    expect(none).toBeInstanceOf(ControlError);
    expect((none as ControlError).kind).toBe('conflict');
    const unknown = await requestRollback(w.deps, 'nobody@1.0-1', 'ops', ['failed']).catch((e: unknown) => e);
    expect((unknown as ControlError).kind).toBe('not_found');
    expect(() => rollbackStates({ only: ['skipped'] })).toThrow(
      /--only takes succeeded, verifying, unhealthy, failed, timed_out; not skipped/,
    );
  });

  it('makes one rollout per previous build with the source settings and gate; a build no longer offered is reported', async () => {
    const w = await world();
    await w.seed([1, 2], '19.400-5', 'unhealthy');
    await w.seed([3], '19.450-12', 'unhealthy');
    await w.seed([4, 5], '19.300-1', 'unhealthy');
    await w.seed([6], '19.400-5', 'succeeded');
    await requestRollback(w.deps, ID, 'ops@host', ['unhealthy']);
    const { raw, request } = await w.filed();
    const source = await w.state.rollouts.get(ID);
    if (!source) throw new Error('no rollout');
    const targets = ['19.400-5', '19.450-12', BUILD].map((version) => ({
      version,
      latest: version === BUILD,
    }));
    const entries = await carryOutRollback(w.rollbackDeps, source, request, {
      policy: POLICY,
      targets: () => targets,
      now: T0,
    });
    if (entries === 'wait') throw new Error('the rollback waits');
    await w.state.rollouts.rollbacks.done(ID, raw);

    expect(entries.map((e) => [e.build, e.collectors, e.state]).sort()).toEqual([
      ['19.300-1', 2, 'unavailable'],
      ['19.400-5', 2, 'started'],
      ['19.450-12', 1, 'started'],
    ]);
    expect(entries.find((e) => e.state === 'unavailable')?.ids).toEqual([4, 5]);
    expect((await w.emitted()).map((e) => e.type).sort()).toEqual([
      'rollback.started',
      'rollback.started',
      'rollback.unavailable',
    ]);
    expect((await w.emitted()).find((e) => e.type === 'rollback.unavailable')?.message).toMatch(
      /2 Collectors were on 19\.300-1, which the service no longer offers: not rolled back/,
    );
    // The one-off policies: the Collectors of each build, down to it, with the source's settings.
    const policies = await w.oneOffs.list();
    expect(policies.map((p) => [p.target, p.select[0]?.ids]).sort()).toEqual([
      ['19.400-5', [1, 2]],
      ['19.450-12', [3]],
    ]);
    for (const p of policies) {
      expect(rollbackSource(p)).toBe(ID);
      expect(p).toMatchObject({
        allowDowngrade: true,
        maxInFlight: p.select[0]?.ids?.length,
        api: { requestsPerSecond: 2, maxConcurrent: 3 },
        verify: { enabled: true, within: 15 * 60_000, bake: 7 * 60_000, interval: 2 * 60_000 },
        // The source's gate, but a trip pauses: a rollback is not rolled back.
        failureGate: { unhealthy: { max: 0 }, onTrip: 'pause' },
        windows: [],
      });
    }
    // Recorded on the source rollout; the request is gone.
    expect((await w.state.rollouts.get(ID))?.rollbacks?.map((e) => e.state).sort()).toEqual([
      'started',
      'started',
      'unavailable',
    ]);
    expect(await ctx.redis.hget(w.state.keys.rollbackRequests, ID)).toBeNull();

    // Carried out again (a crash before the request was removed): nothing more.
    const again = await carryOutRollback(
      w.rollbackDeps,
      (await w.state.rollouts.get(ID)) ?? source,
      request,
      {
        policy: POLICY,
        targets: () => targets,
        now: T0,
      },
    );
    expect(again).toHaveLength(3);
    expect(await w.oneOffs.list()).toHaveLength(2);
  });

  it('ends the verification of Collectors taken back while verifying, as unverified successes', async () => {
    const w = await world();
    await w.seed([1], '19.400-5', 'verifying');
    await w.seed([2], '19.400-5', 'succeeded');
    await requestRollback(w.deps, ID, 'ops', rollbackStates({ all: true }));
    const { request } = await w.filed();
    const source = await w.state.rollouts.get(ID);
    if (!source) throw new Error('no rollout');
    await carryOutRollback(w.rollbackDeps, source, request, {
      targets: () => [{ version: '19.400-5', latest: false }],
      now: T0,
    });
    expect(await w.state.store.get(ID, 1)).toMatchObject({
      state: 'succeeded',
      message: 'unverified: taken back by a rollback',
    });
    expect(await w.state.store.indexed(ID, 'verifying')).toEqual([]);
    // Without the policy (its file removed), the rollback has no gate of its own.
    const [p] = await w.oneOffs.list();
    expect(p?.failureGate).toBeUndefined();
    expect(p?.select[0]?.ids).toEqual([1, 2]);
  });

  it('a newer request replaces one not yet carried out; one carried out is removed only if unchanged', async () => {
    const w = await world();
    await w.seed([1], '19.400-5', 'failed');
    await requestRollback(w.deps, ID, 'ops', ['failed']);
    const first = await w.filed();
    await requestRollback(w.deps, ID, 'ops', ['failed']);
    const second = await w.filed();
    expect(second.request.id).not.toBe(first.request.id);
    await w.state.rollouts.rollbacks.done(ID, first.raw);
    expect((await w.filed()).raw).toBe(second.raw);
    await w.state.rollouts.rollbacks.done(ID, second.raw);
    expect(await ctx.redis.hget(w.state.keys.rollbackRequests, ID)).toBeNull();
  });
});
