/**
 * Issue 27, part 1: outcomes are told by the one writer. The Collectors' store tells every move
 * it writes into a settled state to the daemon's metrics (fleet_upgrade_results_total), whichever
 * path made it; before, each caller told them by hand, and two paths forgot: an operator's abort
 * of the Collectors that wait, and a known issue's hold at discovery. For each path below, the
 * results counter of the rollout equals the store's counts of its settled states.
 */
import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../../src/metrics/create-metrics.js';
import { isSettled, transition } from '../../../src/rollout/collector/index.js';
import { abort } from '../../../src/rollout/operator/index.js';
import {
  BUILD,
  collector,
  MINUTE,
  NEWER,
  type SchedulerHarness,
  useSchedulerHarness,
} from '../../support/scheduler-harness.js';

const setup = useSchedulerHarness();

/** fleet_upgrade_results_total of one rollout, by outcome. */
async function counted(s: SchedulerHarness, rolloutId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const v of (await s.metrics.results.get()).values)
    if (v.labels.rollout === rolloutId && v.value > 0) out[String(v.labels.outcome)] = v.value;
  return out;
}

/** The store's counts of the rollout's settled states. */
async function settled(s: SchedulerHarness, rolloutId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [state, n] of Object.entries(await s.store.counts(rolloutId)))
    if (n && isSettled(state as never)) out[state] = n;
  return out;
}

describe('the results counter equals the store’s settled states, by every path', () => {
  it('an operator aborts the Collectors that wait', async () => {
    const s = await setup({ maxInFlight: 1 });
    for (const id of [1, 2, 3]) s.fleet.set(id, collector(id));
    await s.tick();
    const id = await s.rolloutId();
    await abort(s.control, id, 'ops@host', 'bad build');
    expect(await settled(s, id)).toEqual({ aborted: 2 });
    expect(await counted(s, id)).toEqual({ aborted: 2 });
  });

  it('a known issue holds Collectors at discovery (skip and manual)', async () => {
    const s = await setup({
      knownIssues: [
        { build: BUILD, select: { osName: 'Mac OS X' }, action: 'skip', note: 'stops until restarted' },
        { build: BUILD, select: { ids: [12] }, action: 'manual', note: 'needs its account re-entered' },
      ],
    });
    s.fleet.set(11, collector(11, { osName: 'Mac OS X' }));
    s.fleet.set(12, collector(12));
    s.fleet.set(13, collector(13));
    await s.tick();
    const id = await s.rolloutId();
    expect(await settled(s, id)).toEqual({ skipped: 1, manual: 1 });
    expect(await counted(s, id)).toEqual({ skipped: 1, manual: 1 });
  });

  it('the listings resolve a task of unknown id', async () => {
    const s = await setup();
    await s.tick();
    const id = await s.rolloutId();
    await s.seed(21, 'reconciling');
    s.fleet.set(21, collector(21));
    s.clock.advance(MINUTE);
    await s.tick();
    expect(await settled(s, id)).toEqual({ failed: 1 });
    expect(await counted(s, id)).toEqual({ failed: 1 });
  });

  it('a newer build supersedes the Collectors that wait', async () => {
    const s = await setup({ maxInFlight: 5 });
    s.fleet.set(31, collector(31));
    await s.tick();
    const oldId = await s.rolloutId();
    await s.seed(32, 'queued');
    await s.seed(33, 'waiting_retry');
    s.targets.push({ version: NEWER, latest: true });
    for (const t of s.targets) if (t.version === BUILD) t.latest = false;
    s.clock.advance(2 * MINUTE);
    await s.tick();
    expect((await s.rollouts.get(oldId))?.phase).toBe('superseded');
    const told = await settled(s, oldId);
    expect(told.skipped).toBeGreaterThanOrEqual(2);
    expect(await counted(s, oldId)).toEqual(told);
  });

  it('the steps of a worker and of a verification (each state reached by the real store’s moves)', async () => {
    const s = await setup();
    await s.tick();
    const id = await s.rolloutId();
    const states = [
      'succeeded',
      'failed',
      'timed_out',
      'rejected',
      'error',
      'unhealthy',
      'manual',
      'unknown',
    ] as const;
    for (const [i, state] of states.entries()) await s.seed(51 + i, state);
    const told = await settled(s, id);
    expect(Object.keys(told).sort()).toEqual([...states].sort());
    expect(await counted(s, id)).toEqual(told);
  });
});

describe('the tally of outcomes is Redis’s, not a process’s', () => {
  it('another process (the first one gone) exports the same counts', async () => {
    const s = await setup();
    await s.tick();
    const id = await s.rolloutId();
    await s.seed(71, 'succeeded');
    await s.seed(72, 'failed');
    const other = createMetrics();
    other.exportOutcomes(() => s.store.outcomeTallies());
    const values = (await other.results.get()).values.filter((v) => v.labels.rollout === id);
    expect(Object.fromEntries(values.map((v) => [v.labels.outcome, v.value]))).toEqual({
      succeeded: 1,
      failed: 1,
    });
  });

  it('a not_alive Collector alive again stays counted once as not_alive; the tally says it reopened', async () => {
    const s = await setup();
    await s.tick();
    const id = await s.rolloutId();
    const dead = await s.seed(81, 'not_alive');
    const alive = transition(
      dead,
      { type: 'seen_alive' },
      { now: s.clock.now(), settings: {} as never, random: () => 0.5 },
    );
    if (!alive.ok) throw new Error(alive.reason);
    expect(await s.store.apply(id, [alive.move])).toEqual(['written']);
    expect(await settled(s, id)).toEqual({});
    expect(await counted(s, id)).toEqual({ not_alive: 1 });
    const [tally] = (await s.store.outcomeTallies()).get(id) ?? [];
    expect(tally).toMatchObject({ org: 'default', outcomes: { not_alive: 1 }, reopened: { not_alive: 1 } });
  });
});
