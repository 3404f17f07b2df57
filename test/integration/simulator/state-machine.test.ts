/**
 * Conformance: section 3 (states and transitions) and the 30-minute time-out of section 8, on a
 * manual clock: 0 → 1 after issueSeconds → 6 at the Collector's next heartbeat → 2 or 3 after the
 * upgrade duration; forced outcomes; increments (1, 9); downgrades; a Collector going offline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  BUILDS,
  C,
  HEARTBEAT_SECONDS,
  ISSUE_SECONDS,
  LATEST,
  listCollectors,
  patchSimCollector,
  type SimCollectorRecord,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  TIMEOUT_SECONDS,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const S = 1000;
/** By then a one-step task on a test Collector has surely finished. */
const DONE_MS = (ISSUE_SECONDS + HEARTBEAT_SECONDS + UPGRADE_SECONDS) * S + 1;
const TIMED_OUT = /time[sd]?[ -]?out/i;
const UNFINISHED = [0, 1, 6];

/**
 * Steps the clock from the task's request time by `stepMs` until the task is finished or `maxMs`
 * has passed, recording the Collector's version at every step (from /_sim/collectors).
 */
async function follow(t: TestSimulator, id: string, collectorId: number, stepMs: number, maxMs: number) {
  const { requestTime } = await t.task(id);
  const statuses: number[] = [];
  const versions: string[] = [];
  let finishedAt: number | undefined;
  // The grid, plus the instant just after issueSeconds, when the task is surely pending (status 1
  // can last only a moment when the Collector's heartbeat follows at once).
  const schedule = [0, ISSUE_SECONDS * S + 1];
  for (let ms = stepMs; ms <= maxMs; ms += stepMs) if (ms > ISSUE_SECONDS * S + 1) schedule.push(ms);
  for (const ms of schedule) {
    t.at(requestTime, ms);
    const task = await t.task(id);
    const c: SimCollectorRecord = await t.simCollector(collectorId);
    if (statuses.at(-1) !== task.status) statuses.push(task.status);
    if (c.version && versions.at(-1) !== c.version) versions.push(c.version);
    if (task.status === 2 || task.status === 3) {
      finishedAt = ms;
      break;
    }
  }
  return { statuses, versions, finishedAt, last: await t.task(id) };
}

describe('3: the life of a task that succeeds', () => {
  it('0 (not started) from the request until issueSeconds have passed', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime, status } = await t.task(id);
    expect(status).toBe(0);
    t.at(requestTime, ISSUE_SECONDS * S - 1);
    expect((await t.task(id)).status).toBe(0);
  });

  it('0 → 1 (pending) once issueSeconds have passed', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, ISSUE_SECONDS * S + 1);
    expect((await t.task(id)).status).toBe(1);
  });

  it("1 → 6 (progressing) at the Collector's next heartbeat, at most heartbeatSeconds later", async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, (ISSUE_SECONDS + HEARTBEAT_SECONDS) * S + 1);
    expect((await t.task(id)).status).toBe(6);
  });

  it('6 → 2 (succeeded) exactly upgradeSeconds after it started progressing, with message ""', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime } = await t.task(id);
    // Find the heartbeat that started the upgrade, to within 100 ms.
    let lastPending = ISSUE_SECONDS * S + 1;
    let firstProgressing: number | undefined;
    for (let ms = lastPending; ms <= (ISSUE_SECONDS + HEARTBEAT_SECONDS) * S + 1; ms += 100) {
      t.at(requestTime, ms);
      const { status } = await t.task(id);
      if (status === 1) lastPending = ms;
      else {
        expect(status).toBe(6);
        firstProgressing = ms;
        break;
      }
    }
    expect(firstProgressing, 'the task never reached 6 within heartbeatSeconds').toBeDefined();
    t.at(requestTime, lastPending + UPGRADE_SECONDS * S - 1);
    expect((await t.task(id)).status).toBe(6);
    t.at(requestTime, (firstProgressing as number) + UPGRADE_SECONDS * S);
    const done = await t.task(id);
    expect(done.status).toBe(2);
    expect(done.message).toBe('');
  });

  it('statuses only move forward: 0, 1, 6, 2 in that order', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { statuses } = await follow(t, id, C.web1, 500, DONE_MS + 10 * S);
    expect(statuses).toEqual([0, 1, 6, 2]);
  });

  it('a finished task stays as it ended, long after (no later time-out turns 2 into 3)', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS);
    expect((await t.task(id)).status).toBe(2);
    t.at(requestTime, 3 * TIMEOUT_SECONDS * S);
    expect(await t.task(id)).toMatchObject({ status: 2, message: '' });
  });

  it('on success the Collector reports the new build (/_sim/collectors and listings for other targets)', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1, '19.450-12');
    const { requestTime } = await t.task(id);
    expect((await t.simCollector(C.web1)).version).toBe('19.400-5');
    t.at(requestTime, DONE_MS);
    expect((await t.task(id)).status).toBe(2);
    expect((await t.simCollector(C.web1)).version).toBe('19.450-12');
    const listed = (await listCollectors(t)).find((c) => c.id === C.web1);
    expect(listed?.collectorVersion).toBe('19.450-12');
    expect((await listCollectors(t, 'toVersion=19.450-12')).map((c) => c.id)).not.toContain(C.web1);
  });

  it('upgradeSeconds of the Collector overrides the drawn duration', async () => {
    const fleet = testFleet({
      collectors: [{ id: 1, name: 'slow', version: '19.450-12', outcome: 'succeed', upgradeSeconds: 900 }],
    });
    const t = await startTestSimulator(fleet);
    const id = await t.createTask(1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, (ISSUE_SECONDS + 900) * S - 1);
    expect((await t.task(id)).status).toBe(6);
    t.at(requestTime, (ISSUE_SECONDS + HEARTBEAT_SECONDS + 900) * S + 1);
    expect((await t.task(id)).status).toBe(2);
  });

  it('without upgradeSeconds on the Collector, durations are drawn from behaviour.upgradeSeconds (they vary)', async () => {
    const fleet = testFleet({
      collectors: [],
      generate: { count: 40, seed: 3, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
      behaviour: { upgradeSeconds: { median: 180, p95: 600 }, incrementalAbove: 0 },
    });
    const t = await startTestSimulator(fleet);
    const collectors = await t.simCollectors();
    for (const c of collectors) await t.createTask(c.id);
    const start = t.clock.now();
    const finish = new Map<number, number>();
    for (let s = 0; s <= TIMEOUT_SECONDS && finish.size < collectors.length; s += 10) {
      t.clock.set(start + s * S);
      for (const c of await t.simCollectors()) {
        const status = c.tasks[0]?.status;
        if ((status === 2 || status === 3) && !finish.has(c.id)) finish.set(c.id, s);
      }
    }
    const durations = [...finish.values()].sort((a, b) => a - b);
    expect(durations.length).toBe(collectors.length);
    expect(new Set(durations).size).toBeGreaterThan(5);
    const median = durations[Math.floor(durations.length / 2)] as number;
    // The median of request-to-finish is the drawn median plus issue and heartbeat, within sampling noise.
    expect(median).toBeGreaterThanOrEqual(90);
    expect(median).toBeLessThanOrEqual(400);
  });
});

describe('3: a task that fails (status 3)', () => {
  it('forced outcome "fail": 3 after the upgrade, a realistic non-empty message, the old build kept', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.failing);
    const { statuses, last } = await follow(t, id, C.failing, S, DONE_MS + 10 * S);
    expect(statuses.at(-1)).toBe(3);
    expect(last.message.trim().length).toBeGreaterThan(10);
    expect(last.message).not.toMatch(TIMED_OUT);
    expect((await t.simCollector(C.failing)).version).toBe('19.400-5');
    expect((await t.stats()).tasksByOutcome).toMatchObject({ succeeded: 0, failed: 1, timedOut: 0 });
  });

  it('failureMessage of the Collector is the message of its failed tasks', async () => {
    const fleet = testFleet({
      collectors: [
        {
          id: 7,
          name: 'full-disk',
          version: '19.400-5',
          outcome: 'fail',
          upgradeSeconds: 60,
          failureMessage: 'Not enough disk space on /opt/SumoCollector',
        },
      ],
    });
    const t = await startTestSimulator(fleet);
    const id = await t.createTask(7);
    const { requestTime } = await t.task(id);
    t.at(requestTime, TIMEOUT_SECONDS * S - 1);
    expect(await t.task(id)).toMatchObject({
      status: 3,
      message: 'Not enough disk space on /opt/SumoCollector',
    });
  });

  it('behaviour.failureRatio 1 makes every task without a forced outcome fail', async () => {
    const fleet = testFleet({
      collectors: [
        { id: 1, version: '19.400-5', upgradeSeconds: 60 },
        { id: 2, version: '19.300-7', upgradeSeconds: 60 },
      ],
      behaviour: { failureRatio: 1 },
    });
    const t = await startTestSimulator(fleet);
    const a = await t.createTask(1);
    const b = await t.createTask(2);
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    for (const id of [a, b]) {
      const task = await t.task(id);
      expect(task.status).toBe(3);
      expect(task.message).not.toBe('');
    }
  });
});

describe('3, 8: the 30-minute time-out', () => {
  it('forced outcome "stuck": unfinished for 30 minutes, then 3 with a message saying it timed out', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.stuck);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS);
    expect(UNFINISHED).toContain((await t.task(id)).status);
    t.at(requestTime, TIMEOUT_SECONDS * S - 1);
    expect(UNFINISHED).toContain((await t.task(id)).status);
    t.at(requestTime, TIMEOUT_SECONDS * S + 1);
    const task = await t.task(id);
    expect(task.status).toBe(3);
    expect(task.message).toMatch(TIMED_OUT);
    expect((await t.simCollector(C.stuck)).version).toBe('19.400-5');
    expect((await t.stats()).tasksByOutcome).toMatchObject({ succeeded: 0, failed: 0, timedOut: 1 });
  });

  it('the time-out is read lazily: one jump far past it also answers 3 timed out', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.stuck);
    t.clock.advance(10 * TIMEOUT_SECONDS * S);
    const task = await t.task(id);
    expect(task.status).toBe(3);
    expect(task.message).toMatch(TIMED_OUT);
  });

  it('behaviour.taskTimeoutSeconds sets the time-out', async () => {
    const t = await startTestSimulator(testFleet({ behaviour: { taskTimeoutSeconds: 300 } }));
    const id = await t.createTask(C.stuck);
    const { requestTime } = await t.task(id);
    t.at(requestTime, 299 * S);
    expect(UNFINISHED).toContain((await t.task(id)).status);
    t.at(requestTime, 301 * S);
    expect((await t.task(id)).status).toBe(3);
  });

  it('behaviour.stuckRatio 1 makes tasks without a forced outcome time out', async () => {
    const fleet = testFleet({
      collectors: [{ id: 1, version: '19.400-5', upgradeSeconds: 60 }],
      behaviour: { stuckRatio: 1 },
    });
    const t = await startTestSimulator(fleet);
    const id = await t.createTask(1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, TIMEOUT_SECONDS * S - 1);
    expect(UNFINISHED).toContain((await t.task(id)).status);
    t.at(requestTime, TIMEOUT_SECONDS * S + 1);
    expect(await t.task(id)).toMatchObject({ status: 3, message: expect.stringMatching(TIMED_OUT) });
  });

  it('a Collector that goes offline while progressing leaves its task unfinished until the time-out, then 3', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, (ISSUE_SECONDS + HEARTBEAT_SECONDS) * S + 1);
    expect((await t.task(id)).status).toBe(6);
    await patchSimCollector(t, C.web1, { alive: false });
    t.at(requestTime, DONE_MS + 60 * S);
    expect(UNFINISHED).toContain((await t.task(id)).status);
    t.at(requestTime, TIMEOUT_SECONDS * S - 1);
    expect(UNFINISHED).toContain((await t.task(id)).status);
    t.at(requestTime, TIMEOUT_SECONDS * S + 1);
    const task = await t.task(id);
    expect(task.status).toBe(3);
    expect(task.message).toMatch(TIMED_OUT);
    expect((await t.simCollector(C.web1)).version).toBe('19.400-5');
  });

  it('a Collector that goes offline before picking the upgrade up never starts it (stays 0 or 1), then 3', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const { requestTime } = await t.task(id);
    await patchSimCollector(t, C.web1, { alive: false });
    for (const ms of [ISSUE_SECONDS * S + 1, DONE_MS, TIMEOUT_SECONDS * S - 1]) {
      t.at(requestTime, ms);
      expect([0, 1]).toContain((await t.task(id)).status);
    }
    t.at(requestTime, TIMEOUT_SECONDS * S + 1);
    expect(await t.task(id)).toMatchObject({ status: 3, message: expect.stringMatching(TIMED_OUT) });
  });
});

describe('1, 9: increments (a move across more than behaviour.incrementalAbove builds)', () => {
  it('an upgrade across 5 builds (incrementalAbove 2) moves through intermediate builds and takes ≥ 3 steps', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.old);
    const { statuses, versions, finishedAt, last } = await follow(t, id, C.old, 5 * S, TIMEOUT_SECONDS * S);
    expect(last).toMatchObject({ status: 2, message: '', toVersion: LATEST });
    expect(statuses).toEqual([0, 1, 6, 2]);
    expect(versions[0]).toBe('19.100-1');
    expect(versions.at(-1)).toBe(LATEST);
    const between = versions.slice(1, -1);
    expect(between.length, `versions seen: ${versions.join(' → ')}`).toBeGreaterThan(0);
    // Each version seen is a build of the fleet, and they only go up.
    const index = versions.map((v) => BUILDS.indexOf(v as (typeof BUILDS)[number]));
    expect(index.every((i) => i >= 0)).toBe(true);
    expect(index.every((x, i) => i === 0 || x > (index[i - 1] as number))).toBe(true);
    // No step spans more than incrementalAbove builds.
    expect(index.every((x, i) => i === 0 || x - (index[i - 1] as number) <= 2)).toBe(true);
    // Increments of at most 2 builds over 5 builds take at least 3 upgrades.
    expect(finishedAt).toBeGreaterThanOrEqual(3 * UPGRADE_SECONDS * S);
  });

  it('the incremental upgrade takes longer than a one-step upgrade of the same Collector would', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.old);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS);
    expect((await t.task(id)).status).toBe(6);
  });

  it('a move across exactly incrementalAbove builds goes in one step', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1); // 19.400-5 → 19.470-4: two builds up
    const { versions, last, finishedAt } = await follow(t, id, C.web1, 5 * S, TIMEOUT_SECONDS * S);
    expect(last.status).toBe(2);
    expect(versions).toEqual(['19.400-5', LATEST]);
    expect(finishedAt).toBeLessThanOrEqual(DONE_MS + 5 * S);
  });

  it('incrementalAbove 0 never goes in increments', async () => {
    const t = await startTestSimulator(testFleet({ behaviour: { incrementalAbove: 0 } }));
    const id = await t.createTask(C.old);
    const { versions, last } = await follow(t, id, C.old, 5 * S, TIMEOUT_SECONDS * S);
    expect(last.status).toBe(2);
    expect(versions).toEqual(['19.100-1', LATEST]);
  });

  it('8: the 30-minute time-out still applies: increments longer than 30 minutes end in 3 timed out', async () => {
    const fleet = testFleet({
      collectors: [{ id: 1, name: 'slow-old', version: '19.100-1', outcome: 'succeed', upgradeSeconds: 700 }],
    });
    const t = await startTestSimulator(fleet);
    const id = await t.createTask(1);
    const { requestTime } = await t.task(id);
    t.at(requestTime, TIMEOUT_SECONDS * S - 1);
    expect((await t.task(id)).status).toBe(6);
    t.at(requestTime, TIMEOUT_SECONDS * S + 1);
    expect(await t.task(id)).toMatchObject({ status: 3, message: expect.stringMatching(TIMED_OUT) });
    expect((await t.simCollector(1)).version).not.toBe(LATEST);
  });
});

describe('1: downgrades work like upgrades', () => {
  it('a downgrade by one build succeeds and the Collector reports the older build', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web2, '19.400-5');
    const { statuses, last } = await follow(t, id, C.web2, S, DONE_MS + 10 * S);
    expect(statuses).toEqual([0, 1, 6, 2]);
    expect(last).toMatchObject({ toVersion: '19.400-5', message: '' });
    expect((await t.simCollector(C.web2)).version).toBe('19.400-5');
    expect((await listCollectors(t)).find((c) => c.id === C.web2)?.collectorVersion).toBe('19.400-5');
  });

  it('a downgrade across 5 builds goes down through intermediate builds', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.upToDate, '19.100-1');
    const { versions, last, finishedAt } = await follow(t, id, C.upToDate, 5 * S, TIMEOUT_SECONDS * S);
    expect(last.status).toBe(2);
    expect(versions[0]).toBe(LATEST);
    expect(versions.at(-1)).toBe('19.100-1');
    expect(versions.length, `versions seen: ${versions.join(' → ')}`).toBeGreaterThan(2);
    const index = versions.map((v) => BUILDS.indexOf(v as (typeof BUILDS)[number]));
    expect(index.every((x, i) => i === 0 || x < (index[i - 1] as number))).toBe(true);
    expect(finishedAt).toBeGreaterThanOrEqual(3 * UPGRADE_SECONDS * S);
  });

  it('a failed downgrade keeps the newer build', async () => {
    const fleet = testFleet({
      collectors: [{ id: 5, name: 'f', version: LATEST, outcome: 'fail', upgradeSeconds: 60 }],
    });
    const t = await startTestSimulator(fleet);
    const id = await t.createTask(5, '19.450-12');
    t.clock.advance(TIMEOUT_SECONDS * S - 1);
    expect((await t.task(id)).status).toBe(3);
    expect((await t.simCollector(5)).version).toBe(LATEST);
  });
});

describe('several tasks at once', () => {
  it('tasks on different Collectors run side by side and each ends by its own outcome', async () => {
    const t = await startTestSimulator();
    const ok = await t.createTask(C.web1);
    const bad = await t.createTask(C.failing);
    const stuck = await t.createTask(C.stuck);
    t.clock.advance(DONE_MS);
    expect((await t.task(ok)).status).toBe(2);
    expect((await t.task(bad)).status).toBe(3);
    expect(UNFINISHED).toContain((await t.task(stuck)).status);
    t.clock.advance(TIMEOUT_SECONDS * S);
    expect((await t.task(stuck)).status).toBe(3);
    const stats = await t.stats();
    expect(stats.tasksByOutcome).toMatchObject({ succeeded: 1, failed: 1, timedOut: 1 });
    expect(stats.maxConcurrentTasks).toBe(3);
  });
});
