/**
 * Every slot busy (issue #18), through the real path: the simulator over HTTP with a fleet of two
 * kinds of duration (config/fleets/two-durations.yaml: a Windows step takes four times a Linux
 * one's, and a move of more than two builds goes in increments), real Redis, the daemon at ×60.
 *
 * - The waves before the last are samples the gates judge: they take the Collectors in the order
 *   they were found. In the last wave the Collectors expected to take longest are admitted first,
 *   by what the rollout learned of each kind (before anything is learned, by their distance to
 *   the target: upgrade-length.test.ts).
 * - No wave, limit or window is broken by that order.
 * - A slot is refilled within seconds of a task's end, measured on the simulator's clock from its
 *   own record of tasks (request and finish times).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { type RunTask, refillPairs } from '../../../bench/lib/slot-time.js';
import type { CollectorRecord } from '../../../src/rollout/collector/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { converged, type Harness, startHarness } from '../../support/rollout-harness.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const base = parse(
  readFileSync(join(ROOT, 'config', 'fleets', 'two-durations.yaml'), 'utf8'),
) as FleetFileInput;
const fleet: FleetFileInput = {
  ...base,
  generate: { ...base.generate, count: 200 } as FleetFileInput['generate'],
};
const IN_FLIGHT = 20;

interface SimTask {
  id: number;
  steps: string[];
  requestTime: number;
  finishTime: number | null;
}
interface SimCollector {
  id: number;
  osName: string;
  stepSeconds: { median: number };
  tasks: SimTask[];
}

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** The mean of `xs`. */
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

describe('every slot busy', () => {
  it('admits the first wave in discovery order and the last one longest first, breaks no wave or limit, and refills a slot within seconds of a task’s end', async () => {
    harness = await startHarness({
      timeScale: 60,
      fleet,
      policy: {
        name: 'longest-first',
        maxInFlight: IN_FLIGHT,
        waves: ['30%', '100%'],
        verify: false,
        // Every day, all day: the window fit (the learned 95th percentile of each kind) is asked.
        windows: [{ start: '00:00', end: '24:00', timeZone: 'collector' }],
      },
    });
    const h = harness;
    await h.startRun();
    await h.waitFor(converged, 120_000);
    const records = await h.records();
    const sim = (
      (await (await fetch(`${h.sim.url}/_sim/collectors`)).json()) as { collectors: SimCollector[] }
    ).collectors;
    const byId = new Map(sim.map((c) => [c.id, c]));
    const stats = await h.simStats();

    // Each Collector's true length: its steps × its system's step median.
    const length = (r: CollectorRecord) => {
      const c = byId.get(r.id) as SimCollector;
      return c.stepSeconds.median * (c.tasks[0]?.steps.length ?? 1);
    };
    const started = records.filter((r) => r.admittedAt !== undefined && r.requestTime !== undefined);
    expect(started.length).toBeGreaterThan(150);
    expect(records.every((r) => r.state === 'succeeded' || r.state === 'skipped')).toBe(true);
    expect(sim.every((c) => c.tasks.length <= 1)).toBe(true);

    // The limit: never more tasks at once than allowed.
    expect(stats.maxConcurrentTasks).toBeLessThanOrEqual(IN_FLIGHT);
    expect(stats.rateLimited).toBe(0);

    // The waves: the first holds at most 30 % of the Collectors found, and the second begins only
    // after every Collector of the first had its outcome.
    const first = started.filter((r) => r.wave === 0);
    const second = started.filter((r) => r.wave === 1);
    expect(first.length).toBeGreaterThan(0);
    expect(first.length).toBeLessThanOrEqual(Math.ceil(0.3 * records.length));
    const firstDone = Math.max(
      ...first.map((r) => r.finishedAt ?? r.succeededAt ?? Number.POSITIVE_INFINITY),
    );
    // (The admission is stamped with its round's start, the outcome with its page's time: one
    // round, at most a few real ms at ×60, may lie between them.)
    expect(Math.min(...second.map((r) => r.admittedAt as number))).toBeGreaterThanOrEqual(firstDone - 10_000);

    const byAdmission = (wave: CollectorRecord[]) =>
      [...wave].sort((a, b) => (a.admittedAt as number) - (b.admittedAt as number) || a.id - b.id);
    // The first wave is a sample: admitted in the order the listing showed them (by id).
    const firstIds = byAdmission(first).map((r) => r.id);
    expect(firstIds).toEqual([...firstIds].sort((a, b) => a - b));
    // The last wave: the longest expected first (discovery order would give both thirds about the
    // same mean length).
    const order = byAdmission(second);
    const third = Math.floor(order.length / 3);
    const early = mean(order.slice(0, third).map(length));
    const late = mean(order.slice(-third).map(length));
    expect(early).toBeGreaterThan(1.5 * late);

    // Refills, on the simulator's clock, from its own records (tasks' request and finish times,
    // and its log of the requests it answered). Within each wave (a wave's start waits for the
    // previous wave's outcomes): for each task that ended while every slot was taken, the create
    // that took its slot, and the request that first showed the end (a listing page, or a status
    // read of that task).
    const log = (await (await fetch(`${h.sim.url}/_sim/requests`)).json()) as {
      dropped: number;
      requests: { at: number; endpoint: string; status: number; subject?: string }[];
    };
    expect(log.dropped).toBe(0);
    const reveals = log.requests.filter(
      (q) => q.status === 200 && (q.endpoint === 'list' || q.endpoint === 'status'),
    );
    const revealOf = (task: RunTask) =>
      reveals.find((q) => q.at >= task.finishTime && (q.endpoint === 'list' || q.subject === task.id))?.at;
    const waveOf = new Map(started.map((r) => [r.id, r.wave]));
    for (const wave of [0, 1]) {
      const tasks: RunTask[] = sim
        .filter((c) => waveOf.get(c.id) === wave)
        .flatMap((c) =>
          c.tasks
            .filter((t) => t.finishTime !== null)
            .map((t) => ({
              collectorId: c.id,
              id: String(t.id),
              requestTime: t.requestTime,
              finishTime: t.finishTime as number,
            })),
        );
      const pairs = refillPairs(tasks, IN_FLIGHT);
      expect(pairs.length).toBeGreaterThan(10);
      const afterEnd = pairs
        .map((p) => (p.next.requestTime - p.ended.finishTime) / 1000)
        .sort((a, b) => a - b);
      const afterSeen = pairs
        .map((p) => (p.next.requestTime - (revealOf(p.ended) ?? Number.NaN)) / 1000)
        .sort((a, b) => a - b);
      const at = (xs: number[], q: number) => xs[Math.floor(q * (xs.length - 1))] as number;
      // The listing passes while the wave's tasks ran: the seconds between two listing requests.
      const from = Math.min(...tasks.map((t) => t.requestTime));
      const to = Math.max(...tasks.map((t) => t.finishTime));
      const lists = reveals
        .filter((q) => q.endpoint === 'list' && q.at >= from && q.at <= to)
        .map((q) => q.at);
      const gaps = lists
        .slice(1)
        .map((t, i) => (t - (lists[i] as number)) / 1000)
        .sort((a, b) => a - b);
      const measured = `wave ${wave + 1}, ${pairs.length} refills: from the end p50 ${at(afterEnd, 0.5)} s, p90 ${at(afterEnd, 0.9)} s; from seen p50 ${at(afterSeen, 0.5)} s, p90 ${at(afterSeen, 0.9)} s; ${lists.length} listing requests, ${at(gaps, 0.5)} s apart at the median`;
      console.log(`[figures] ${measured}`);
      // Seen ended, a slot is refilled within a few seconds of simulated time (measured: about
      // 2 s at the median; at ×60 a real tenth of a second is 6 s): at once, not at the next round.
      expect(afterSeen.every(Number.isFinite)).toBe(true);
      expect(at(afterSeen, 0.5), measured).toBeLessThanOrEqual(5);
      expect(at(afterSeen, 0.9), measured).toBeLessThanOrEqual(10);
      // From the true end: the listing pass that shows it comes every few seconds while tasks run
      // (its interval is a fifth of the median length here, within the quarter request per
      // finished task of listing-pass.ts `watchDecision`: about 24 s for this fleet).
      expect(at(gaps, 0.5), measured).toBeLessThanOrEqual(30);
      // An end is seen by the next pass and its slot refilled then: from the true end, half a pass
      // apart on average, then the refill. So the median is within one pass interval plus the
      // refill's p90; an end seen only by the pass after would take one and a half. (A fixed
      // 15 s here sat at that expectation, 10-14 s alone, and failed by chance under load at
      // 15.05 s; under load the gap's median also shrinks, 16 s, as the scans' listing requests
      // fall between the passes: hence the refill's p90 beside it.)
      expect(at(afterEnd, 0.5), measured).toBeLessThanOrEqual(at(gaps, 0.5) + at(afterSeen, 0.9));
    }
  }, 150_000);
});
