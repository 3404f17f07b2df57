/**
 * The chaos test's judge (test/support/chaos/judge-outcomes.ts) must catch what it is there to
 * catch: a wrong outcome of each kind, a second task, a Collector left without an outcome.
 */
import { describe, expect, it } from 'vitest';
import { type CollectorRecord, newRecord } from '../../../src/rollout/collector/index.js';
import { UNANSWERED_CREATE } from '../../../src/rollout/listings/index.js';
import { TaskStatus } from '../../../src/simulator/types.js';
import { judgeOutcomes, type SimView } from '../../support/chaos/judge-outcomes.js';

const TO = '19.470-4';

function record(id: number, patch: Partial<CollectorRecord>): CollectorRecord {
  return {
    ...newRecord({ id, name: `c${id}`, collectorVersion: '19.400-5' }, TO, 0),
    ...patch,
  };
}

function task(
  id: number,
  result: 'succeeded' | 'failed' | 'timedOut' | null,
  message = '',
  finishTime = 1000,
) {
  return {
    id,
    fromVersion: '19.400-5',
    toVersion: TO,
    steps: [TO],
    status:
      result === 'succeeded'
        ? TaskStatus.succeeded
        : result === null
          ? TaskStatus.pending
          : TaskStatus.failed,
    message,
    requestTime: 0,
    finishTime: result === null ? null : finishTime,
    result,
    cause: null,
    accessId: 'ops',
  };
}

function sim(id: number, patch: Partial<SimView>): SimView {
  return {
    id,
    name: `c${id}`,
    hostName: '',
    type: 'Installable',
    version: '19.400-5',
    alive: true,
    lastSeenAlive: 0,
    running: true,
    stoppedAt: null,
    stopsAfterUpgrade: false,
    stopDueAt: null,
    stops: [],
    failureCause: null,
    outcome: null,
    flap: false,
    osName: 'Linux',
    osArch: 'amd64',
    timeZone: 'Etc/UTC',
    sourceType: 'LocalFile',
    collecting: true,
    health: { breakDueAt: null, events: [] },
    upgrading: false,
    aliveChanges: [],
    refusals: [],
    durationKind: 'default',
    stepSeconds: { median: 180, p95: 600 },
    tasks: [],
    ...patch,
  };
}

function judge(pairs: [CollectorRecord, SimView][]) {
  return judgeOutcomes(
    pairs.map(([r]) => r),
    new Map(pairs.map(([, c]) => [c.id, c])),
    new Set(pairs.map(([r]) => r.id)),
  );
}

describe('judgeOutcomes', () => {
  it('agrees with true outcomes of every kind', () => {
    const j = judge([
      [
        record(1, { state: 'succeeded', taskId: '11' }),
        sim(1, { version: TO, tasks: [task(11, 'succeeded')] }),
      ],
      [
        record(2, { state: 'failed', taskId: '12', message: 'disk' }),
        sim(2, { tasks: [task(12, 'failed', 'disk')] }),
      ],
      [
        record(3, { state: 'timed_out', taskId: '13' }),
        sim(3, { tasks: [task(13, 'timedOut', 'timed out')] }),
      ],
      [
        record(4, { state: 'not_alive' }),
        sim(4, { alive: true, refusals: [{ at: 5, code: 'collector.not.alive' }] }),
      ],
      [
        record(5, { state: 'unhealthy', taskId: '15', finishedAt: 5000 }),
        sim(5, {
          version: TO,
          tasks: [task(15, 'succeeded')],
          aliveChanges: [{ at: 2000, alive: false }],
        }),
      ],
    ]);
    expect(j).toEqual({ mismatches: [], unknowable: [], doubleTasks: [], notSettled: [], missing: [] });
  });

  it('catches each wrong outcome', () => {
    const j = judge([
      [record(1, { state: 'succeeded' }), sim(1, { tasks: [task(11, 'failed', 'x')] })],
      [record(2, { state: 'failed', message: 'disk' }), sim(2, { tasks: [task(12, 'timedOut', 'disk')] })],
      [record(3, { state: 'failed', message: 'other' }), sim(3, { tasks: [task(13, 'failed', 'disk')] })],
      [record(4, { state: 'timed_out' }), sim(4, { tasks: [task(14, 'failed', 'disk')] })],
      [record(5, { state: 'not_alive' }), sim(5, { refusals: [{ at: 1, code: 'collector.in.upgrading' }] })],
      [record(6, { state: 'not_alive' }), sim(6, { tasks: [task(16, null)] })],
      // Offline only after the verdict: it cannot have been the reason.
      [
        record(7, { state: 'unhealthy', finishedAt: 1500 }),
        sim(7, { version: TO, tasks: [task(17, 'succeeded')], aliveChanges: [{ at: 2000, alive: false }] }),
      ],
      [
        record(8, { state: 'succeeded', taskId: '99' }),
        sim(8, { version: TO, tasks: [task(18, 'succeeded')] }),
      ],
      [record(9, { state: 'skipped' }), sim(9, {})],
    ]);
    expect(j.mismatches.map((m) => m.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('a task of unknown id that ended short of the build is unknowable, not a match; on the build, a mismatch', () => {
    const message =
      'Collector 1 is currently being upgraded.; the listing offers it again for 19.470-4: its task of unknown id ended without reaching the build';
    const j = judge([
      [record(1, { state: 'failed', message }), sim(1, { tasks: [task(11, 'timedOut', 'timed out')] })],
      [record(2, { state: 'failed', message }), sim(2, { version: TO, tasks: [task(12, 'succeeded')] })],
    ]);
    expect(j.unknowable.map((u) => [u.id, u.why])).toEqual([
      [1, "the service timed it out; task 11's id was never answered"],
    ]);
    expect(j.mismatches.map((m) => m.id)).toEqual([2]);
  });

  it('an unanswered create that was not sent again: recorded unknown agrees with no task or one short of the build; recorded failed is a mismatch', () => {
    const message = `no answer; ${UNANSWERED_CREATE}`;
    const j = judge([
      [record(1, { state: 'unknown', message }), sim(1, {})],
      [record(2, { state: 'unknown', message }), sim(2, { tasks: [task(12, 'failed', 'disk')] })],
      [record(3, { state: 'unknown', message }), sim(3, { version: TO, tasks: [task(13, 'succeeded')] })],
      [record(4, { state: 'unknown', message }), sim(4, { tasks: [task(14, null)] })],
      // Before issue 19 the same was recorded failed, counted by the gates as a bad outcome.
      [record(5, { state: 'failed', message }), sim(5, {})],
      // unknown where the service said what happened (a status read), a mismatch too.
      [
        record(6, { state: 'unknown', taskId: '16', message: 'x' }),
        sim(6, { tasks: [task(16, 'failed', 'disk')] }),
      ],
    ]);
    expect(j.unknowable.map((u) => u.id)).toEqual([1, 2]);
    expect(j.mismatches.map((m) => m.id)).toEqual([3, 4, 5, 6]);
  });

  it('counts second tasks, Collectors without an outcome and without a record', () => {
    const j = judgeOutcomes(
      [record(1, { state: 'pending' })],
      new Map([
        [1, sim(1, {})],
        [2, sim(2, { tasks: [task(21, 'failed', 'x'), task(22, 'succeeded')] })],
      ]),
      new Set([1, 3]),
    );
    expect(j.notSettled).toEqual([{ id: 1, state: 'pending' }]);
    expect(j.doubleTasks).toMatchObject([{ id: 2, tasks: 2 }]);
    // With the evidence to find out how: the service's tasks (no record of ours here).
    const evidence = j.doubleTasks[0]?.evidence as {
      service: { id: unknown; result: unknown }[];
      record?: unknown;
    };
    expect(evidence.service.map((t) => [t.id, t.result])).toEqual([
      [21, 'failed'],
      [22, 'succeeded'],
    ]);
    expect(evidence.record).toBeUndefined();
    expect(j.missing).toEqual([3]);
  });
});
