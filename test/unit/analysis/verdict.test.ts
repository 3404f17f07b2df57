import { describe, expect, it } from 'vitest';
import { nextDue } from '../../../src/analysis/next-due.js';
import { queryKey } from '../../../src/analysis/query-key.js';
import { findRecord, recordMeasurement, startAnalysis } from '../../../src/analysis/record-measurement.js';
import {
  AnalysisRun,
  DETAIL_MAX_LENGTH,
  MEASUREMENTS_KEPT,
  type Measurement,
  type MeasurementOutcome,
  RECORDS_KEPT,
} from '../../../src/analysis/schema.js';
import { verdict } from '../../../src/analysis/verdict.js';
import {
  type AnalysisQuery,
  type AnalysisQueryInput,
  AnalysisQuery as Query,
} from '../../../src/policy/analysis.js';

const T0 = 1_700_000_000_000;
const MIN = 60_000;

function query(overrides: Partial<AnalysisQueryInput> = {}): AnalysisQuery {
  return Query.parse({
    name: 'error-share',
    prometheus: 'http://prometheus:9090',
    query: 'error_share',
    condition: { below: 0.05 },
    ...overrides,
  });
}

const m = (outcome: MeasurementOutcome, at: number, detail = `${outcome} at ${at}`): Measurement => ({
  at,
  outcome,
  detail,
});

/** A run of `q` with the given outcomes recorded a minute apart. */
function runWith(q: AnalysisQuery, outcomes: MeasurementOutcome[]) {
  let run = startAnalysis(T0);
  outcomes.forEach((o, i) => {
    run = recordMeasurement(run, q, m(o, T0 + i * MIN));
  });
  return run;
}

describe('verdict of one query (defaults: count 5, failureLimit 0, inconclusiveLimit 1)', () => {
  const q = query();
  const statusOf = (outcomes: MeasurementOutcome[], spec = q) =>
    verdict(runWith(spec, outcomes), [spec]).status;

  it('is running before any measurement and until count measurements are done', () => {
    expect(statusOf([])).toBe('running');
    expect(statusOf(['pass', 'pass', 'pass', 'pass'])).toBe('running');
    expect(statusOf(['pass', 'inconclusive', 'pass'])).toBe('running');
  });

  it('passes after count measurements without exceeding either limit', () => {
    expect(statusOf(['pass', 'pass', 'pass', 'pass', 'pass'])).toBe('passed');
    expect(statusOf(['pass', 'inconclusive', 'pass', 'pass', 'pass'])).toBe('passed');
  });

  it('fails at the first failure beyond failureLimit, without waiting for count', () => {
    expect(statusOf(['fail'])).toBe('failed');
    expect(statusOf(['pass', 'pass', 'pass', 'pass', 'fail'])).toBe('failed');
  });

  it('is inconclusive once inconclusive measurements exceed inconclusiveLimit', () => {
    expect(statusOf(['inconclusive'])).toBe('running');
    expect(statusOf(['inconclusive', 'pass', 'inconclusive'])).toBe('inconclusive');
  });

  it('honours higher limits', () => {
    const lenient = query({ count: 6, failureLimit: 2, inconclusiveLimit: 2 });
    expect(statusOf(['fail', 'fail', 'inconclusive', 'inconclusive', 'pass', 'pass'], lenient)).toBe(
      'passed',
    );
    expect(statusOf(['fail', 'fail', 'fail'], lenient)).toBe('failed');
    expect(statusOf(['inconclusive', 'inconclusive', 'inconclusive'], lenient)).toBe('inconclusive');
  });

  it('is inconclusive, never passed, when count is reached with no passing measurement', () => {
    // The schema refuses such limits; a state written by an older policy must still not pass.
    const loose = { ...query({ count: 2, inconclusiveLimit: 1 }), failureLimit: 1 };
    expect(statusOf(['fail', 'inconclusive'], loose)).toBe('inconclusive');
    expect(verdict(runWith(loose, ['fail', 'inconclusive']), [loose]).reason).toMatch(
      /none of 2 measurements passed/,
    );
  });

  it('explains the verdict in one sentence with the deciding measurement', () => {
    let run = startAnalysis(T0);
    run = recordMeasurement(run, q, { ...m('pass', T0), value: 0.01, detail: '0.01 is below 0.05' });
    run = recordMeasurement(run, q, {
      ...m('fail', T0 + MIN),
      value: 0.12,
      detail: '0.12 is not below 0.05',
    });
    const v = verdict(run, [q]);
    expect(v).toMatchObject({
      status: 'failed',
      reason: 'error-share: 1 of 2 measurements failed (failureLimit 0); last: 0.12 is not below 0.05',
    });
    expect(v.queries[0]).toMatchObject({ name: 'error-share', done: 2, pass: 1, fail: 1, inconclusive: 0 });
    expect(v.queries[0]?.last?.value).toBe(0.12);
    const inconclusive = runWith(q, ['inconclusive', 'inconclusive']);
    expect(verdict(inconclusive, [q]).reason).toBe(
      `error-share: 2 of 2 measurements inconclusive (inconclusiveLimit 1); last: inconclusive at ${T0 + MIN}`,
    );
    expect(verdict(runWith(q, ['pass', 'pass']), [q]).reason).toBe(`measuring: error-share 2 of 5`);
    expect(verdict(runWith(q, Array(5).fill('pass')), [q]).reason).toBe(
      'every query held: error-share 5 of 5 passed',
    );
  });
});

describe('verdict of several queries', () => {
  const a = query({ name: 'a', query: 'a' });
  const b = query({ name: 'b', query: 'b', count: 2, inconclusiveLimit: 0 });
  const record = (run: AnalysisRun, q: AnalysisQuery, outcomes: MeasurementOutcome[]) =>
    outcomes.reduce((r, o, i) => recordMeasurement(r, q, m(o, T0 + i * MIN)), run);

  it('fails when any query failed, even while another is running or inconclusive', () => {
    let run = record(startAnalysis(T0), a, ['pass']);
    run = record(run, b, ['fail']);
    expect(verdict(run, [a, b]).status).toBe('failed');
    run = record(startAnalysis(T0), a, ['inconclusive', 'inconclusive']);
    run = record(run, b, ['fail']);
    expect(verdict(run, [a, b])).toMatchObject({
      status: 'failed',
      reason: expect.stringMatching(/^b: 1 of 1/),
    });
  });

  it('is inconclusive when any query is, and none failed', () => {
    const run = record(record(startAnalysis(T0), a, ['pass']), b, ['inconclusive']);
    expect(verdict(run, [a, b]).status).toBe('inconclusive');
  });

  it('passes only when every query passed', () => {
    let run = record(startAnalysis(T0), b, ['pass', 'pass']);
    expect(verdict(run, [a, b]).status).toBe('running');
    run = record(run, a, Array(5).fill('pass'));
    expect(verdict(run, [a, b])).toMatchObject({
      status: 'passed',
      reason: 'every query held: a 5 of 5 passed, b 2 of 2 passed',
    });
  });

  it('passes a gate without queries', () => {
    expect(verdict(startAnalysis(T0), []).status).toBe('passed');
  });

  it('names an unnamed query by its place', () => {
    const unnamed = Query.parse({ prometheus: 'http://p:9090', query: 'x', condition: { above: 1 } });
    expect(verdict(runWith(unnamed, ['fail']), [a, unnamed]).reason).toMatch(/^query 2: /);
  });
});

describe('recordMeasurement', () => {
  const q = query();

  it('counts every measurement but keeps only the last ones, detail clipped', () => {
    const lenient = query({ count: 100, inconclusiveLimit: 99 });
    let run = startAnalysis(T0);
    for (let i = 0; i < 50; i++)
      run = recordMeasurement(run, lenient, { ...m('inconclusive', T0 + i * MIN), detail: 'x'.repeat(1000) });
    const record = findRecord(run, lenient);
    expect(record?.inconclusive).toBe(50);
    expect(record?.measurements).toHaveLength(MEASUREMENTS_KEPT);
    expect(record?.measurements[0]?.at).toBe(T0 + 40 * MIN);
    expect(record?.measurements[0]?.detail).toHaveLength(DETAIL_MAX_LENGTH);
    expect(JSON.stringify(run).length).toBeLessThan(MEASUREMENTS_KEPT * (DETAIL_MAX_LENGTH + 100));
  });

  it('drops measurements once the query has a verdict, and leaves its input unchanged', () => {
    const failed = runWith(q, ['fail']);
    const copy = structuredClone(failed);
    expect(recordMeasurement(failed, q, m('pass', T0 + MIN))).toBe(failed);
    expect(failed).toEqual(copy);
    const passed = runWith(q, Array(5).fill('pass'));
    expect(findRecord(recordMeasurement(passed, q, m('fail', T0 + 9 * MIN)), q)?.fail).toBe(0);
  });

  it('keeps only finite values, so that the state is JSON', () => {
    const run = recordMeasurement(startAnalysis(T0), q, { ...m('inconclusive', T0), value: Number.NaN });
    expect(findRecord(run, q)?.measurements[0]).not.toHaveProperty('value');
  });

  it('survives a round trip through JSON and its schema (what Redis stores)', () => {
    let run = runWith(q, ['pass', 'inconclusive']);
    run = recordMeasurement(run, query({ query: 'other' }), { ...m('fail', T0), value: 0.2 });
    const back = AnalysisRun.parse(JSON.parse(JSON.stringify(run)));
    expect(back).toEqual(run);
    expect(verdict(back, [q]).status).toBe('running');
    expect(AnalysisRun.safeParse({ startedAt: T0, queries: [{ key: 'x' }] }).success).toBe(false);
  });

  it('keeps the counts of a query whose limits change, and starts afresh when what it measures changes', () => {
    const run = runWith(q, ['pass', 'pass']);
    expect(findRecord(run, { ...q, count: 3, failureLimit: 1 })?.pass).toBe(2);
    expect(findRecord(run, { ...q, condition: { below: 0.1 } })).toBeUndefined();
    expect(queryKey(q)).toBe(queryKey(query({ name: 'renamed', count: 9 })));
    expect(queryKey(q)).not.toBe(queryKey({ ...q, prometheus: 'http://other:9090' }));
  });

  it('keeps a bounded number of query records, dropping the least recently measured', () => {
    let run = startAnalysis(T0);
    for (let i = 0; i < RECORDS_KEPT + 5; i++)
      run = recordMeasurement(run, query({ query: `q${i}` }), m('pass', T0));
    expect(run.queries).toHaveLength(RECORDS_KEPT);
    expect(findRecord(run, query({ query: 'q0' }))).toBeUndefined();
    expect(findRecord(run, query({ query: `q${RECORDS_KEPT + 4}` }))).toBeDefined();
  });
});

describe('nextDue', () => {
  const a = query({ name: 'a', query: 'a', interval: '1m' });
  const b = query({ name: 'b', query: 'b', interval: '5m', timeout: '10s' });

  it('makes every query due when the run starts', () => {
    expect(nextDue(startAnalysis(T0), [a, b], T0)).toEqual({ due: [a, b], nextAt: T0 });
    expect(nextDue(startAnalysis(T0), [a, b], T0 - 1)).toEqual({ due: [], nextAt: T0 });
  });

  it('makes a query due an interval after its last measurement', () => {
    let run = recordMeasurement(startAnalysis(T0), a, m('pass', T0 + 2_000));
    run = recordMeasurement(run, b, m('pass', T0 + 3_000));
    expect(nextDue(run, [a, b], T0 + 3_000)).toEqual({ due: [], nextAt: T0 + 2_000 + MIN });
    expect(nextDue(run, [a, b], T0 + 2_000 + MIN).due).toEqual([a]);
    expect(nextDue(run, [a, b], T0 + 10 * MIN)).toEqual({ due: [a, b], nextAt: T0 + 2_000 + MIN });
  });

  it('skips a query whose verdict is settled while the others go on', () => {
    const short = query({ name: 'short', query: 's', count: 1, inconclusiveLimit: 0 });
    const run = recordMeasurement(startAnalysis(T0), short, m('pass', T0));
    expect(nextDue(run, [short, a], T0)).toEqual({ due: [a], nextAt: T0 });
  });

  it('makes nothing due once the run has a verdict', () => {
    const run = recordMeasurement(startAnalysis(T0), a, m('fail', T0));
    expect(nextDue(run, [a, b], T0 + 60 * MIN)).toEqual({ due: [], nextAt: undefined });
  });

  it('walks a whole analysis: 5 measurements a minute apart pass at T0 + 4 min', () => {
    let run = startAnalysis(T0);
    let now = T0;
    const times: number[] = [];
    for (let step = 0; step < 10; step++) {
      const { due, nextAt } = nextDue(run, [a], now);
      if (nextAt === undefined) break;
      for (const q of due) {
        times.push(now);
        run = recordMeasurement(run, q, m('pass', now));
      }
      now = nextDue(run, [a], now).nextAt ?? now;
    }
    expect(times).toEqual([0, 1, 2, 3, 4].map((i) => T0 + i * MIN));
    expect(verdict(run, [a]).status).toBe('passed');
  });
});
