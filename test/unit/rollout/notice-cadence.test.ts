/**
 * When the next watching pass is worth its pages (listings/notice-cadence.ts): from the predicted
 * ends of the tasks under way, the budget the creates leave, and whether Collectors wait.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  endedBy,
  expectedEnds,
  NOTICE_CALLS_PER_COLLECTOR,
  NOTICE_MIN_GAP_MS,
  NOTICE_RATE_RESERVE,
  NOTICE_SPEND_IDLE,
  NOTICE_SPEND_MAX,
  nextPassAt,
  noticeSpend,
  type TaskUnderWay,
} from '../../../src/rollout/listings/index.js';

const S = 1000;
const MIN = 60 * S;

/** `n` tasks of median `median`, requested evenly over the `span` before `now`. */
function steady(n: number, median: number, span: number, now: number, sigma = 0.4): TaskUnderWay[] {
  return Array.from({ length: n }, (_, i) => ({
    requestTime: now - (span * i) / n,
    medianMs: median,
    sigma,
  }));
}

/** What the default fleet leaves: 1.07 creates and 0.11 status reads per Collector so far. */
const WAITING = noticeSpend({ waiting: true, createsPerCollector: 1.07, statusPerCollector: 0.11 });

const base = {
  passAt: 10 * MIN,
  pages: 5,
  spendPerEnd: WAITING,
  ratePerSecond: 3.2,
  createsPerSecond: 0.8,
  latestMs: 60 * S,
};

describe('endedBy and expectedEnds', () => {
  it('a task is as likely done as not at its median, and more likely later', () => {
    expect(endedBy(2 * MIN, 2 * MIN, 0.5)).toBeCloseTo(0.5, 6);
    expect(endedBy(0, 2 * MIN, 0.5)).toBe(0);
    expect(endedBy(4 * MIN, 2 * MIN, 0.5)).toBeGreaterThan(0.9);
    expect(endedBy(MIN, 2 * MIN, 0.5)).toBeLessThan(0.1);
  });

  it('counts the ends expected after the pass only: tasks just started add almost nothing', () => {
    const now = 10 * MIN;
    const young = steady(100, 5 * MIN, 10 * S, now);
    expect(expectedEnds(young, now, now + 10 * S)).toBeLessThan(0.01);
    // Half of 100 tasks at their median end within the spread of it.
    const ripe = Array.from({ length: 100 }, () => ({
      requestTime: now - 5 * MIN,
      medianMs: 5 * MIN,
      sigma: 0.4,
    }));
    const soon = expectedEnds(ripe, now, now + MIN);
    expect(soon).toBeGreaterThan(20);
    expect(soon).toBeLessThan(60);
  });

  it('grows with the time after the pass', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            age: fc.integer({ min: 0, max: 40 * MIN }),
            medianMs: fc.integer({ min: 10 * S, max: 30 * MIN }),
            sigma: fc.double({ min: 0.15, max: 1.5, noNaN: true }),
          }),
          { maxLength: 50 },
        ),
        fc.integer({ min: 0, max: 5 * MIN }),
        fc.integer({ min: 0, max: 5 * MIN }),
        (specs, a, b) => {
          const now = 60 * MIN;
          const tasks = specs.map((t) => ({
            requestTime: now - t.age,
            medianMs: t.medianMs,
            sigma: t.sigma,
          }));
          const [early, late] = a <= b ? [a, b] : [b, a];
          const e1 = expectedEnds(tasks, now, now + early);
          const e2 = expectedEnds(tasks, now, now + late);
          expect(e1).toBeGreaterThanOrEqual(0);
          expect(e2).toBeGreaterThanOrEqual(e1 - 1e-9);
          expect(e2).toBeLessThanOrEqual(tasks.length + 1e-9);
        },
      ),
    );
  });
});

describe('noticeSpend', () => {
  it('spends on noticing what the creates and status reads leave of the calls per Collector', () => {
    expect(WAITING).toBeCloseTo(NOTICE_CALLS_PER_COLLECTOR - 1.07 - 0.11, 9);
    // 5 % offline: their creates are refused and tried again; noticing is worth less.
    const offline = noticeSpend({ waiting: true, createsPerCollector: 1.32, statusPerCollector: 0.12 });
    expect(offline).toBeLessThan(WAITING);
    expect(offline).toBeGreaterThanOrEqual(NOTICE_SPEND_IDLE);
    // ... and less again when fewer outcomes are upgrades (the goal is per upgraded Collector):
    // 2 % timed out and 5 % refused at create, 1.24 creates and 0.16 status reads so far.
    const faults = noticeSpend({
      waiting: true,
      createsPerCollector: 1.24,
      statusPerCollector: 0.16,
      upgradedShare: 0.91,
    });
    expect(faults).toBeCloseTo(NOTICE_CALLS_PER_COLLECTOR * 0.91 - 1.24 - 0.16, 9);
    // Per upgraded Collector, creates, reads and noticing stay within the goal.
    expect((1.24 + 0.16 + faults) / 0.91).toBeLessThanOrEqual(NOTICE_CALLS_PER_COLLECTOR + 1e-9);
    // Never below the cheap cadence, never above a page per end.
    expect(noticeSpend({ waiting: true, createsPerCollector: 3, statusPerCollector: 1 })).toBe(
      NOTICE_SPEND_IDLE,
    );
    expect(noticeSpend({ waiting: true, createsPerCollector: 0, statusPerCollector: 0 })).toBe(
      NOTICE_SPEND_MAX,
    );
    // Nothing waits: an end noticed sooner starts nothing.
    expect(noticeSpend({ waiting: false, createsPerCollector: 1, statusPerCollector: 0 })).toBe(
      NOTICE_SPEND_IDLE,
    );
  });
});

describe('nextPassAt', () => {
  it('while Collectors wait, passes as soon as the expected ends pay for the pages', () => {
    // 250 tasks of 5 minutes in a steady state end about 0.83 a second.
    const tasks = steady(250, 5 * MIN, 5 * MIN, base.passAt);
    const next = nextPassAt({ ...base, tasks });
    expect(next.by).toBe('ends');
    expect(next.expected).toBeGreaterThanOrEqual(base.pages / WAITING - 0.5);
    // 5 pages ÷ 0.72 ≈ 7 ends, at ~0.8 a second: about eight seconds, not a minute.
    expect(next.at - base.passAt).toBeGreaterThan(4 * S);
    expect(next.at - base.passAt).toBeLessThan(16 * S);
  });

  it('spends less when nothing waits for a slot (an end noticed sooner starts nothing)', () => {
    const tasks = steady(250, 5 * MIN, 5 * MIN, base.passAt);
    const waiting = nextPassAt({ ...base, tasks });
    const idle = nextPassAt({
      ...base,
      tasks,
      spendPerEnd: noticeSpend({ waiting: false, createsPerCollector: 1.07, statusPerCollector: 0.11 }),
    });
    expect(idle.at).toBeGreaterThan(waiting.at);
    expect(idle.expected).toBeGreaterThanOrEqual(base.pages / NOTICE_SPEND_IDLE - 0.5);
  });

  it('waits for the rate the creates leave', () => {
    const tasks = steady(250, 5 * MIN, 5 * MIN, base.passAt);
    // 3.2/s less the reserve less 2.6/s of creates leaves 0.12/s: 5 pages take ~42 s of it.
    const next = nextPassAt({ ...base, tasks, createsPerSecond: 2.6 });
    const left = base.ratePerSecond * (1 - NOTICE_RATE_RESERVE) - 2.6;
    expect(next.by).toBe('rate');
    expect(next.at - base.passAt).toBe(Math.round((1000 * base.pages) / left));
    // The creates take all of it: only the notice goal's pass.
    const none = nextPassAt({ ...base, tasks, createsPerSecond: 3.2 });
    expect(none.at - base.passAt).toBe(base.latestMs);
  });

  it('nothing likely to end soon: the notice goal decides', () => {
    const tasks = steady(250, 20 * MIN, 5 * S, base.passAt);
    const next = nextPassAt({ ...base, tasks });
    expect(next).toMatchObject({ by: 'goal', at: base.passAt + base.latestMs });
    expect(nextPassAt({ ...base, tasks: [] })).toMatchObject({ by: 'goal', at: base.passAt + base.latestMs });
  });

  it('always within [the least gap, the notice goal] after the pass', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 10 * S, max: 30 * MIN }),
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: NOTICE_SPEND_IDLE, max: NOTICE_SPEND_MAX, noNaN: true }),
        fc.double({ min: 0.5, max: 40, noNaN: true }),
        fc.double({ min: 0, max: 40, noNaN: true }),
        fc.integer({ min: 0, max: 5 * MIN }),
        (n, median, pages, spendPerEnd, rate, creates, latestMs) => {
          const tasks = steady(n, median, 2 * median, base.passAt);
          const next = nextPassAt({
            passAt: base.passAt,
            tasks,
            pages,
            spendPerEnd,
            ratePerSecond: rate,
            createsPerSecond: creates,
            latestMs,
          });
          expect(next.at - base.passAt).toBeGreaterThanOrEqual(
            Math.min(NOTICE_MIN_GAP_MS, Math.max(NOTICE_MIN_GAP_MS, latestMs)),
          );
          expect(next.at - base.passAt).toBeLessThanOrEqual(Math.max(NOTICE_MIN_GAP_MS, latestMs));
        },
      ),
    );
  });
});
