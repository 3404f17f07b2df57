/**
 * Approvals by several people (src/rollout/operator/approve.ts) on a real Redis: a wave waiting
 * for `{ approvers: 2, from: [alice, release] }` takes alice, refuses alice again (conflict) and
 * someone outside `from` (forbidden), takes a member of the group `release`, and opens; each
 * approval is a `rollout.approved` event in the history and the outbox; `promote` refuses to skip
 * such a wait; nothing awaiting approval is a conflict.
 */
import { describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { approvalsOf, approve, ControlError, promote } from '../../../src/rollout/index.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS } from '../../support/rollout-settings.js';

const ctx = useTestRedis();
const T0 = Date.UTC(2026, 10, 28, 9, 0, 0);

async function waiting() {
  const state = createState(ctx.redis, ctx.prefix);
  const clock = createManualClock(T0);
  const { rollout } = await state.rollouts.start({
    policy: 'web',
    target: '19.470-4',
    build: '19.470-4',
    maxInFlight: 10,
    settings: TEST_SETTINGS,
    now: T0,
  });
  await state.rollouts.setWave(
    rollout,
    0,
    {
      index: 0,
      of: 3,
      waitingFor: 'approval',
      approval: { approvers: 2, from: ['alice', 'release'], by: [] },
    },
    T0,
  );
  const deps = { rollouts: state.rollouts, store: state.store, clock, keys: state.keys };
  return { state, deps, id: rollout.id, clock };
}

const refusal = async (work: Promise<unknown>) => {
  try {
    await work;
  } catch (err) {
    if (err instanceof ControlError) return [err.kind, err.message];
  }
  return undefined;
};

describe('approve', () => {
  it('opens the wave after two distinct approvers of `from`, refusing a second click and an outsider', async () => {
    const { state, deps, id, clock } = await waiting();
    expect(await refusal(promote(deps, id, 'alice', false))).toEqual([
      'conflict',
      expect.stringContaining('wave 2 awaits 2 approvals'),
    ]);
    const first = await approve(deps, id, { name: 'alice' });
    expect(first.message).toBe(
      `${id}: wave 2 of 3 approved by alice (1 of 2); 1 more approval needed: \`fleet-upgrade approve ${id}\``,
    );
    const half = await state.rollouts.get(id);
    expect(half && approvalsOf(half)).toEqual({
      approvedBy: ['alice'],
      needed: 1,
      from: ['alice', 'release'],
    });
    clock.advance(60_000);
    expect(await refusal(approve(deps, id, { name: 'alice' }))).toEqual([
      'conflict',
      `alice approved wave 2 of ${id} already (at 2026-11-28T09:00:00.000Z): a second approval must come from another person`,
    ]);
    expect(await refusal(approve(deps, id, { name: 'mallory', groups: ['interns'] }))).toEqual([
      'forbidden',
      `mallory may not approve wave 2 of ${id}: its approvers are alice, release`,
    ]);
    const second = await approve(deps, id, { name: 'bob', groups: ['release'] });
    expect(second.message).toBe(`${id}: wave 2 of 3 approved by alice and bob: it opens now`);
    const open = await state.rollouts.get(id);
    expect(open?.wave).toMatchObject({ index: 1, of: 3 });
    expect(open?.wave.waitingFor).toBeUndefined();
    const told = (await state.events.history(id)).filter((e) => e.type === 'rollout.approved');
    expect(told.map((e) => [e.actor, e.detail])).toEqual([
      ['alice', { wave: 2, approvers: ['alice'], needed: 1 }],
      ['bob', { wave: 2, approvers: ['alice', 'bob'], needed: 0 }],
    ]);
    const outbox = await ctx.redis.xrange(state.keys.outbox, '-', '+');
    expect(outbox.filter(([, f]) => f.join(' ').includes('rollout.approved'))).toHaveLength(2);
    expect(await refusal(approve(deps, id, { name: 'carol' }))).toEqual([
      'conflict',
      `rollout ${id} is running: nothing awaits approval`,
    ]);
  });
});
