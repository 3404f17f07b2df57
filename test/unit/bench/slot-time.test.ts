/**
 * The benchmarks' measure of a run (bench/lib/slot-time.ts): the ideal (longest first on the same
 * limit), where the slot-time went, and what each refill of a slot waited for.
 */
import { describe, expect, it } from 'vitest';
import {
  idleSplit,
  lptMakespan,
  lptMakespanAtRate,
  type RunTask,
  refillSplit,
  runningProfile,
  slotTime,
} from '../../../bench/lib/slot-time.js';

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

describe('lptMakespanAtRate', () => {
  it('spaces the creates by the rate: short tasks last leave slots empty', () => {
    // Lengths 4, 1, 1, 1, 1 s on 4 slots: without a rate, 4 s. At 1 create/s the creates come at
    // 0, 1, 2, 3, 4 s: the last (1 s long) ends at 5 s.
    const tasks = [4, 1, 1, 1, 1].map((d, i) => task(i, 0, d));
    expect(lptMakespan(tasks, 4)).toBe(4 * S);
    expect(lptMakespanAtRate(tasks, 4, 1)).toBe(5 * S);
    // A rate the slots never reach changes nothing; 0 means no rate.
    expect(lptMakespanAtRate(tasks, 4, 1000)).toBe(4 * S);
    expect(lptMakespanAtRate(tasks, 4, 0)).toBe(4 * S);
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

describe('idleSplit', () => {
  // 2 slots. A (0-10) is noticed late (20), B (0-12) at once (13): B's slot goes to C (admitted 13,
  // taken up 14, created 15), A's to D (admitted 20, taken up 21, created 22: the last create).
  const tasks = [task(1, 0, 10), task(2, 0, 12), task(3, 15, 30), task(4, 22, 30)];
  const timings = new Map([
    ['t1-0', { noticedAt: 20 * S }],
    ['t2-0', { noticedAt: 13 * S }],
    ['t3-15', { admittedAt: 13 * S, pickedAt: 14 * S }],
    ['t4-22', { admittedAt: 20 * S, pickedAt: 21 * S }],
  ]);

  it("splits the idle slot-time before the last create at each record's own marks", () => {
    const r = idleSplit(tasks, 2, timings);
    // 0..22 s × 2 slots = 44 slot-s; running 10 + 12 + 7 = 29; idle 15 = noticing 10 + 1, queue
    // 1 + 1, budget and call 1 + 1, nothing else.
    expect(r.idle).toBeCloseTo(15 / 44, 3);
    expect(r.noticing).toBeCloseTo(11 / 44, 3);
    expect(r.queue).toBeCloseTo(2 / 44, 3);
    expect(r.budgetAndCall).toBeCloseTo(2 / 44, 3);
    expect(r.other).toBeCloseTo(0, 3);
    expect(r.ends).toBe(2);
    expect(r.perEndS).toEqual({ idle: 7.5, noticing: 5.5, queue: 1, budgetAndCall: 1, other: 0 });
  });

  it('has no admission wait where refillSplit, pairing ends with creates in order, finds one', () => {
    // The same run: refillSplit pairs A's end with C's create and B's with D's, and so counts 7 s
    // (13 → 20) of D's admission against B's end; nothing waited there.
    const paired = refillSplit(tasks, 2, timings);
    expect(paired.meanS.tickAndAdmission).toBeGreaterThan(3);
    const r = idleSplit(tasks, 2, timings);
    expect(r.other).toBeCloseTo(0, 3);
  });

  it('counts slots the orchestrator left untimed as other', () => {
    // Without any marks, every idle second is other.
    const r = idleSplit(tasks, 2, new Map());
    expect(r.other).toBeCloseTo(15 / 44, 3);
    expect(r.noticing + r.queue + r.budgetAndCall).toBe(0);
    const bare = idleSplit([task(1, 0, 10), task(2, 5, 10)], 2, new Map([['t1-0', { noticedAt: 0 }]]));
    // 0..5 s × 2 = 10 slot-s; running 5; A noticed (at once) before its end: no noticing; 5 other.
    expect(bare.other).toBeCloseTo(0.5, 3);
  });
});

describe('runningProfile', () => {
  it('gives the share of the slots running in each bin from the first create', () => {
    // 2 slots, bins of 10 s: 0-10 one task (50 %), 10-20 two (100 %), 20-25 one (50 %, a bin of 5 s).
    expect(runningProfile([task(1, 0, 20), task(2, 10, 25)], 2, 10 * S)).toEqual([0.5, 1, 0.5]);
  });
});
