/**
 * `forget` guarded (issue 20) on the real Redis: refused while a rollback request waits for the
 * daemon (atomically, in the forget script too) and while the rollout's policy is enabled and
 * still selects its build; `force` overrides both. Its quarantined cohorts are kept under its id:
 * a rollout started again under it starts with them held.
 */
import { describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { SLOT_STATES } from '../../../src/rollout/collector/index.js';
import { PAUSE_REASONS } from '../../../src/rollout/life/index.js';
import {
  type ControlDeps,
  ControlError,
  forget,
  type PolicyView,
  requestRollback,
} from '../../../src/rollout/operator/index.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS as SETTINGS } from '../../support/rollout-settings.js';
import { newRecord, seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();
const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const POLICY = 'linux-fleet';
const BUILD = '19.470-4';
const ID = `${POLICY}@${BUILD}`;

async function world(policies?: readonly PolicyView[]) {
  const state = createState(ctx.redis, ctx.prefix);
  const clock = createManualClock(T0);
  const deps: ControlDeps = {
    rollouts: state.rollouts,
    store: state.store,
    clock,
    keys: state.keys,
    ...(policies ? { policies: () => policies } : {}),
  };
  const { rollout } = await state.rollouts.start({
    policy: POLICY,
    target: 'latest',
    build: BUILD,
    maxInFlight: 10,
    settings: SETTINGS,
    now: T0,
  });
  for (const [i, s] of (['succeeded', 'failed', 'quarantined'] as const).entries())
    await seedCollector(
      { store: state.store, rolloutId: ID, settings: SETTINGS, now: T0 },
      newRecord({ id: i + 1, name: `c-${i + 1}`, collectorVersion: '19.400-5' }, BUILD, T0),
      s,
    );
  const quarantined = [{ cohort: 'osName=Linux', reason: '3 of 4 failed', at: T0, held: 1 }];
  await state.rollouts.write(rollout, { patch: { quarantined } }, T0);
  await state.rollouts.move({ id: ID, phase: 'running' }, 'converge', T0);
  return { state, deps };
}

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

describe('guarded forget', () => {
  it('is refused while a rollback request waits; --force drops it with the rollout', async () => {
    const { state, deps } = await world();
    await requestRollback(deps, ID, 'ops', ['failed']);
    const err = await refusal(forget(deps, ID));
    expect(err.kind).toBe('conflict');
    expect(err.message).toMatch(/rollback request the daemon has not carried out yet.*--force/);
    // The store's atomic step refuses it too (a request filed between the check and the forget).
    const rollout = await state.rollouts.get(ID);
    expect(await state.rollouts.forget(rollout as never, SLOT_STATES)).toEqual({ kind: 'pending' });
    expect(await state.rollouts.get(ID)).toBeDefined();
    const forced = await forget(deps, ID, { force: true });
    expect(forced.message).toMatch(/^forgot linux-fleet@19\.470-4 and the records of its 3 Collectors/);
    expect(await state.rollouts.get(ID)).toBeUndefined();
    expect(await state.rollouts.rollbacks.of(ID)).toBeUndefined();
  });

  it('is refused while its policy is enabled and still selects its build; not once disabled or removed', async () => {
    const enabled = { name: POLICY, enabled: true, target: 'latest' };
    const { deps } = await world([enabled]);
    const err = await refusal(forget(deps, ID));
    expect(err.kind).toBe('conflict');
    expect(err.message).toMatch(
      /its policy linux-fleet still selects: the policy is enabled and selects 19\.470-4/,
    );
    expect(err.message).toMatch(/--force/);
    // A pinned target that names the build selects it too, and one the policy files lack does not.
    await refusal(forget({ ...deps, policies: () => [{ ...enabled, target: BUILD }] }, ID));
    await refusal(forget({ ...deps, policies: () => undefined }, ID));
    expect((await forget({ ...deps, policies: () => [] }, ID)).message).toMatch(/^forgot /);
  });

  it('lets an orphaned rollout go even when the policy files cannot be read', async () => {
    const { state, deps } = await world();
    const orphan = 'gone@19.470-4';
    await state.rollouts.start({
      policy: 'gone',
      target: 'latest',
      build: BUILD,
      maxInFlight: 10,
      settings: SETTINGS,
      now: T0,
    });
    expect(
      await state.rollouts.move({ id: orphan, phase: 'running' }, 'pause', T0, PAUSE_REASONS.policyRemoved),
    ).toBe('paused');
    expect((await forget({ ...deps, policies: () => undefined }, orphan)).message).toMatch(/^forgot /);
  });

  it('keeps the quarantined cohorts: the same id started again holds them, with an event', async () => {
    const { state, deps } = await world([{ name: POLICY, enabled: true, target: 'latest' }]);
    const done = await forget(deps, ID, { force: true });
    expect(done.message).toMatch(
      /its quarantined cohort \(osName=Linux\) stays held if the rollout starts again/,
    );
    expect(await state.rollouts.get(ID)).toBeUndefined();
    const { rollout } = await state.rollouts.start({
      policy: POLICY,
      target: 'latest',
      build: BUILD,
      maxInFlight: 10,
      settings: SETTINGS,
      now: T0 + 1,
      tell: true,
    });
    expect(rollout.quarantined?.map((q) => q.cohort)).toEqual(['osName=Linux']);
    expect(rollout.quarantined?.[0]?.reason).toMatch(/^kept when this rollout was forgotten.*3 of 4 failed/);
    const history = await state.events.history(ID);
    expect(history.map((e) => e.type)).toEqual(['rollout.started', 'cohort.quarantined']);
    // Given back once: the tombstone is gone, the record holds them now.
    expect(await ctx.redis.hget(state.keys.forgotten, ID)).toBeNull();
  });
});
