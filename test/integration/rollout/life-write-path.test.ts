/**
 * One write path for a rollout's life (src/rollout/life/rollout-store.ts `write`), through the
 * real path: a phase move and the event that tells of it are one atomic Redis step (one Lua
 * script), so a process that dies right after the halt (before it did anything else: before this
 * change, the event was a second round trip after the move) leaves `rollout.halted` in the history
 * and the outbox, and the next process delivers its webhook. The tick's `reopen` is recorded in
 * the history too.
 */
import { describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createManualClock } from '../../../src/lib/clock.js';
import type { Webhook } from '../../../src/notify/read-webhooks.js';
import { FailureGate } from '../../../src/policy/failure-gate.js';
import { Policy } from '../../../src/policy/schema.js';
import { newRecord } from '../../../src/rollout/collector/index.js';
import { tripFailureGate } from '../../../src/rollout/gates/index.js';
import { RolloutDraft, type RolloutStore } from '../../../src/rollout/life/index.js';
import { settingsOf } from '../../../src/rollout/tick/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { BUILD, collector, MINUTE, useSchedulerHarness } from '../../support/scheduler-harness.js';
import { seedCollector } from '../../support/seed-collector.js';
import { useNotifier } from '../../support/use-notifier.js';
import { waitUntil } from '../../support/wait-until.js';

const notify = useNotifier();
const T0 = Date.UTC(2026, 10, 2, 9, 0, 0);
const POLICY = Policy.parse({ name: 'web', failureGate: { failed: { max: 1 } } });
const GATE = FailureGate.parse({ failed: { max: 1 } });

/** A rollout with two failed Collectors and one that succeeded: its gate (failed max 1) trips. */
async function failingRollout(state: ReturnType<typeof createState>) {
  const { rollout } = await state.rollouts.start({
    policy: 'web',
    target: 'latest',
    build: BUILD,
    maxInFlight: 10,
    settings: settingsOf(POLICY),
    now: T0,
  });
  const seed = { store: state.store, rolloutId: rollout.id, settings: rollout.settings, now: T0 };
  for (const [id, outcome] of [
    [1, 'failed'],
    [2, 'failed'],
    [3, 'succeeded'],
  ] as const)
    await seedCollector(seed, newRecord(collector(id), BUILD, T0), outcome);
  return rollout;
}

/** The rollout store, dying (throwing) right after its next write reached Redis. */
function dyingAfterWrite(rollouts: RolloutStore): RolloutStore {
  return new Proxy(rollouts, {
    get(target, name, receiver) {
      if (name !== 'write') return Reflect.get(target, name, receiver);
      return async (...args: Parameters<RolloutStore['write']>) => {
        await target.write(...args);
        throw new Error('process killed');
      };
    },
  });
}

describe('one write path for a rollout’s life', () => {
  it('a process killed right after the halt loses neither rollout.halted in the history nor its webhook', async () => {
    const state = createState(notify.redis.redis, notify.redis.prefix);
    // The daemon that dies had its notifier (its webhook's consumer group exists from then on).
    const webhooks: Webhook[] = [
      {
        name: 'ops',
        url: notify.receiver.url,
        events: '*',
        format: 'json',
        timeoutMs: 2000,
        retry: { initialMs: 50, maxMs: 200, giveUpAfterMs: 86_400_000 },
      },
    ];
    await (await notify.start({ webhooks })).stop();
    const rollout = await failingRollout(state);
    const counts = await state.store.counts(rollout.id);
    const clock = createManualClock(T0 + MINUTE);
    const deps = {
      rollouts: dyingAfterWrite(state.rollouts),
      store: state.store,
      clock,
      logger: captureLogger('warn').logger,
    };
    await expect(tripFailureGate(deps, new RolloutDraft(rollout), GATE, counts, clock.now())).rejects.toThrow(
      'process killed',
    );
    expect((await state.rollouts.get(rollout.id))?.phase).toBe('halted');
    const history = await state.events.history(rollout.id);
    expect(history.map((e) => e.type)).toEqual(['rollout.halted']);
    expect(history[0]).toMatchObject({
      source: 'gate',
      detail: { onTrip: 'pause' },
      message: expect.stringContaining(`${rollout.id} halted by its failure gate: `),
    });
    // The next process delivers what the dead one recorded.
    await notify.start({ webhooks });
    await waitUntil(async () => notify.receiver.delivered().length > 0, 10_000, 'the halted webhook');
    const body = JSON.parse(notify.receiver.requests[0]?.body ?? '{}');
    expect(body).toMatchObject({ type: 'rollout.halted', rollout: rollout.id, id: history[0]?.id });
  });
});

describe('the tick records every move of the phase', () => {
  const harness = useSchedulerHarness();

  it('a converged rollout that has work again is reopened, and the history says so', async () => {
    const s = await harness({ maxInFlight: 5 });
    for (const id of [1, 2]) s.fleet.set(id, collector(id));
    await s.tick();
    await s.finish(1, 'failed');
    await s.finish(2);
    s.fleet.clear();
    s.clock.advance(10 * MINUTE);
    await s.tick();
    s.clock.advance(10 * MINUTE);
    await s.tick();
    expect((await s.rollout()).phase).toBe('converged');
    await s.drive(1, [{ type: 'operator_retry', message: 'retried by ops' }]);
    await s.tick();
    expect((await s.rollout()).phase).toBe('running');
    const types = (await s.eventTypes()).filter((t) => t.startsWith('rollout.'));
    expect(types.slice(-2)).toEqual(['rollout.converged', 'rollout.reopened']);
    const reopened = (await s.events.history(await s.rolloutId())).find((e) => e.type === 'rollout.reopened');
    expect(reopened?.message).toMatch(/runs again: 1 Collector to move/);
  });
});
