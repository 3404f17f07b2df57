/**
 * RolloutStore on a real Redis: a rollout (policy × build) is created once and found again,
 * a policy's new build replaces its current rollout, phases and counters, and the list of
 * observed durations is capped, newest first.
 */
import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/rollout/keys.js';
import { type RolloutSettings, RolloutStore, rolloutId } from '../../../src/rollout/rollout-store.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const T0 = 1_736_150_400_000;
const SETTINGS: RolloutSettings = {
  pollInitialMs: 60_000,
  pollMaxMs: 300_000,
  pollJitter: 0.2,
  taskTimeoutMs: 35 * 60_000,
  notAliveAttempts: 5,
  notAliveBackoffMs: 600_000,
};

function store() {
  return new RolloutStore(ctx.redis, createKeys(ctx.prefix));
}

describe('rolloutId', () => {
  it('is policy@build', () => {
    expect(rolloutId('linux-fleet', '19.470-4')).toBe('linux-fleet@19.470-4');
  });
});

describe('RolloutStore.ensure', () => {
  it('creates a rollout once, with every field, and finds the same one later', async () => {
    const s = store();
    const first = await s.ensure('linux-fleet', 'latest', '19.470-4', 50, SETTINGS, T0);
    expect(first.replaced).toBeUndefined();
    expect(first.rollout).toEqual({
      id: 'linux-fleet@19.470-4',
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      phase: 'running',
      startedAt: T0,
      updatedAt: T0,
      convergedAt: undefined,
      maxInFlight: 50,
      settings: SETTINGS,
      statusReads: 0,
      createRequests: 0,
      scans: 0,
      lastScanAt: undefined,
      haltReason: undefined,
    });
    await s.countRequest(first.rollout.id, 'statusReads');
    const again = await s.ensure('linux-fleet', 'latest', '19.470-4', 50, SETTINGS, T0 + 60_000);
    expect(again.replaced).toBeUndefined();
    expect(again.rollout.startedAt).toBe(T0);
    expect(again.rollout.statusReads).toBe(1);
    expect((await s.list()).map((r) => r.id)).toEqual(['linux-fleet@19.470-4']);
    expect(await s.currentOf('linux-fleet')).toBe('linux-fleet@19.470-4');
  });

  it('takes the policy’s edited limits and settings into an existing rollout', async () => {
    const s = store();
    await s.ensure('linux-fleet', 'latest', '19.470-4', 50, SETTINGS, T0);
    const edited = { ...SETTINGS, pollInitialMs: 30_000, notAliveAttempts: 2 };
    const { rollout } = await s.ensure('linux-fleet', '19.470-4', '19.470-4', 10, edited, T0 + 1);
    expect(rollout).toMatchObject({ maxInFlight: 10, settings: edited, target: '19.470-4', startedAt: T0 });
  });

  it('returns the replaced id when the policy’s build changes, and lists newest first', async () => {
    const s = store();
    await s.ensure('linux-fleet', 'latest', '19.450-12', 50, SETTINGS, T0);
    const next = await s.ensure('linux-fleet', 'latest', '19.470-4', 50, SETTINGS, T0 + 1000);
    expect(next.replaced).toBe('linux-fleet@19.450-12');
    expect(next.rollout.id).toBe('linux-fleet@19.470-4');
    expect(await s.currentOf('linux-fleet')).toBe('linux-fleet@19.470-4');
    // The next round finds nothing replaced.
    expect(
      (await s.ensure('linux-fleet', 'latest', '19.470-4', 50, SETTINGS, T0 + 2000)).replaced,
    ).toBeUndefined();
    expect((await s.list()).map((r) => r.id)).toEqual(['linux-fleet@19.470-4', 'linux-fleet@19.450-12']);
    // The old rollout is kept as it was.
    expect((await s.get('linux-fleet@19.450-12'))?.build).toBe('19.450-12');
  });

  it('keeps policies apart', async () => {
    const s = store();
    await s.ensure('a', 'latest', '19.470-4', 5, SETTINGS, T0);
    const b = await s.ensure('b', 'latest', '19.470-4', 5, SETTINGS, T0 + 1);
    expect(b.replaced).toBeUndefined();
    expect(await s.currentOf('a')).toBe('a@19.470-4');
    expect(await s.currentOf('b')).toBe('b@19.470-4');
    expect(await s.currentOf('c')).toBeUndefined();
  });

  // Regression: creation used to be HSETNX of `id`, then a MULTI for the rest; a process killed
  // between the two left a rollout that no later ensure completed, missing from list() for good.
  it('completes a rollout whose creation was cut short by a crash (only its id written)', async () => {
    const s = store();
    const keys = createKeys(ctx.prefix);
    await ctx.redis.hset(keys.rollout('linux-fleet@19.470-4'), 'id', 'linux-fleet@19.470-4');
    const { rollout } = await s.ensure('linux-fleet', 'latest', '19.470-4', 50, SETTINGS, T0);
    expect(rollout).toMatchObject({
      policy: 'linux-fleet',
      build: '19.470-4',
      phase: 'running',
      startedAt: T0,
      settings: SETTINGS,
    });
    expect((await s.list()).map((r) => r.id)).toEqual(['linux-fleet@19.470-4']);
  });
});

describe('RolloutStore: phases, counters, scans', () => {
  it('setPhase records the phase, the time and the halt reason; converged stamps convergedAt', async () => {
    const s = store();
    const { rollout } = await s.ensure('p', 'latest', '19.470-4', 5, SETTINGS, T0);
    await s.setPhase(rollout.id, 'halted', T0 + 10, '3 of 4 outcomes failed');
    expect(await s.get(rollout.id)).toMatchObject({
      phase: 'halted',
      updatedAt: T0 + 10,
      haltReason: '3 of 4 outcomes failed',
      convergedAt: undefined,
    });
    await s.setPhase(rollout.id, 'converged', T0 + 20);
    expect(await s.get(rollout.id)).toMatchObject({
      phase: 'converged',
      updatedAt: T0 + 20,
      convergedAt: T0 + 20,
      haltReason: undefined,
    });
    await s.setPhase(rollout.id, 'superseded', T0 + 30);
    expect((await s.get(rollout.id))?.phase).toBe('superseded');
  });

  it('counts requests and scans', async () => {
    const s = store();
    const { rollout } = await s.ensure('p', 'latest', '19.470-4', 5, SETTINGS, T0);
    await Promise.all([
      ...Array.from({ length: 7 }, () => s.countRequest(rollout.id, 'statusReads')),
      ...Array.from({ length: 3 }, () => s.countRequest(rollout.id, 'createRequests')),
    ]);
    await s.noteScan(rollout.id, T0 + 5);
    await s.noteScan(rollout.id, T0 + 9);
    expect(await s.get(rollout.id)).toMatchObject({
      statusReads: 7,
      createRequests: 3,
      scans: 2,
      lastScanAt: T0 + 9,
    });
  });

  it('get of an unknown rollout is undefined', async () => {
    expect(await store().get('nobody@1.0-1')).toBeUndefined();
    expect(await store().list()).toEqual([]);
  });
});

describe('RolloutStore: durations', () => {
  it('keeps the newest 500, newest first, rounded to whole ms', async () => {
    const s = store();
    const id = 'p@19.470-4';
    for (let i = 1; i <= 510; i++) await s.recordDuration(id, i * 1000 + 0.4);
    const d = await s.durations(id);
    expect(d).toHaveLength(500);
    expect(d[0]).toBe(510_000);
    expect(d.at(-1)).toBe(11_000);
    expect(await s.durations('q@19.470-4')).toEqual([]);
  });
});
