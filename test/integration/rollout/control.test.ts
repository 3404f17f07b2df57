/**
 * Operator actions (src/rollout/operator/control.ts) on a real Redis, without a daemon or a simulator: a
 * rollout started with RolloutStore.start and Collectors put into their states by the real store
 * (test/support/seed-collector.ts). pause and resume (what a resume releases; a policy's pause is
 * not an operator's to lift), abort (waiting Collectors end aborted with their counts, those with
 * a slot are left to their job; an aborted rollout's resume releases its policy), promote (ends a
 * bake or an approval wait; --full), retry (exactly the outcomes chosen get one new attempt),
 * forget (only a rollout that runs nothing; every key of it goes), and each action recorded once,
 * in order, in the rollout's history and in the outbox with its id.
 */
import { describe, expect, it, vi } from 'vitest';
import { createState, type FleetState } from '../../../src/cli/boot/create-state.js';
import { createManualClock, type ManualClock } from '../../../src/lib/clock.js';
import {
  COLLECTOR_STATES,
  type CollectorRecord,
  type CollectorState,
  indexOf,
  SLOT_STATES,
  type StateCounts,
  transition,
} from '../../../src/rollout/collector/index.js';
import type { RecordedEvent } from '../../../src/rollout/life/index.js';
import { PAUSE_REASONS } from '../../../src/rollout/life/index.js';
import {
  abort,
  type ControlDeps,
  ControlError,
  type ControlResult,
  forget,
  pause,
  promote,
  RETRYABLE_STATES,
  resume,
  retry,
} from '../../../src/rollout/operator/index.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';
import { newRecord, seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();

const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const POLICY = 'linux-fleet';
const BUILD = '19.470-4';
const ID = `${POLICY}@${BUILD}`;
const OPS = 'ops@host-1';

interface World extends FleetState {
  clock: ManualClock;
  deps: ControlDeps;
}

function open(): World {
  const state = createState(ctx.redis, ctx.prefix);
  const clock = createManualClock(T0);
  return {
    ...state,
    clock,
    deps: { rollouts: state.rollouts, store: state.store, clock, keys: state.keys },
  };
}

/**
 * Starts the rollout `id` and puts Collectors into the states asked for (ids from `firstId` on,
 * in the order given); returns the ids per state.
 */
async function rollout(
  w: World,
  states: Partial<Record<CollectorState, number>>,
  id = ID,
  firstId = 1,
): Promise<Record<string, number[]>> {
  const [policy, build] = id.split('@') as [string, string];
  await w.rollouts.start({ policy, target: 'latest', build, maxInFlight: 50, settings: SETTINGS, now: T0 });
  const ids: Record<string, number[]> = {};
  let next = firstId;
  for (const [state, n] of Object.entries(states) as [CollectorState, number][]) {
    for (let i = 0; i < n; i++) {
      const cid = next++;
      await seedCollector(
        { store: w.store, rolloutId: id, settings: SETTINGS, now: T0 },
        newRecord(
          { id: cid, name: `c-${cid}`, hostName: `host-${cid}`, collectorVersion: '19.400-5' },
          build,
          T0,
        ),
        state,
      );
      ids[state] = [...(ids[state] ?? []), cid];
    }
  }
  return ids;
}

/** The error an action fails with (fails the test when it succeeds). */
async function refusal(action: Promise<unknown>): Promise<ControlError> {
  const err = await action.then(
    () => {
      throw new Error('expected the action to be refused');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ControlError);
  return err as ControlError;
}

async function records(w: World, id = ID): Promise<CollectorRecord[]> {
  const out: CollectorRecord[] = [];
  for await (const r of w.store.all(id)) out.push(r);
  return out.sort((a, b) => a.id - b.id);
}

/** Counts, indexes and slots agree with the records (what the store promises). */
async function expectConsistent(w: World, id = ID) {
  const all = await records(w, id);
  const counts: StateCounts = {};
  for (const r of all) counts[r.state] = (counts[r.state] ?? 0) + 1;
  expect(await w.store.counts(id)).toEqual(counts);
  for (const index of ['queued', 'retries', 'reconciling'] as const)
    expect((await w.store.indexed(id, index)).map(Number).sort((a, b) => a - b)).toEqual(
      all.filter((r) => indexOf(r.state) === index).map((r) => r.id),
    );
  const held = (await w.store.slotHolders(POLICY))
    .filter((h) => h.rolloutId === id)
    .map((h) => h.collectorId);
  expect(held.sort((a, b) => a - b)).toEqual(
    all.filter((r) => SLOT_STATES.includes(r.state)).map((r) => r.id),
  );
}

/** The outbox stream's entries: the id field and the event, in order. */
async function outbox(w: World): Promise<{ id: string; event: RecordedEvent }[]> {
  const entries = await ctx.redis.xrange(w.keys.outbox, '-', '+');
  return entries.map(([, fields]) => {
    const f: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) f[fields[i] as string] = fields[i + 1] as string;
    return { id: f.id as string, event: JSON.parse(f.event as string) as RecordedEvent };
  });
}

describe('pause and resume', () => {
  it('pause holds admissions and records who paused it; resume says what it released', async () => {
    const w = open();
    await rollout(w, { queued: 2, pending: 1, failed: 1 });
    w.clock.set(T0 + MINUTE);
    const paused = await pause(w.deps, ID, OPS);
    expect(paused.message).toBe(`${ID} paused by ${OPS}: nothing new starts; tasks under way finish`);
    expect(paused.event).toMatchObject({
      type: 'rollout.paused',
      source: 'operator',
      actor: OPS,
      at: T0 + MINUTE,
    });
    expect(await w.rollouts.get(ID)).toMatchObject({
      phase: 'paused',
      pauseReason: `by ${OPS}`,
      pausedBy: OPS,
      pausedAt: T0 + MINUTE,
      updatedAt: T0 + MINUTE,
    });
    // Pausing changes no Collector.
    expect(await w.store.counts(ID)).toEqual({ queued: 2, pending: 1, failed: 1 });
    // Paused already: refused.
    const again = await refusal(pause(w.deps, ID, OPS));
    expect(again).toMatchObject({ kind: 'conflict', code: 'FLEET_ERR_CONTROL_CONFLICT' });
    expect(again.message).toBe(`rollout ${ID} is paused: only a running or converged rollout can be paused`);

    w.clock.set(T0 + 2 * MINUTE);
    const resumed = await resume(w.deps, ID, 'other@host-2');
    expect(resumed.message).toBe(`${ID} resumed by other@host-2: released the pause by ${OPS}`);
    expect(resumed.event).toMatchObject({
      type: 'rollout.resumed',
      source: 'operator',
      actor: 'other@host-2',
      detail: { released: 'paused' },
    });
    expect(await w.rollouts.get(ID)).toMatchObject({
      phase: 'running',
      pauseReason: undefined,
      pausedBy: undefined,
      updatedAt: T0 + 2 * MINUTE,
      // The gate judges only what comes after the resume.
      gateBaseline: { queued: 2, pending: 1, failed: 1 },
      waveBaseline: [],
    });
    // Running: nothing to resume.
    const running = await refusal(resume(w.deps, ID, OPS));
    expect(running.kind).toBe('conflict');
    expect(running.message).toBe(`rollout ${ID} is running: only a halted or paused rollout can be resumed`);
  });

  it('resume of a halted rollout releases the failure gate’s halt, naming it, and records the baselines per wave', async () => {
    const w = open();
    await rollout(w, { succeeded: 1 });
    // Two Collectors admitted in wave 1 (index 0) that failed: counts per wave to record.
    await w.store.discover(
      ID,
      [101, 102].map((id) => newRecord({ id, name: `c-${id}`, collectorVersion: '19.400-5' }, BUILD, T0)),
    );
    for (const id of [101, 102]) {
      let r = (await w.store.get(ID, id)) as CollectorRecord;
      for (const event of [
        { type: 'admit', wave: 0 },
        { type: 'send' },
        { type: 'created', taskId: `t${id}`, requestTime: T0, createdBy: 'test' },
        { type: 'failed', message: 'disk full', status: 3 },
      ] as const) {
        const t = transition(r, event, { now: T0, settings: SETTINGS });
        if (!t.ok) throw new Error(t.reason);
        expect(await w.store.apply(ID, [t.move], { limit: 10 })).toEqual(['written']);
        r = t.move.next;
      }
    }
    const { rollout: r } = await w.rollouts.start({
      policy: POLICY,
      target: 'latest',
      build: BUILD,
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    expect(
      await w.rollouts.move(
        r,
        'halt',
        T0 + 1,
        'over the rollout, failed: 2 Collectors, above the gate’s max of 1',
      ),
    ).toBe('halted');
    const resumed = await resume(w.deps, ID, OPS);
    expect(resumed.message).toBe(
      `${ID} resumed by ${OPS}: released the failure gate's halt (over the rollout, failed: 2 Collectors, above the gate’s max of 1)`,
    );
    expect(resumed.event?.detail).toEqual({ released: 'halted' });
    expect(await w.rollouts.get(ID)).toMatchObject({
      phase: 'running',
      haltReason: undefined,
      gateBaseline: { succeeded: 1, failed: 2 },
      waveBaseline: [{ failed: 2 }],
    });
  });

  it('refuses to resume a rollout its policy paused: the policy file decides', async () => {
    const w = open();
    await rollout(w, { queued: 1 });
    const { rollout: r } = await w.rollouts.start({
      policy: POLICY,
      target: 'latest',
      build: BUILD,
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    for (const [reason, word] of [
      [PAUSE_REASONS.policyDisabled, 'disabled'],
      [PAUSE_REASONS.policyRemoved, 'removed'],
    ] as const) {
      expect(await w.rollouts.move({ ...r, phase: 'running' }, 'pause', T0 + 1, reason)).toBe('paused');
      const err = await refusal(resume(w.deps, ID, OPS));
      expect(err.kind).toBe('conflict');
      expect(err.message).toBe(
        `rollout ${ID} is paused: its policy is ${word}: enable or restore the policy file to go on`,
      );
      expect(await w.rollouts.get(ID)).toMatchObject({ phase: 'paused', pauseReason: reason });
      expect(await w.rollouts.move({ ...r, phase: 'paused' }, 'unpause', T0 + 2)).toBe('running');
    }
    expect(await w.events.history(ID)).toEqual([]);
  });

  it('every action on an unknown rollout is not_found', async () => {
    const w = open();
    const actions = [
      () => pause(w.deps, 'nobody@1.0-1', OPS),
      () => resume(w.deps, 'nobody@1.0-1', OPS),
      () => abort(w.deps, 'nobody@1.0-1', OPS),
      () => promote(w.deps, 'nobody@1.0-1', OPS, false),
      () => retry(w.deps, 'nobody@1.0-1', OPS, ['failed']),
      () => forget(w.deps, 'nobody@1.0-1'),
    ];
    for (const action of actions) {
      const err = await refusal(action());
      expect(err).toMatchObject({ kind: 'not_found', code: 'FLEET_ERR_CONTROL_NOT_FOUND' });
      expect(err.message).toBe("no rollout 'nobody@1.0-1' (see `fleet-upgrade status`)");
    }
    expect(await ctx.redis.exists(w.keys.outbox)).toBe(0);
  });
});

describe('abort', () => {
  it('ends every waiting Collector aborted with its counts; those with a slot are left to their job', async () => {
    const w = open();
    const ids = await rollout(w, {
      queued: 3,
      waiting_retry: 2,
      admitted: 1,
      creating: 1,
      pending: 1,
      reconciling: 1,
      succeeded: 1,
      failed: 1,
      not_alive: 1,
    });
    const before = new Map((await records(w)).map((r) => [r.id, r]));
    w.clock.set(T0 + 5 * MINUTE);
    const result = await abort(w.deps, ID, OPS);
    expect(result.message).toBe(
      `${ID} aborted (by ${OPS}): 5 Collectors that had not started end aborted; tasks under way finish`,
    );
    expect(result.event).toMatchObject({
      type: 'rollout.aborted',
      source: 'operator',
      actor: OPS,
      at: T0 + 5 * MINUTE,
      detail: { aborted: 5, reason: `by ${OPS}` },
    });
    expect(await w.rollouts.get(ID)).toMatchObject({ phase: 'aborted', abortReason: `by ${OPS}` });
    expect(await w.store.counts(ID)).toEqual({
      aborted: 5,
      admitted: 1,
      creating: 1,
      pending: 1,
      reconciling: 1,
      succeeded: 1,
      failed: 1,
      not_alive: 1,
    });
    for (const r of await records(w)) {
      const was = before.get(r.id) as CollectorRecord;
      if ([...(ids.queued ?? []), ...(ids.waiting_retry ?? [])].includes(r.id)) {
        expect(r).toMatchObject({
          state: 'aborted',
          message: `rollout aborted (by ${OPS})`,
          finishedAt: T0 + 5 * MINUTE,
          attempts: was.attempts,
        });
      } else expect(r).toEqual(was);
    }
    expect(await w.store.indexed(ID, 'queued')).toEqual([]);
    expect(await w.store.indexed(ID, 'retries')).toEqual([]);
    // The slots of admitted, creating, pending and reconciling are still held.
    expect((await w.store.slotHolders(POLICY)).length).toBe(4);
    await expectConsistent(w);
    // The admitted Collector's job ends it aborted when it runs (no create is sent).
    const admitted = (await w.store.get(ID, ids.admitted?.[0] as number)) as CollectorRecord;
    const t = transition(
      admitted,
      { type: 'abort', message: 'rollout aborted' },
      { now: T0 + 6 * MINUTE, settings: SETTINGS },
    );
    expect(t.ok).toBe(true);
    if (t.ok) expect(await w.store.apply(ID, [t.move])).toEqual(['written']);
    expect((await w.store.slotHolders(POLICY)).length).toBe(3);
    await expectConsistent(w);
  });

  it('aborts waiting Collectors in batches: all of 1,200 queued and retried ones', async () => {
    const w = open();
    await w.rollouts.start({
      policy: POLICY,
      target: 'latest',
      build: BUILD,
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    const ids = Array.from({ length: 1_200 }, (_, i) => i + 1);
    await w.store.discover(
      ID,
      ids.map((id) => newRecord({ id, name: `c-${id}`, collectorVersion: '19.400-5' }, BUILD, T0)),
    );
    // 600 of them wait for a retry.
    const moves = [];
    for (const id of ids.slice(0, 600)) {
      const r = (await w.store.get(ID, id)) as CollectorRecord;
      const a = transition(r, { type: 'admit' }, { now: T0, settings: SETTINGS });
      if (!a.ok) throw new Error(a.reason);
      const b = transition(a.move.next, { type: 'withdraw', message: 'x' }, { now: T0, settings: SETTINGS });
      if (!b.ok) throw new Error(b.reason);
      moves.push(a.move, b.move);
    }
    for (let i = 0; i < moves.length; i += 200)
      await w.store.apply(ID, moves.slice(i, i + 200), { limit: 1_000 });
    expect(await w.store.counts(ID)).toEqual({ queued: 600, waiting_retry: 600 });
    const result = await abort(w.deps, ID, OPS);
    expect(result.event?.detail).toEqual({ aborted: 1_200, reason: `by ${OPS}` });
    expect(await w.store.counts(ID)).toEqual({ aborted: 1_200 });
    await expectConsistent(w);
  });

  it('is refused once aborted or superseded; the gate aborts without an actor', async () => {
    const w = open();
    await rollout(w, { queued: 1 });
    await rollout(w, { queued: 1 }, `${POLICY}@19.480-1`, 10);
    const superseded = { id: ID, phase: 'running' as const };
    expect(await w.rollouts.move(superseded, 'supersede', T0 + 1)).toBe('superseded');
    const err = await refusal(abort(w.deps, ID, OPS));
    expect(err.message).toBe(
      `rollout ${ID} is superseded: only a running, converged, paused or halted rollout can be aborted`,
    );
    expect(await w.store.counts(ID)).toEqual({ queued: 1 });

    const gate = await abort(
      w.deps,
      `${POLICY}@19.480-1`,
      'the failure gate',
      'the failure gate: failed: 3',
      'gate',
    );
    expect(gate.event).toMatchObject({ type: 'rollout.aborted', source: 'gate', detail: { aborted: 1 } });
    expect(gate.event && 'actor' in gate.event).toBe(false);
    expect((await refusal(abort(w.deps, `${POLICY}@19.480-1`, OPS))).kind).toBe('conflict');
    expect(await w.events.history(`${POLICY}@19.480-1`)).toHaveLength(1);
  });

  it('a resume of an aborted rollout releases its policy (releasedAt) and leaves it aborted; once', async () => {
    const w = open();
    await rollout(w, { queued: 2, succeeded: 1 });
    await abort(w.deps, ID, OPS);
    w.clock.set(T0 + HOUR);
    const released = await resume(w.deps, ID, 'lead@host-3');
    expect(released.message).toBe(
      `${ID} stays aborted; its policy is released: a newer build starts a new rollout`,
    );
    expect(released.event).toMatchObject({
      type: 'rollout.resumed',
      actor: 'lead@host-3',
      detail: { released: 'abort' },
    });
    expect(await w.rollouts.get(ID)).toMatchObject({ phase: 'aborted', releasedAt: T0 + HOUR });
    expect(await w.store.counts(ID)).toEqual({ aborted: 2, succeeded: 1 });
    const again = await refusal(resume(w.deps, ID, OPS));
    expect(again.message).toBe(`rollout ${ID} is aborted: its policy was released already`);
    expect((await w.rollouts.get(ID))?.releasedAt).toBe(T0 + HOUR);
  });
});

describe('promote', () => {
  it('is refused when nothing waits, and when the rollout does not run', async () => {
    const w = open();
    await rollout(w, { queued: 3 });
    const idle = await refusal(promote(w.deps, ID, OPS, false));
    expect(idle.message).toBe(`rollout ${ID} is running: nothing waits: wave 1 of 1 is under way`);
    await w.rollouts.setWave(ID, 0, { index: 1, of: 4 }, T0);
    expect((await refusal(promote(w.deps, ID, OPS, false))).message).toBe(
      `rollout ${ID} is running: nothing waits: wave 2 of 4 is under way`,
    );
    await w.rollouts.setWave(ID, 1, { index: 1, of: 4, waitingFor: 'approval' }, T0);
    await pause(w.deps, ID, OPS);
    const paused = await refusal(promote(w.deps, ID, OPS, true));
    expect(paused.message).toBe(
      `rollout ${ID} is paused: only a running rollout can be promoted (resume it first)`,
    );
    expect((await w.rollouts.get(ID))?.wave).toEqual({ index: 1, of: 4, waitingFor: 'approval', seq: 2 });
  });

  it('on a converged rollout says that every wave has run, not that one is under way', async () => {
    const w = open();
    await rollout(w, { succeeded: 3 });
    await w.rollouts.move({ id: ID, phase: 'running' }, 'converge', T0);
    expect((await refusal(promote(w.deps, ID, OPS, false))).message).toBe(
      `rollout ${ID} is converged: nothing waits to be promoted: its one wave has run`,
    );
    await w.rollouts.setWave(ID, 0, { index: 3, of: 4 }, T0);
    expect((await refusal(promote(w.deps, ID, OPS, false))).message).toBe(
      `rollout ${ID} is converged: nothing waits to be promoted: all 4 waves have run`,
    );
  });

  it('ends a bake at once: the next wave opens', async () => {
    const w = open();
    await rollout(w, { succeeded: 2, queued: 8 });
    await w.rollouts.setWave(ID, 0, { index: 0, waitingFor: 'bake', bakeUntil: T0 + HOUR, of: 3 }, T0);
    const result = await promote(w.deps, ID, OPS, false);
    expect(result.message).toBe(`${ID} promoted by ${OPS}: wave 2 of 3 opens now (the bake was cut short)`);
    expect(result.event).toMatchObject({
      type: 'rollout.promoted',
      actor: OPS,
      detail: { full: false, wave: 2, ended: 'bake' },
    });
    expect((await w.rollouts.get(ID))?.wave).toEqual({ index: 1, of: 3, seq: 2 });
    // Nothing waits any more.
    expect((await refusal(promote(w.deps, ID, OPS, false))).kind).toBe('conflict');
  });

  it('ends an approval wait', async () => {
    const w = open();
    await rollout(w, { succeeded: 2 });
    await w.rollouts.setWave(ID, 0, { index: 1, waitingFor: 'approval', of: 3 }, T0);
    const result = await promote(w.deps, ID, OPS, false);
    expect(result.message).toBe(`${ID} promoted by ${OPS}: wave 3 of 3 opens now`);
    expect(result.event?.detail).toEqual({ full: false, wave: 3, ended: 'approval' });
    expect((await w.rollouts.get(ID))?.wave).toEqual({ index: 2, of: 3, seq: 2 });
  });

  it('--full opens every remaining wave, waiting or not', async () => {
    const w = open();
    await rollout(w, { succeeded: 1, queued: 9 });
    await w.rollouts.setWave(ID, 0, { index: 0, of: 4 }, T0);
    const result = await promote(w.deps, ID, OPS, true);
    expect(result.message).toBe(`${ID} promoted by ${OPS}: every remaining wave opens now`);
    expect(result.event?.detail).toEqual({ full: true, wave: 4, ended: null });
    expect((await w.rollouts.get(ID))?.wave).toEqual({ index: 3, of: 4, full: true, seq: 2 });
  });

  it('is refused, writing nothing, when the waves moved since it read them', async () => {
    const w = open();
    await rollout(w, { succeeded: 1 });
    await w.rollouts.setWave(ID, 0, { index: 0, waitingFor: 'approval', of: 2 }, T0);
    const stale = await w.rollouts.get(ID);
    // A scheduler tick writes the waves between the command's read and its write.
    await w.rollouts.setWave(ID, 1, { index: 0, waitingFor: 'approval', of: 3 }, T0);
    const get = vi.spyOn(w.rollouts, 'get').mockResolvedValueOnce(stale);
    const err = await refusal(promote(w.deps, ID, OPS, false));
    get.mockRestore();
    expect(err.message).toBe(`rollout ${ID} is running: its waves moved meanwhile; look again`);
    expect((await w.rollouts.get(ID))?.wave).toEqual({ index: 0, waitingFor: 'approval', of: 3, seq: 2 });
    expect(await w.events.history(ID)).toEqual([]);
  });
});

describe('retry', () => {
  it('moves exactly the chosen outcomes to waiting_retry, due now: retries +1, attempts kept', async () => {
    const w = open();
    const ids = await rollout(w, {
      failed: 2,
      timed_out: 1,
      not_alive: 1,
      error: 1,
      rejected: 1,
      succeeded: 1,
      queued: 1,
      pending: 1,
    });
    const before = new Map((await records(w)).map((r) => [r.id, r]));
    w.clock.set(T0 + 10 * MINUTE);
    const result = await retry(w.deps, ID, OPS, ['failed', 'timed_out']);
    expect(result.message).toBe(`${ID}: 3 Collectors get one new attempt (failed, timed_out)`);
    expect(result.event).toMatchObject({
      type: 'rollout.retried',
      actor: OPS,
      detail: { retried: 3, byState: { failed: 2, timed_out: 1 } },
    });
    const chosen = [...(ids.failed ?? []), ...(ids.timed_out ?? [])];
    for (const r of await records(w)) {
      const was = before.get(r.id) as CollectorRecord;
      if (chosen.includes(r.id)) {
        expect(r).toMatchObject({
          state: 'waiting_retry',
          retries: 1,
          attempts: was.attempts,
          admissions: was.admissions,
          nextAttemptAt: T0 + 10 * MINUTE,
          message: `retried by ${OPS}`,
        });
        expect(r.finishedAt).toBeUndefined();
      } else expect(r).toEqual(was);
    }
    expect(await w.store.counts(ID)).toEqual({
      waiting_retry: 3,
      not_alive: 1,
      error: 1,
      rejected: 1,
      succeeded: 1,
      queued: 1,
      pending: 1,
    });
    expect((await w.store.indexed(ID, 'retries')).map(Number).sort((a, b) => a - b)).toEqual(chosen);
    await expectConsistent(w);

    // The rest of the outcomes; a second retry of one that failed again counts on.
    const rest = await retry(w.deps, ID, OPS, ['not_alive', 'error', 'rejected', 'failed']);
    expect(rest.event?.detail).toEqual({
      retried: 3,
      byState: { not_alive: 1, error: 1, rejected: 1, failed: 0 },
    });
    expect(await w.store.counts(ID)).toEqual({ waiting_retry: 6, succeeded: 1, queued: 1, pending: 1 });
    expect((await records(w)).filter((r) => r.state === 'waiting_retry').every((r) => r.retries === 1)).toBe(
      true,
    );
  });

  it('refuses a choice that is not an outcome it can retry, moving nothing', async () => {
    const w = open();
    await rollout(w, { failed: 1, succeeded: 1 });
    const counts = await w.store.counts(ID);
    for (const [only, expected] of [
      [[], `--only takes ${RETRYABLE_STATES.join(', ')}`],
      [['succeeded'], `--only takes ${RETRYABLE_STATES.join(', ')}; not succeeded`],
      [['failed', 'queued', 'skipped'], `--only takes ${RETRYABLE_STATES.join(', ')}; not queued, skipped`],
      [['aborted'], `--only takes ${RETRYABLE_STATES.join(', ')}; not aborted`],
    ] as [CollectorState[], string][]) {
      const err = await refusal(retry(w.deps, ID, OPS, only));
      expect(err).toMatchObject({ kind: 'invalid', code: 'FLEET_ERR_CONTROL_INVALID', message: expected });
    }
    expect(await w.store.counts(ID)).toEqual(counts);
    expect(await w.events.history(ID)).toEqual([]);
    // Every retryable state is a state; and only those are taken.
    for (const s of RETRYABLE_STATES) expect(COLLECTOR_STATES).toContain(s);
  });

  it('in a halted or paused rollout: the retried wait for the resume; refused when aborted or superseded', async () => {
    const w = open();
    await rollout(w, { failed: 2, queued: 1 });
    await pause(w.deps, ID, OPS);
    const paused = await retry(w.deps, ID, OPS, ['failed']);
    expect(paused.message).toBe(
      `${ID}: 2 Collectors get one new attempt (failed); they start once the rollout is resumed`,
    );
    expect(await w.store.counts(ID)).toEqual({ waiting_retry: 2, queued: 1 });
    await abort(w.deps, ID, OPS);
    // The retried ones waited: aborted with the queued one.
    expect(await w.store.counts(ID)).toEqual({ aborted: 3 });
    const err = await refusal(retry(w.deps, ID, OPS, ['failed']));
    expect(err.message).toBe(`rollout ${ID} is aborted: its Collectors can no longer be retried`);

    await rollout(w, { timed_out: 1 }, `${POLICY}@19.480-1`, 10);
    await w.rollouts.move({ id: `${POLICY}@19.480-1`, phase: 'running' }, 'supersede', T0);
    expect((await refusal(retry(w.deps, `${POLICY}@19.480-1`, OPS, ['timed_out']))).kind).toBe('conflict');
    expect(await w.store.counts(`${POLICY}@19.480-1`)).toEqual({ timed_out: 1 });
  });
});

describe('forget', () => {
  /** Every key under the test's prefix that names the rollout. */
  async function keysOf(id: string): Promise<string[]> {
    return (await ctx.redis.keys(`${ctx.prefix}*`)).filter((k) => k.includes(id)).sort();
  }

  it('is refused while the rollout runs, or while one of its Collectors holds a slot', async () => {
    const w = open();
    const ids = await rollout(w, { succeeded: 1, pending: 1 });
    for (const phase of ['running', 'paused', 'halted'] as const) {
      if (phase !== 'running')
        expect(
          await w.rollouts.move({ id: ID, phase: 'running' }, phase === 'paused' ? 'pause' : 'halt', T0, 'x'),
        ).toBe(phase);
      const err = await refusal(forget(w.deps, ID));
      expect(err.kind).toBe('conflict');
      expect(err.message).toBe(
        `rollout ${ID} is ${phase}: only a converged, aborted, superseded or orphaned (policy removed) rollout can be forgotten`,
      );
      if (phase !== 'running') expect(await w.rollouts.move({ id: ID, phase }, 'resume', T0)).toBe('running');
    }
    // Aborted, but a task is still under way.
    await abort(w.deps, ID, OPS);
    const busy = await refusal(forget(w.deps, ID));
    expect(busy.message).toBe(
      `rollout ${ID} is aborted: 1 of its Collectors still have a task under way; wait for them`,
    );
    expect(await w.rollouts.get(ID)).toBeDefined();
    // Its task ends: now it may go.
    const pending = (await w.store.get(ID, ids.pending?.[0] as number)) as CollectorRecord;
    const t = transition(pending, { type: 'succeeded', status: 2 }, { now: T0, settings: SETTINGS });
    if (!t.ok) throw new Error(t.reason);
    await w.store.apply(ID, [t.move]);
    expect((await forget(w.deps, ID)).message).toBe(`forgot ${ID} and the records of its 2 Collectors`);
  });

  it('removes every key of the rollout, its history, and its entry in the policies hash; others stay', async () => {
    const w = open();
    const OTHER = 'windows@19.470-4';
    await rollout(w, { queued: 2, waiting_retry: 1, succeeded: 1, failed: 1 });
    await rollout(w, { queued: 1 }, OTHER, 50);
    // A Collector admitted in wave 1 that succeeded, with a duration: wave counts and durations exist.
    let r = (await w.store.get(ID, 1)) as CollectorRecord;
    for (const event of [
      { type: 'admit', wave: 0 },
      { type: 'send' },
      { type: 'created', taskId: 't1', requestTime: T0, createdBy: 'test' },
      { type: 'succeeded', status: 2 },
    ] as const) {
      const t = transition(r, event, { now: T0, settings: SETTINGS });
      if (!t.ok) throw new Error(t.reason);
      await w.store.apply(ID, [t.move], { limit: 10, durationMs: 1_000 });
      r = t.move.next;
    }
    await w.rollouts.follow(ID, true);
    await pause(w.deps, ID, OPS);
    await abort(w.deps, ID, OPS);
    const k = w.keys;
    const present = await keysOf(ID);
    for (const key of [
      k.rollout(ID),
      k.results(ID),
      k.counts(ID),
      k.waveCounts(ID),
      k.durations(ID),
      k.history(ID),
    ])
      expect(present).toContain(key);
    const otherKeys = await keysOf(OTHER);
    const outboxBefore = await outbox(w);

    const result = await forget(w.deps, ID);
    expect(result).toEqual({ rollout: ID, message: `forgot ${ID} and the records of its 5 Collectors` });
    expect(await keysOf(ID)).toEqual([]);
    for (const key of [k.queued(ID), k.retries(ID), k.reconciling(ID)])
      expect(await ctx.redis.exists(key)).toBe(0);
    expect(await ctx.redis.zscore(k.rollouts, ID)).toBeNull();
    expect(await ctx.redis.sismember(k.followed, ID)).toBe(0);
    expect(await ctx.redis.hget(k.policies, POLICY)).toBeNull();
    expect(await w.rollouts.get(ID)).toBeUndefined();
    expect(await w.events.history(ID)).toEqual([]);
    // The other rollout is untouched; the outbox keeps what was sent (forget records nothing).
    expect(await keysOf(OTHER)).toEqual(otherKeys);
    expect(await ctx.redis.hget(k.policies, 'windows')).toBe(OTHER);
    expect((await w.rollouts.list()).map((x) => x.id)).toEqual([OTHER]);
    expect(await outbox(w)).toEqual(outboxBefore);
    // Forgotten: nothing to forget any more.
    expect((await refusal(forget(w.deps, ID))).kind).toBe('not_found');
  });

  it('leaves the policies hash alone when the rollout is no longer its policy’s current one', async () => {
    const w = open();
    await rollout(w, { succeeded: 1 });
    await rollout(w, { queued: 1 }, `${POLICY}@19.480-1`, 10);
    expect(await w.rollouts.move({ id: ID, phase: 'running' }, 'supersede', T0)).toBe('superseded');
    await forget(w.deps, ID);
    expect(await ctx.redis.hget(w.keys.policies, POLICY)).toBe(`${POLICY}@19.480-1`);
    expect(await w.rollouts.get(`${POLICY}@19.480-1`)).toBeDefined();
  });

  it('forgets a converged rollout and one whose policy was removed', async () => {
    const w = open();
    await rollout(w, { succeeded: 2 });
    expect(await w.rollouts.move({ id: ID, phase: 'running' }, 'converge', T0)).toBe('converged');
    expect((await forget(w.deps, ID)).message).toBe(`forgot ${ID} and the records of its 2 Collectors`);
    const orphan = 'gone@19.470-4';
    await rollout(w, { failed: 1 }, orphan);
    expect(
      await w.rollouts.move({ id: orphan, phase: 'running' }, 'pause', T0, PAUSE_REASONS.policyRemoved),
    ).toBe('paused');
    await forget(w.deps, orphan);
    expect(await keysOf(orphan)).toEqual([]);
  });
});

describe('history and the outbox', () => {
  it('records each action once, in order, with its actor and source operator; the outbox gets each with its id', async () => {
    const w = open();
    await rollout(w, { failed: 1, queued: 2 });
    await w.rollouts.setWave(ID, 0, { index: 0, waitingFor: 'approval', of: 2 }, T0);
    const results: ControlResult[] = [];
    const step = async (minutes: number, action: () => Promise<ControlResult>) => {
      w.clock.set(T0 + minutes * MINUTE);
      const result = await action();
      results.push(result);
      return result;
    };
    await step(1, () => pause(w.deps, ID, 'a@h1'));
    // A refused action records nothing.
    await expect(pause(w.deps, ID, 'a@h1')).rejects.toBeInstanceOf(ControlError);
    await step(2, () => resume(w.deps, ID, 'b@h2'));
    await step(3, () => promote(w.deps, ID, 'c@h3', false));
    await step(4, () => retry(w.deps, ID, 'd@h4', ['failed']));
    await step(5, () => abort(w.deps, ID, 'e@h5'));
    await step(6, () => resume(w.deps, ID, 'f@h6'));

    const history = await w.events.history(ID);
    expect(history.map((e) => [e.type, e.actor, e.source, e.at])).toEqual([
      ['rollout.paused', 'a@h1', 'operator', T0 + MINUTE],
      ['rollout.resumed', 'b@h2', 'operator', T0 + 2 * MINUTE],
      ['rollout.promoted', 'c@h3', 'operator', T0 + 3 * MINUTE],
      ['rollout.retried', 'd@h4', 'operator', T0 + 4 * MINUTE],
      ['rollout.aborted', 'e@h5', 'operator', T0 + 5 * MINUTE],
      ['rollout.resumed', 'f@h6', 'operator', T0 + 6 * MINUTE],
    ]);
    for (const e of history) expect(e).toMatchObject({ rollout: ID, policy: POLICY, build: BUILD });
    // What each action returned is what was recorded.
    expect(history).toEqual(results.map((r) => r.event));
    expect(new Set(history.map((e) => e.id)).size).toBe(history.length);
    expect(history.map((e) => e.message)).toEqual(results.map((r) => r.message));

    // The outbox: each event once, in the same order, its id beside it.
    const sent = await outbox(w);
    expect(sent).toEqual(history.map((event) => ({ id: event.id, event })));
    // A limit reads the newest.
    expect((await w.events.history(ID, 2)).map((e) => e.type)).toEqual([
      'rollout.aborted',
      'rollout.resumed',
    ]);
  });

  it('keeps each rollout’s history apart; the outbox holds them all', async () => {
    const w = open();
    await rollout(w, { queued: 1 });
    await rollout(w, { queued: 1 }, 'windows@19.470-4', 10);
    await pause(w.deps, ID, OPS);
    await pause(w.deps, 'windows@19.470-4', OPS);
    await resume(w.deps, ID, OPS);
    expect((await w.events.history(ID)).map((e) => e.type)).toEqual(['rollout.paused', 'rollout.resumed']);
    expect((await w.events.history('windows@19.470-4')).map((e) => e.type)).toEqual(['rollout.paused']);
    expect((await outbox(w)).map((o) => `${o.event.rollout} ${o.event.type}`)).toEqual([
      `${ID} rollout.paused`,
      'windows@19.470-4 rollout.paused',
      `${ID} rollout.resumed`,
    ]);
  });
});

describe('abort of a one-off that never started', () => {
  const NAME = 'upgrade-20250106090000-abc123';
  const record = (looks: number) =>
    JSON.stringify({
      policy: { target: '19.999-1', select: { ids: [3] } },
      createdBy: OPS,
      createdAt: T0,
      notStarted: {
        reason: 'the service does not offer build 19.999-1',
        since: T0,
        looks,
        nextLookAt: T0 + looks,
      },
    });

  it('removes it though the daemon rewrites it meanwhile (a look that still cannot start it)', async () => {
    const w = open();
    await ctx.redis.hset(w.keys.oneOffs, NAME, record(1));
    // The daemon looks again between each of the first two reads and their removal.
    const oneOffs = w.rollouts.oneOffs;
    const remove = oneOffs.removeUnstarted.bind(oneOffs);
    let looks = 1;
    const tried = vi.spyOn(oneOffs, 'removeUnstarted').mockImplementation(async (name, json) => {
      if (looks < 3) await ctx.redis.hset(w.keys.oneOffs, NAME, record(++looks));
      return remove(name, json);
    });
    const result = await abort(w.deps, NAME, OPS);
    expect(result.message).toMatch(
      /^removed one-off .*not started: the service does not offer build 19\.999-1; nothing of it ran/,
    );
    expect(tried).toHaveBeenCalledTimes(3);
    expect(await ctx.redis.hget(w.keys.oneOffs, NAME)).toBeNull();
  });

  it('says it changed when it started meanwhile, and removes nothing', async () => {
    const w = open();
    await ctx.redis.hset(w.keys.oneOffs, NAME, record(1));
    const oneOffs = w.rollouts.oneOffs;
    const remove = oneOffs.removeUnstarted.bind(oneOffs);
    vi.spyOn(oneOffs, 'removeUnstarted').mockImplementation(async (name, json) => {
      // The daemon starts it: its policy now has a rollout.
      await ctx.redis.hset(w.keys.policies, NAME, `${NAME}@19.999-1`);
      return remove(name, json);
    });
    await expect(abort(w.deps, NAME, OPS)).rejects.toThrow(
      /changed meanwhile \(it may have started\); look again/,
    );
    expect(await ctx.redis.hget(w.keys.oneOffs, NAME)).toBe(record(1));
  });
});
