/**
 * Watching tasks through the listings (src/rollout/listings/listing-pass.ts), through the real path: the
 * orchestrator on the real Redis against the simulator over HTTP. In a small fleet a pass of one
 * listing page costs less than reading each task's status, so the scheduler watches: a task whose
 * Collector shows up on the build has succeeded and needs no status read; one that shows up on its
 * old build ended otherwise, and its job reads the status once for the message. A large page
 * count per pass turns watching off: the jobs read statuses as before.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { agreesWithSimulator, converged, type Harness, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function fleet(count: number, failing: readonly number[]): FleetFileInput {
  return {
    builds: BUILDS,
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      version: i % 2 ? '19.400-5' : '19.450-12',
      outcome: failing.includes(i + 1) ? ('fail' as const) : ('succeed' as const),
      failureCause: 'unknown' as const,
      upgradeSeconds: 60 + 30 * (i % 7),
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

describe('watching tasks through the listings', () => {
  it('a small fleet: successes need no status read, each failure one; outcomes match the simulator', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(40, [5, 17, 29]),
      policy: { name: 'watched', maxInFlight: 10, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    const done = await h.waitFor(converged, 90_000);
    const r = done.rollouts[0];
    expect(r?.counts).toEqual({ succeeded: 37, failed: 3 });
    const sim = new Map((await h.simCollectors()).map((c) => [c.id, c]));
    const records = await h.records(r?.id);
    expect(
      records.map((c) => [c.id, agreesWithSimulator(c, sim.get(c.id))]).filter(([, why]) => why),
    ).toEqual([]);
    const stats = await h.simStats();
    // One status read per failed task (its message), none for the successes seen in the
    // listing; at the tail, with fewer than a handful under way, watching costs more than it
    // saves, so the last tasks' jobs are woken to read their status (at most 4 then).
    const reads = stats.requests.byEndpoint.status ?? 0;
    expect(reads).toBeGreaterThanOrEqual(3);
    expect(reads).toBeLessThanOrEqual(3 + 4);
    expect(
      records.filter((c) => c.state === 'succeeded' && c.statusReads === 0).length,
    ).toBeGreaterThanOrEqual(33);
    expect(stats.tasksCreated).toBe(40);
    const perCollector = stats.requests.total / 37;
    console.info(
      `[figures] watched rollout of 40: ${stats.requests.total} requests (${JSON.stringify(stats.requests.byEndpoint)}), ${perCollector.toFixed(2)} per upgraded Collector`,
    );
  }, 120_000);

  it("decides to watch at the first scan's first page: the first tasks read no status while the scan walks on", async () => {
    // Three pages of 40, each answered after 15 simulated seconds: the first scan takes 45 s and
    // more, the first page's 40 tasks start after its first page, and the policy reads a status
    // 5 s after a create. Decided only after the whole scan (as before #31), every one of those
    // tasks' jobs read its status at least once meanwhile; decided before the first admission,
    // they sleep until a listing pass shows their end.
    harness = await startHarness({
      timeScale: 300,
      fleet: { ...fleet(120, []), faults: { latencyMs: 15_000 } },
      policy: { name: 'watched-early', maxInFlight: 40, pageSize: 40, poll: { initial: '5s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    const done = await h.waitFor(converged, 90_000);
    const r = done.rollouts[0];
    expect(r?.counts).toEqual({ succeeded: 120 });
    const first = (await h.records(r?.id))
      .filter((c) => c.admittedAt !== undefined)
      .sort((a, b) => (a.admittedAt as number) - (b.admittedAt as number))
      .slice(0, 40);
    expect(first).toHaveLength(40);
    expect(first.filter((c) => c.statusReads > 0).map((c) => [c.id, c.statusReads])).toEqual([]);
  }, 120_000);

  it('many pages per pass: no watching, the jobs read statuses', async () => {
    harness = await startHarness({
      timeScale: 300,
      fleet: fleet(24, []),
      // One Collector per page: a pass would cost 24 requests; reading statuses is cheaper.
      policy: { name: 'polled', maxInFlight: 4, pageSize: 1, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    await h.startRun();
    const done = await h.waitFor(converged, 90_000);
    expect(done.rollouts[0]?.counts).toEqual({ succeeded: 24 });
    expect(done.rollouts[0]?.watchMs).toBeUndefined();
    expect((await h.simStats()).requests.byEndpoint.status ?? 0).toBeGreaterThanOrEqual(24);
  }, 120_000);
});
