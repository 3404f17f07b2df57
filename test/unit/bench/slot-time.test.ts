/**
 * The benchmarks' measure of a run (bench/lib/slot-time.ts): the ideal (longest first on the same
 * limit), where the slot-time went, and what each refill of a slot waited for.
 */
import { describe, expect, it } from 'vitest';
import { lptMakespan, type RunTask, refillSplit, slotTime } from '../../../bench/lib/slot-time.js';

const S = 1000;
const task = (collectorId: number, requestTime: number, finishTime: number): RunTask => ({
  collectorId,
  id: `t${collectorId}-${requestTime}`,
  requestTime: requestTime * S,
  finishTime: finishTime * S,
});

describe('lptMakespan', () => {
  it('schedules the longest first on the limit', () => {
    // Durations 3, 3, 2, 2, 2 on 2 slots: longest first gives 3+2+2 | 3+2 = 7 (the best is 6;
    // the rule's bound is 4/3 of it).
    const tasks = [3, 3, 2, 2, 2].map((d, i) => task(i, 0, d));
    expect(lptMakespan(tasks, 2)).toBe(7 * S);
    expect(lptMakespan(tasks, 5)).toBe(3 * S);
  });

  it("counts a Collector's tasks (a failure and its retry) as one job", () => {
    expect(lptMakespan([task(1, 0, 4), task(1, 10, 14), task(2, 0, 1)], 2)).toBe(8 * S);
  });
});

describe('slotTime', () => {
  it('splits slots × makespan into running, idle before the last create, and the tail', () => {
    // 2 slots, 0..10 s: a task 0-10; another 0-4, then a gap, a task 6-8 (the last create).
    const split = slotTime([task(1, 0, 10), task(2, 0, 4), task(3, 6, 8)], 2);
    expect(split.running).toBeCloseTo(16 / 20, 3);
    expect(split.idleBeforeLastCreate).toBeCloseTo(2 / 20, 3);
    expect(split.tailAfterLastCreate).toBeCloseTo(2 / 20, 3);
    expect(split.peakRunning).toBe(2);
  });
});

describe('refillSplit', () => {
  it("matches each end, while the slots are full, to the create that took its slot, and splits the gap at the orchestrator's times", () => {
    const tasks = [task(1, 0, 10), task(2, 0, 20), task(3, 13, 30), task(4, 25, 40)];
    const timings = new Map([
      ['t1-0', { noticedAt: 11 * S }],
      ['t2-0', { noticedAt: 22 * S }],
      ['t3-13', { admittedAt: 12 * S, pickedAt: 12.5 * S }],
      ['t4-25', { admittedAt: 23 * S, pickedAt: 24 * S }],
    ]);
    const r = refillSplit(tasks, 2, timings);
    // End 10 → create 13 (3 s); end 20 → create 25 (5 s); the later ends have no create after them.
    expect(r.refills).toBe(2);
    expect(r.timed).toBe(2);
    expect(r.gapS.mean).toBe(4);
    // Noticing 1 + 2, admission 1 + 1, queue 0.5 + 1, budget and call 0.5 + 1 (means over 2).
    expect(r.meanS).toEqual({ noticing: 1.5, tickAndAdmission: 1, queue: 0.8, budgetAndCall: 0.8 });
  });

  it('clamps times out of order into the gap, and counts the queue as budget without a pick-up time', () => {
    const tasks = [task(1, 0, 10), task(2, 12, 20)];
    const r = refillSplit(
      tasks,
      1,
      new Map([
        ['t1-0', { noticedAt: 9 * S }],
        ['t2-12', { admittedAt: 11 * S }],
      ]),
    );
    expect(r.meanS).toEqual({ noticing: 0, tickAndAdmission: 1, queue: 0, budgetAndCall: 1 });
  });
});
