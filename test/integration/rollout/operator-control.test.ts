/**
 * Operator control through the scheduler (real Redis, real queue, the listing stubbed, a manual
 * clock): waves that bake and await approval, promote, pause and abort acting on the next tick,
 * gates per outcome type per wave with onTrip, canaries chosen by host name, schedules, freezes,
 * the window fit and a percentage in-flight limit. Every action and what the scheduler did is in
 * the rollout's history.
 */
import { describe, expect, it } from 'vitest';
import * as control from '../../../src/rollout/operator/index.js';
import { collector, MINUTE, useSchedulerHarness } from '../../support/scheduler-harness.js';

const setup = useSchedulerHarness();
const OPERATOR = 'ops@test';

/** Lists `n` Collectors with ids from `first`. */
function list(s: Awaited<ReturnType<typeof setup>>, first: number, n: number, patch = {}) {
  for (let id = first; id < first + n; id++) s.fleet.set(id, collector(id, patch));
}

describe('waves that bake and await approval', () => {
  it('the next wave waits for the bake, then for promote; each step is in the history', async () => {
    const s = await setup({ maxInFlight: 10, waves: [{ size: 2, bake: '30m', approval: 'manual' }, '100%'] });
    list(s, 1, 5);
    await s.tick();
    expect(await s.slots()).toEqual([1, 2]);
    await s.finish(1);
    await s.finish(2);
    s.clock.advance(1000);
    await s.tick();
    let r = await s.rollout();
    expect(r.wave).toMatchObject({ index: 0, waitingFor: 'bake', of: 2 });
    expect(r.wave.bakeUntil).toBe(s.clock.now() + 30 * MINUTE);
    expect(await s.counts()).toEqual({ succeeded: 2, queued: 3 });

    // The bake ends: now the approval holds the next wave.
    s.clock.advance(31 * MINUTE);
    await s.tick();
    r = await s.rollout();
    expect(r.wave).toMatchObject({ index: 0, waitingFor: 'approval' });
    expect(await s.counts()).toEqual({ succeeded: 2, queued: 3 });

    const promoted = await control.promote(s.control, r.id, OPERATOR, false);
    expect(promoted.message).toMatch(/wave 2 of 2 opens now/);
    await s.tick();
    expect(await s.counts()).toEqual({ succeeded: 2, admitted: 3 });
    expect(await s.eventTypes()).toEqual([
      'rollout.started',
      'wave.completed',
      'rollout.baking',
      'rollout.awaiting_approval',
      'rollout.promoted',
    ]);
    const history = await s.events.history(r.id);
    expect(history.find((e) => e.type === 'rollout.promoted')).toMatchObject({
      source: 'operator',
      actor: OPERATOR,
    });
    expect(history.find((e) => e.type === 'rollout.awaiting_approval')?.message).toMatch(
      /fleet-upgrade promote/,
    );
  });

  it('promote cuts a bake short; with nothing waiting it is refused; --full opens every wave', async () => {
    const s = await setup({ maxInFlight: 10, waves: [{ size: 1, bake: '2h' }, 2, '100%'] });
    list(s, 1, 6);
    await s.tick();
    const id = await s.rolloutId();
    await expect(control.promote(s.control, id, OPERATOR, false)).rejects.toMatchObject({ kind: 'conflict' });
    await s.finish(1);
    s.clock.advance(1000);
    await s.tick();
    expect((await s.rollout()).wave.waitingFor).toBe('bake');
    await control.promote(s.control, id, OPERATOR, false);
    await s.tick();
    expect(await s.counts()).toEqual({ succeeded: 1, admitted: 1, queued: 4 });
    await control.promote(s.control, id, OPERATOR, true);
    await s.tick();
    expect(await s.counts()).toEqual({ succeeded: 1, admitted: 5 });
  });
});

describe('pause and abort', () => {
  it('pause holds first attempts and retries; resume lets them go', async () => {
    const s = await setup({ maxInFlight: 5 });
    list(s, 1, 2);
    await s.tick();
    const id = await s.rolloutId();
    await s.seed(10, 'waiting_retry');
    await control.pause(s.control, id, OPERATOR);
    await s.drive(1, [{ type: 'withdraw', message: 'paused before the create' }]);
    s.clock.advance(MINUTE);
    await s.tick();
    expect(await s.counts()).toEqual({ admitted: 1, waiting_retry: 2 });
    expect(await s.rollout()).toMatchObject({ phase: 'paused', pausedBy: OPERATOR });
    const resumed = await control.resume(s.control, id, OPERATOR);
    expect(resumed.message).toMatch(/released the pause by ops@test/);
    await s.tick();
    expect(await s.counts()).toEqual({ admitted: 3 });
  });

  it('abort ends the waiting Collectors aborted, starts nothing more, and holds the policy on a newer build', async () => {
    const s = await setup({ maxInFlight: 2 });
    list(s, 1, 5);
    await s.tick();
    const id = await s.rolloutId();
    const aborted = await control.abort(s.control, id, OPERATOR);
    expect(aborted.message).toMatch(/3 Collectors that had not started end aborted/);
    await s.tick();
    expect(await s.counts()).toEqual({ admitted: 2, aborted: 3 });
    // A newer build: the policy starts nothing until it changes or the abort is resumed.
    s.targets.push({ version: '19.480-1', latest: true });
    (s.targets[1] as { latest: boolean }).latest = false;
    s.clock.advance(2 * MINUTE);
    await s.tick();
    expect(await s.rolloutId()).toBe(id);
    const released = await control.resume(s.control, id, OPERATOR);
    expect(released.message).toMatch(/stays aborted; its policy is released/);
    await s.tick();
    expect(await s.rolloutId()).toBe('linux-fleet@19.480-1');
    expect((await s.rollouts.get(id))?.phase).toBe('aborted');
  });
});

describe('the failure gate per outcome type, per wave', () => {
  it('a timed_out maximum trips in the first wave and pauses (halts) the rollout', async () => {
    const s = await setup({
      maxInFlight: 10,
      waves: [3, '100%'],
      failureGate: { timed_out: { max: 0 } },
    });
    list(s, 1, 8);
    await s.tick();
    await s.finish(1);
    await s.finish(2, 'timed_out');
    s.clock.advance(1000);
    await s.tick();
    const r = await s.rollout();
    expect(r.phase).toBe('halted');
    expect(r.haltReason).toMatch(/timed_out: 1 Collector, above the gate's max of 0/);
    expect(await s.eventTypes()).toContain('rollout.halted');
  });

  it('onTrip: abort aborts the rollout; not_alive counts only where named; minSample holds a ratio', async () => {
    const s = await setup({
      maxInFlight: 10,
      failureGate: { failed: { ratio: 0.3, minSample: 4 }, onTrip: 'abort' },
    });
    list(s, 1, 10);
    await s.tick();
    await s.finish(1, 'failed');
    await s.finish(2, 'failed');
    await s.finish(3);
    await s.drive(4, [{ type: 'send' }, { type: 'not_alive', message: 'down' }]);
    s.clock.advance(1000);
    await s.tick();
    // 2 failed of 3 outcomes: under minSample 4, not judged.
    expect((await s.rollout()).phase).toBe('running');
    await s.finish(5);
    s.clock.advance(1000);
    await s.tick();
    const r = await s.rollout();
    expect(r.phase).toBe('aborted');
    expect(r.abortReason).toMatch(/failed: 2 of 4 outcomes \(50%\)/);
    expect((await s.events.history(r.id)).find((e) => e.type === 'rollout.aborted')?.source).toBe('gate');
  });
});

describe('canaries, schedules, freezes, windows, percentages', () => {
  it('a first wave that selects canaries by host name admits them first, whatever their ids', async () => {
    const s = await setup({ maxInFlight: 10, waves: [{ select: { hostName: 'canary-*' } }, '100%'] });
    list(s, 1, 6);
    s.fleet.set(50, collector(50, { hostName: 'canary-a' }));
    s.fleet.set(60, collector(60, { hostName: 'canary-b' }));
    await s.tick();
    expect(await s.slots()).toEqual([50, 60]);
    expect((await s.rollout()).canaries).toBe(2);
  });

  it('nothing starts before the schedule, nor in a freeze; after a schedule that ends with abort, the rollout is aborted', async () => {
    const start = new Date(Date.UTC(2025, 0, 6, 10, 0, 0)).toISOString();
    const end = new Date(Date.UTC(2025, 0, 6, 12, 0, 0)).toISOString();
    const freezeFrom = new Date(Date.UTC(2025, 0, 6, 10, 30, 0)).toISOString();
    const freezeTo = new Date(Date.UTC(2025, 0, 6, 11, 0, 0)).toISOString();
    const s = await setup({
      maxInFlight: 1,
      schedule: { start, end, endBehavior: 'abort' },
      freeze: [{ start: freezeFrom, end: freezeTo, reason: 'test freeze' }],
    });
    list(s, 1, 4);
    await s.tick(); // 09:00
    expect(await s.counts()).toEqual({ queued: 4 });
    expect((await s.rollout()).holding).toMatch(/2025-01-06 10:00/);
    s.clock.set(Date.UTC(2025, 0, 6, 10, 5, 0));
    await s.tick();
    expect(await s.slots()).toEqual([1]);
    await s.finish(1);
    s.clock.set(Date.UTC(2025, 0, 6, 10, 40, 0));
    await s.tick();
    expect(await s.slots()).toEqual([]);
    expect((await s.rollout()).holding).toMatch(/test freeze/);
    s.clock.set(Date.UTC(2025, 0, 6, 12, 1, 0));
    await s.tick();
    expect((await s.rollout()).phase).toBe('aborted');
    expect(await s.counts()).toEqual({ succeeded: 1, aborted: 3 });
  });

  it('holds back a Collector whose upgrade would not end before its window closes', async () => {
    // Open 08:00-09:30 UTC; at 09:00 a 35-minute upgrade (taskTimeout) does not fit; at 08:00 it does.
    const s = await setup({ maxInFlight: 5, windows: [{ start: '08:00', end: '09:30' }] });
    list(s, 1, 2);
    await s.tick(); // 09:00
    expect(await s.counts()).toEqual({ queued: 2 });
    expect((await s.rollout()).holding).toMatch(/close before an upgrade would end/);
    s.clock.set(Date.UTC(2025, 0, 7, 8, 0, 0));
    await s.tick();
    expect(await s.slots()).toEqual([1, 2]);
    expect((await s.rollout()).holding).toBeUndefined();
  });

  it('maxInFlight as a percentage of the Collectors found', async () => {
    const s = await setup({ maxInFlight: '20%' });
    list(s, 1, 20);
    await s.tick();
    expect((await s.rollout()).maxInFlight).toBe(4);
    expect(await s.slots()).toHaveLength(4);
  });
});
