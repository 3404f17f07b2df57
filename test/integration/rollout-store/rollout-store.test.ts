/**
 * RolloutStore on a real Redis: a rollout (policy × build) is started once and found again, a
 * policy's new build replaces its current rollout, phases move only along the phase table
 * (rollout-phase.ts) and only from the phase the caller read (a compare-and-set), the waves'
 * progress is a compare-and-set on its seq, an operator's resume records the gate's baselines
 * (over the rollout and per wave), and a tick reads every current rollout with its counts and its
 * policy's slots in one round trip.
 */
import { describe, expect, it, vi } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import {
  type CollectorEvent,
  newRecord,
  parseWaveCounts,
  transition,
} from '../../../src/rollout/collector/index.js';
import { policyOf, rolloutId } from '../../../src/rollout/index.js';
import {
  decodeRollout,
  PAUSE_REASONS,
  type RolloutRecord,
  type RolloutSettings,
} from '../../../src/rollout/life/index.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS } from '../../support/rollout-settings.js';

const ctx = useTestRedis();
const T0 = 1_736_150_400_000;
const SETTINGS: RolloutSettings = { ...TEST_SETTINGS, notAliveAttempts: 5, notAliveUntilMs: 86_400_000 };

/** Whether a write wrote. */
async function wrote(written: Promise<unknown>) {
  return (await written) !== undefined;
}

/** The phase a write left, or undefined when it wrote nothing. */
async function phaseOf(written: Promise<string | { rollout: RolloutRecord } | undefined>) {
  const w = await written;
  return typeof w === 'object' ? w.rollout.phase : w;
}

function open() {
  return createState(ctx.redis, ctx.prefix);
}

/** Discovers Collectors of a rollout and drives each through `events` (every move written). */
async function collectors(rolloutId: string, ids: number[], events: CollectorEvent[]) {
  const { store } = open();
  await store.discover(
    rolloutId,
    ids.map((id) => newRecord({ id, name: `c-${id}`, collectorVersion: '19.400-5' }, '19.470-4', T0)),
  );
  for (const id of ids) {
    for (const event of events) {
      const t = transition(await store.get(rolloutId, id), event, { now: T0, settings: SETTINGS });
      if (!t.ok) throw new Error(t.reason);
      expect(await store.apply(rolloutId, [t.move], { limit: 100 })).toEqual(['written']);
    }
  }
}

describe('rolloutId and policyOf', () => {
  it('a rollout id is policy@build, and gives its policy back', () => {
    expect(rolloutId('linux-fleet', '19.470-4')).toBe('linux-fleet@19.470-4');
    expect(policyOf('linux-fleet@19.470-4')).toBe('linux-fleet');
    expect(policyOf('no-build')).toBe('no-build');
  });
});

describe('RolloutStore.start', () => {
  it('creates a rollout once, with every field, and finds the same one later', async () => {
    const { rollouts, store } = open();
    const first = await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    expect(first.replaced).toBeUndefined();
    // Every field with a value; optional ones without a value read back as undefined (toEqual
    // treats an undefined field as absent, so optional fields added later need no change here).
    const expected: RolloutRecord = {
      id: 'linux-fleet@19.470-4',
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      phase: 'running',
      startedAt: T0,
      updatedAt: T0,
      maxInFlight: 50,
      settings: SETTINGS,
      statusReads: 0,
      createRequests: 0,
      scans: 0,
      wave: { index: 0, seq: 0 },
      canaries: 0,
    };
    expect(first.rollout).toEqual(expected);
    expect(await rollouts.get(first.rollout.id)).toEqual(expected);
    for (const field of [
      'convergedAt',
      'haltReason',
      'pauseReason',
      'abortReason',
      'releasedAt',
      'gateBaseline',
    ] as const)
      expect(first.rollout[field], field).toBeUndefined();
    await store.apply(first.rollout.id, [], { counters: { statusReads: 1 } });
    // Started again (the next tick, another leader): nothing is rewritten, not even the limits.
    const again = await rollouts.start({
      policy: 'linux-fleet',
      target: '19.470-4',
      build: '19.470-4',
      maxInFlight: 10,
      settings: SETTINGS,
      now: T0 + 60_000,
    });
    expect(again.replaced).toBeUndefined();
    expect(again.rollout).toEqual({ ...expected, statusReads: 1 });
    expect((await rollouts.list()).map((r) => r.id)).toEqual(['linux-fleet@19.470-4']);
    expect(await rollouts.currentOf('linux-fleet')).toBe('linux-fleet@19.470-4');
  });

  it('update takes the policy’s edited limits, target and settings into an existing rollout', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    const edited: RolloutSettings = { ...SETTINGS, pollInitialMs: 30_000, notAliveAttempts: 2 };
    delete edited.notAliveUntilMs;
    await rollouts.write(
      rollout,
      { patch: { maxInFlight: 10, target: '19.470-4', settings: edited } },
      T0 + 1,
    );
    expect(await rollouts.get(rollout.id)).toStrictEqual({
      ...rollout,
      maxInFlight: 10,
      target: '19.470-4',
      settings: edited,
    });
  });

  it('returns the replaced id when the policy’s build changes, and lists newest first', async () => {
    const { rollouts } = open();
    await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    const next = await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0 + 1000,
    });
    expect(next.replaced).toBe('linux-fleet@19.450-12');
    expect(next.rollout.id).toBe('linux-fleet@19.470-4');
    expect(await rollouts.currentOf('linux-fleet')).toBe('linux-fleet@19.470-4');
    // The next round finds nothing replaced.
    expect(
      (
        await rollouts.start({
          policy: 'linux-fleet',
          target: 'latest',
          build: '19.470-4',
          maxInFlight: 50,
          settings: SETTINGS,
          now: T0 + 2000,
        })
      ).replaced,
    ).toBeUndefined();
    expect((await rollouts.list()).map((r) => r.id)).toEqual([
      'linux-fleet@19.470-4',
      'linux-fleet@19.450-12',
    ]);
    // The old rollout is kept as it was.
    expect(await rollouts.get('linux-fleet@19.450-12')).toMatchObject({ build: '19.450-12', startedAt: T0 });
    // The old build becoming the target again makes its rollout current again.
    const back = await rollouts.start({
      policy: 'linux-fleet',
      target: '19.450-12',
      build: '19.450-12',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0 + 3000,
    });
    expect(back.replaced).toBe('linux-fleet@19.470-4');
    expect(back.rollout.startedAt).toBe(T0);
  });

  it('keeps policies apart', async () => {
    const { rollouts } = open();
    await rollouts.start({
      policy: 'a',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    const b = await rollouts.start({
      policy: 'b',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0 + 1,
    });
    expect(b.replaced).toBeUndefined();
    expect(await rollouts.currentOf('a')).toBe('a@19.470-4');
    expect(await rollouts.currentOf('b')).toBe('b@19.470-4');
    expect(await rollouts.currentOf('c')).toBeUndefined();
    expect(await rollouts.currentIds()).toEqual(
      new Map([
        ['a', 'a@19.470-4'],
        ['b', 'b@19.470-4'],
      ]),
    );
  });

  // Regression: creation used to be HSETNX of `id`, then a MULTI for the rest; a process killed
  // between the two left a rollout that no later start completed, missing from list() for good.
  it('completes a rollout whose creation was cut short by a crash (only its id written)', async () => {
    const { rollouts, keys } = open();
    await ctx.redis.hset(keys.rollout('linux-fleet@19.470-4'), 'id', 'linux-fleet@19.470-4');
    expect(await rollouts.get('linux-fleet@19.470-4')).toBeUndefined();
    const { rollout } = await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    expect(rollout).toMatchObject({
      policy: 'linux-fleet',
      build: '19.470-4',
      phase: 'running',
      startedAt: T0,
      maxInFlight: 50,
      settings: SETTINGS,
    });
    expect((await rollouts.list()).map((r) => r.id)).toEqual(['linux-fleet@19.470-4']);
    expect(await rollouts.currentOf('linux-fleet')).toBe('linux-fleet@19.470-4');
  });

  it('keeps the admission order of Collectors discovered before the rollout was written', async () => {
    const { rollouts, store } = open();
    await collectors('linux-fleet@19.470-4', [5, 3], []);
    await rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 50,
      settings: SETTINGS,
      now: T0,
    });
    await collectors('linux-fleet@19.470-4', [1], []);
    expect(await store.indexed('linux-fleet@19.470-4', 'queued')).toEqual([5, 3, 1]);
  });
});

describe('RolloutStore.move: the phase table', () => {
  it('moves along the table, stamping updatedAt; converge stamps convergedAt', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect(await phaseOf(rollouts.move(rollout, 'converge', T0 + 10))).toBe('converged');
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'converged',
      updatedAt: T0 + 10,
      convergedAt: T0 + 10,
    });
    expect(await phaseOf(rollouts.move({ id: rollout.id, phase: 'converged' }, 'reopen', T0 + 20))).toBe(
      'running',
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({ phase: 'running', updatedAt: T0 + 20 });
    expect(await phaseOf(rollouts.move({ id: rollout.id, phase: 'running' }, 'supersede', T0 + 30))).toBe(
      'superseded',
    );
    expect((await rollouts.get(rollout.id))?.phase).toBe('superseded');
    expect(await phaseOf(rollouts.move({ id: rollout.id, phase: 'superseded' }, 'restart', T0 + 40))).toBe(
      'running',
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({ phase: 'running', updatedAt: T0 + 40 });
  });

  it('a move that does not apply to the phase writes nothing and returns undefined', async () => {
    const { rollouts, keys } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    const before = await ctx.redis.hgetall(keys.rollout(rollout.id));
    for (const event of ['resume', 'unpause', 'reopen', 'restart'] as const) {
      expect(await phaseOf(rollouts.move(rollout, event, T0 + 10, 'why'))).toBeUndefined();
    }
    expect(
      await phaseOf(rollouts.move({ id: rollout.id, phase: 'superseded' }, 'halt', T0 + 10, 'x')),
    ).toBeUndefined();
    expect(
      await phaseOf(rollouts.move({ id: rollout.id, phase: 'halted' }, 'pause', T0 + 10, 'x')),
    ).toBeUndefined();
    expect(await ctx.redis.hgetall(keys.rollout(rollout.id))).toEqual(before);
  });

  it('is a compare-and-set: a move from a phase that is no longer stored writes nothing', async () => {
    const { rollouts, keys } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    // An operator pauses it while a tick that read `running` still holds its copy.
    expect(
      await phaseOf(
        rollouts.move(rollout, 'pause', T0 + 1, {
          reason: 'by ops',
          patch: { pausedBy: 'ops', pausedAt: T0 + 1 },
        }),
      ),
    ).toBe('paused');
    const before = await ctx.redis.hgetall(keys.rollout(rollout.id));
    // The tick's converge and halt apply to `running` but no longer to what is stored.
    expect(await phaseOf(rollouts.move(rollout, 'converge', T0 + 2))).toBeUndefined();
    expect(
      await phaseOf(rollouts.move(rollout, 'halt', T0 + 2, { reason: 'gate', patch: { holding: 'x' } })),
    ).toBeUndefined();
    expect(await phaseOf(rollouts.move(rollout, 'abort', T0 + 2, 'gate'))).toBeUndefined();
    expect(await ctx.redis.hgetall(keys.rollout(rollout.id))).toEqual(before);
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'paused',
      pauseReason: 'by ops',
      pausedBy: 'ops',
      pausedAt: T0 + 1,
      updatedAt: T0 + 1,
    });
    // Read again, the move applies.
    expect(await phaseOf(rollouts.move({ id: rollout.id, phase: 'paused' }, 'abort', T0 + 3, 'by ops'))).toBe(
      'aborted',
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({ phase: 'aborted', abortReason: 'by ops' });
  });

  it('of two concurrent moves from the same phase read, exactly one is written', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    for (let round = 0; round < 10; round++) {
      const read = { id: rollout.id, phase: 'running' as const };
      const results = await Promise.all([
        phaseOf(rollouts.move(read, 'pause', T0 + round, 'by ops')),
        phaseOf(rollouts.move(read, 'halt', T0 + round, 'the gate')),
        phaseOf(rollouts.move(read, 'abort', T0 + round, 'by ops')),
      ]);
      const written = results.filter((r) => r !== undefined);
      expect(written).toHaveLength(1);
      const stored = await rollouts.get(rollout.id);
      expect(stored?.phase).toBe(written[0]);
      if (stored?.phase === 'aborted') break;
      expect(
        await phaseOf(
          rollouts.move({ id: rollout.id, phase: stored?.phase ?? 'running' }, 'resume', T0 + round),
        ),
      ).toBe('running');
    }
  });

  it('writes the extra fields with the move, and a move on a missing rollout writes nothing', async () => {
    const { rollouts, keys } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect(
      await phaseOf(
        rollouts.move(rollout, 'pause', T0 + 5, {
          reason: 'by ops',
          patch: { pausedBy: 'ops@host', pausedAt: T0 + 5 },
        }),
      ),
    ).toBe('paused');
    expect(await rollouts.get(rollout.id)).toMatchObject({ pausedBy: 'ops@host', pausedAt: T0 + 5 });
    // Going on clears who paused it.
    expect(await phaseOf(rollouts.move({ id: rollout.id, phase: 'paused' }, 'resume', T0 + 6))).toBe(
      'running',
    );
    expect((await rollouts.get(rollout.id))?.pausedBy).toBeUndefined();
    expect(
      await phaseOf(rollouts.move({ id: 'nobody@1.0-1', phase: 'running' }, 'pause', T0)),
    ).toBeUndefined();
    expect(await ctx.redis.exists(keys.rollout('nobody@1.0-1'))).toBe(0);
  });

  it('aborted is for good: nothing moves an aborted rollout', async () => {
    const { rollouts, keys } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect(await phaseOf(rollouts.move(rollout, 'abort', T0 + 1, 'the failure gate: too many failed'))).toBe(
      'aborted',
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'aborted',
      abortReason: 'the failure gate: too many failed',
      updatedAt: T0 + 1,
    });
    const before = await ctx.redis.hgetall(keys.rollout(rollout.id));
    const aborted = { id: rollout.id, phase: 'aborted' as const };
    for (const event of [
      'converge',
      'reopen',
      'halt',
      'resume',
      'pause',
      'unpause',
      'abort',
      'supersede',
      'restart',
    ] as const)
      expect(await phaseOf(rollouts.move(aborted, event, T0 + 2)), event).toBeUndefined();
    expect(await wrote(rollouts.resume(rollout.id, {}, T0 + 2))).toBe(false);
    expect(await ctx.redis.hgetall(keys.rollout(rollout.id))).toEqual(before);
  });

  it('paused carries a pauseReason, halted a haltReason, and running clears both', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect(await phaseOf(rollouts.move(rollout, 'pause', T0 + 1, PAUSE_REASONS.policyDisabled))).toBe(
      'paused',
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'paused',
      pauseReason: 'policy disabled',
      haltReason: undefined,
    });
    expect(await phaseOf(rollouts.move({ id: rollout.id, phase: 'paused' }, 'unpause', T0 + 2))).toBe(
      'running',
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'running',
      pauseReason: undefined,
      haltReason: undefined,
    });
    expect(
      await phaseOf(
        rollouts.move({ id: rollout.id, phase: 'running' }, 'halt', T0 + 3, '3 of 4 outcomes failed'),
      ),
    ).toBe('halted');
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'halted',
      haltReason: '3 of 4 outcomes failed',
      updatedAt: T0 + 3,
      convergedAt: undefined,
    });
    expect(await wrote(rollouts.resume(rollout.id, {}, T0 + 4))).toBe(true);
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'running',
      pauseReason: undefined,
      haltReason: undefined,
    });
  });
});

describe('RolloutStore.resume', () => {
  it('resumes only a halted rollout, recording the counts as the gate’s baseline', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect(await wrote(rollouts.resume(rollout.id, { failed: 9 }, T0 + 1))).toBe(false);
    expect(await rollouts.get(rollout.id)).toStrictEqual(rollout);
    expect(await wrote(rollouts.resume('nobody@1.0-1', {}, T0 + 1))).toBe(false);
    expect(await rollouts.get('nobody@1.0-1')).toBeUndefined();

    await phaseOf(rollouts.move(rollout, 'halt', T0 + 2, '3 of 4 outcomes failed'));
    expect(await wrote(rollouts.resume(rollout.id, { failed: 3, succeeded: 1, queued: 40 }, T0 + 3))).toBe(
      true,
    );
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'running',
      updatedAt: T0 + 3,
      haltReason: undefined,
      gateBaseline: { failed: 3, succeeded: 1, queued: 40 },
    });
    // Running again: a second resume does nothing, the baseline stays.
    expect(await wrote(rollouts.resume(rollout.id, { failed: 5 }, T0 + 4))).toBe(false);
    expect((await rollouts.get(rollout.id))?.gateBaseline).toEqual({ failed: 3, succeeded: 1, queued: 40 });
  });

  it('resumes a paused rollout too, recording both baselines: over the rollout and per wave', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await phaseOf(
      rollouts.move(rollout, 'pause', T0 + 1, {
        reason: 'by ops',
        patch: { pausedBy: 'ops', pausedAt: T0 + 1 },
      }),
    );
    const waves = [{ succeeded: 2, failed: 1 }, {}, { timed_out: 4 }];
    expect(
      await wrote(rollouts.resume(rollout.id, { succeeded: 2, failed: 1, timed_out: 4 }, T0 + 2, waves)),
    ).toBe(true);
    expect(await rollouts.get(rollout.id)).toMatchObject({
      phase: 'running',
      updatedAt: T0 + 2,
      pauseReason: undefined,
      pausedBy: undefined,
      gateBaseline: { succeeded: 2, failed: 1, timed_out: 4 },
      waveBaseline: waves,
    });
    // Without per-wave counts the per-wave baseline is empty, not left as it was.
    await phaseOf(rollouts.move({ id: rollout.id, phase: 'running' }, 'halt', T0 + 3, 'gate'));
    expect(await wrote(rollouts.resume(rollout.id, { failed: 9 }, T0 + 4))).toBe(true);
    expect(await rollouts.get(rollout.id)).toMatchObject({ gateBaseline: { failed: 9 }, waveBaseline: [] });
  });
});

describe('RolloutStore.setWave and write', () => {
  it('writes the waves’ progress only when its seq is the one read, and counts the seq up', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect(rollout.wave).toEqual({ index: 0, seq: 0 });
    expect(await wrote(rollouts.setWave(rollout.id, 1, { index: 1 }, T0))).toBe(false);
    expect((await rollouts.get(rollout.id))?.wave).toEqual({ index: 0, seq: 0 });
    expect(
      await wrote(
        rollouts.setWave(rollout.id, 0, { index: 0, waitingFor: 'bake', bakeUntil: T0 + 60_000, of: 3 }, T0),
      ),
    ).toBe(true);
    expect((await rollouts.get(rollout.id))?.wave).toEqual({
      index: 0,
      waitingFor: 'bake',
      bakeUntil: T0 + 60_000,
      of: 3,
      seq: 1,
    });
    // A writer that read seq 0 lost: nothing written.
    expect(await wrote(rollouts.setWave(rollout.id, 0, { index: 2, full: true }, T0))).toBe(false);
    expect(await wrote(rollouts.setWave(rollout.id, 1, { index: 1, of: 3 }, T0))).toBe(true);
    expect((await rollouts.get(rollout.id))?.wave).toEqual({ index: 1, of: 3, seq: 2 });
  });

  it('of concurrent writers that read the same seq, exactly one writes', async () => {
    const { rollouts } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await wrote(rollouts.setWave(rollout.id, 0, { index: 0, waitingFor: 'approval' }, T0));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        wrote(rollouts.setWave(rollout.id, 1, { index: 1 + (i % 2), full: i % 2 === 1 }, T0)),
      ),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect((await rollouts.get(rollout.id))?.wave.seq).toBe(2);
  });

  it('a patch writes typed fields that read back as the record’s, and null clears one', async () => {
    const { rollouts, keys } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await rollouts.write(rollout, { patch: { releasedAt: T0 + 9, policyHash: 'abc123' } }, T0 + 9);
    expect(await rollouts.get(rollout.id)).toMatchObject({ releasedAt: T0 + 9, policyHash: 'abc123' });
    await rollouts.write(rollout, { patch: { releasedAt: null } }, T0 + 10);
    expect((await rollouts.get(rollout.id))?.releasedAt).toBeUndefined();
    expect(await ctx.redis.hexists(keys.rollout(rollout.id), 'releasedAt')).toBe(0);
    // A write that is not a move leaves updatedAt (the last move's time) alone.
    expect((await rollouts.get(rollout.id))?.updatedAt).toBe(T0);
  });
});

describe('parseWaveCounts', () => {
  it('turns `<wave>:<state>` into counts per wave, filling missing waves, leaving out zeros and junk', () => {
    expect(
      parseWaveCounts({
        '0:succeeded': '3',
        '0:failed': '1',
        '2:queued': '0',
        '2:timed_out': '2',
        '1:admitted': '0',
      }),
    ).toEqual([{ succeeded: 3, failed: 1 }, {}, { timed_out: 2 }]);
    expect(parseWaveCounts({})).toEqual([]);
    expect(
      parseWaveCounts({ 'x:failed': '1', '-1:failed': '1', '1.5:failed': '2', '0:succeeded': '1' }),
    ).toEqual([{ succeeded: 1 }]);
  });
});

describe('RolloutStore: reading the current rollouts', () => {
  it('readCurrent returns each policy’s current rollout with its counts and its policy’s slots held', async () => {
    const { rollouts } = open();
    await rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0 + 1,
    });
    await rollouts.start({
      policy: 'windows',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 3,
      settings: SETTINGS,
      now: T0 + 2,
    });
    await rollouts.start({
      policy: 'empty',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 3,
      settings: SETTINGS,
      now: T0 + 3,
    });
    // The older linux rollout still holds two slots of its policy; the current one holds one.
    await collectors('linux@19.450-12', [1, 2], [{ type: 'admit' }]);
    await collectors('linux@19.470-4', [1], [{ type: 'admit' }, { type: 'send' }]);
    await collectors('linux@19.470-4', [2, 3], []);
    await collectors('windows@19.470-4', [7], [{ type: 'supersede', message: 'test' }]);

    const current = await rollouts.readCurrent();
    expect([...current.keys()].sort()).toEqual(['empty', 'linux', 'windows']);
    expect(current.get('linux')).toEqual({
      rollout: await rollouts.get('linux@19.470-4'),
      counts: { creating: 1, queued: 2 },
      slotsHeld: 3,
    });
    expect(current.get('windows')).toEqual({
      rollout: await rollouts.get('windows@19.470-4'),
      counts: { skipped: 1 },
      slotsHeld: 0,
    });
    expect(current.get('empty')).toMatchObject({ counts: {}, slotsHeld: 0 });
  });

  it('readMany reads the rollouts asked for in one round trip, in order, undefined for unknown ones', async () => {
    const { rollouts, redis } = open();
    await rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await rollouts.start({
      policy: 'windows',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await collectors('linux@19.450-12', [1], [{ type: 'admit' }]);
    await collectors('windows@19.470-4', [1, 2], []);
    const pipeline = vi.spyOn(redis, 'pipeline');
    const many = await rollouts.readMany(['windows@19.470-4', 'gone@1.0-1', 'linux@19.450-12']);
    expect(pipeline).toHaveBeenCalledTimes(1);
    pipeline.mockRestore();
    expect(many).toEqual([
      { rollout: await rollouts.get('windows@19.470-4'), counts: { queued: 2 }, slotsHeld: 0 },
      undefined,
      { rollout: await rollouts.get('linux@19.450-12'), counts: { admitted: 1 }, slotsHeld: 1 },
    ]);
    expect(await rollouts.readMany([])).toEqual([]);
  });

  it('readTick also reads the rollouts still followed, until they are no longer followed', async () => {
    const { rollouts } = open();
    await rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.450-12',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    await collectors('linux@19.450-12', [1], [{ type: 'admit' }, { type: 'send' }]);
    await rollouts.start({
      policy: 'linux',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0 + 1,
    });
    expect((await rollouts.readTick()).followed).toEqual([]);
    await rollouts.follow('linux@19.450-12', true);
    await rollouts.follow('gone@1.0-1', true);
    const tick = await rollouts.readTick();
    expect([...tick.current.keys()]).toEqual(['linux']);
    expect(tick.current.get('linux')?.rollout.id).toBe('linux@19.470-4');
    expect(tick.followed).toEqual([
      { rollout: await rollouts.get('linux@19.450-12'), counts: { creating: 1 }, slotsHeld: 1 },
    ]);
    await rollouts.follow('linux@19.450-12', false);
    expect((await rollouts.readTick()).followed).toEqual([]);
    expect(await rollouts.readCurrent()).toEqual(tick.current);
  });
});

describe('RolloutStore: settings, counters, scans, first poll', () => {
  it('settings and firstPollMs round-trip; scans are counted with the last scan’s time', async () => {
    const { rollouts, store } = open();
    const { rollout } = await rollouts.start({
      policy: 'p',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 5,
      settings: SETTINGS,
      now: T0,
    });
    expect((await rollouts.get(rollout.id))?.settings).toStrictEqual(SETTINGS);
    await rollouts.write(rollout, { patch: { firstPollMs: Math.round(42_123.6) } }, T0);
    await Promise.all([
      ...Array.from({ length: 7 }, () => store.apply(rollout.id, [], { counters: { statusReads: 1 } })),
      ...Array.from({ length: 3 }, () => store.apply(rollout.id, [], { counters: { createRequests: 1 } })),
    ]);
    await rollouts.write(rollout, { add: { scans: 1 }, patch: { lastScanAt: T0 + 5 } }, T0 + 5);
    await rollouts.write(rollout, { add: { scans: 1 }, patch: { lastScanAt: T0 + 9 } }, T0 + 9);
    expect(await rollouts.get(rollout.id)).toMatchObject({
      firstPollMs: 42_124,
      statusReads: 7,
      createRequests: 3,
      scans: 2,
      lastScanAt: T0 + 9,
    });
  });

  it('get of an unknown rollout is undefined; list of none is empty; durations of none are empty', async () => {
    const { rollouts } = open();
    expect(await rollouts.get('nobody@1.0-1')).toBeUndefined();
    expect(await rollouts.list()).toEqual([]);
    expect(await rollouts.durations('nobody@1.0-1')).toEqual([]);
    expect(decodeRollout({})).toBeUndefined();
    expect(decodeRollout({ id: 'x@1', queueSeq: '4' })).toBeUndefined();
  });
});
