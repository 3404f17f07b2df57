/**
 * A Collector's life (src/rollout/collector/collector-state.ts), table-driven: every predicate against the
 * states' table as documented, `transition` against TRANSITIONS for every state × event (nothing
 * outside the table, ever), and the rules of each move: retries of not-alive and erroring
 * creates with their back-offs and limits, status errors that hand a task over to the listings,
 * admissions (and the wave of the first), attempts, supersession, an abort (only what has not
 * sent a create) and an operator's retry (only from an outcome, counted as a retry of the same
 * Collector).
 */
import { describe, expect, it } from 'vitest';
import { STATE_LABELS as LABELS_OF_STATUS } from '../../../src/cli/render/format-status.js';
import { RetryBody, RollbackBody } from '../../../src/http/schema.js';
import { METRIC_STATES as METRICS_OF_THE_METRICS } from '../../../src/metrics/create-metrics.js';
import { GATED_OUTCOMES } from '../../../src/policy/failure-gate.js';
import * as door from '../../../src/rollout/collector/index.js';
import {
  ACTIVE_STATES,
  COLLECTOR_STATES,
  type CollectorEvent,
  type CollectorEventType,
  type CollectorRecord,
  type CollectorState,
  countsByMetricState,
  FINAL_STATES,
  gateClass,
  grownBackoff,
  holdsSlot,
  indexOf,
  isAllowed,
  isCollectorState,
  isFinal,
  isSettled,
  type LifeSettings,
  METRIC_STATES,
  type MetricState,
  metricState,
  NOT_FOUND_LIMIT,
  needsJob,
  newRecord,
  type Owner,
  ownerOf,
  SETTLED_STATES,
  SLOT_STATES,
  STARTED_ACTIVE_STATES,
  STATUS_ERROR_LIMIT,
  TRANSITIONS,
  transition,
} from '../../../src/rollout/collector/index.js';

const NOW = Date.UTC(2025, 0, 6, 9, 0, 0);

const SETTINGS: LifeSettings = {
  notAliveAttempts: 3,
  notAliveBackoffMs: 600_000,
  errorAttempts: 3,
  errorBackoffMs: 60_000,
  transientAttempts: 5,
  transientBackoffMs: 30_000,
  maxBackoffMs: 30 * 60_000,
};

/** What each state is, as the module's header and docs describe it (restated, not read from it). */
const TABLE: Record<
  CollectorState,
  {
    slot: boolean;
    owner: Owner;
    settled: boolean;
    final: boolean;
    metric: MetricState;
    gate: 'bad' | 'good' | 'sample' | 'none';
    index?: 'queued' | 'retries' | 'reconciling' | 'verifying';
  }
> = {
  queued: {
    slot: false,
    owner: 'scheduler',
    settled: false,
    final: false,
    metric: 'queued',
    gate: 'none',
    index: 'queued',
  },
  waiting_retry: {
    slot: false,
    owner: 'scheduler',
    settled: false,
    final: false,
    metric: 'waiting_retry',
    gate: 'none',
    index: 'retries',
  },
  admitted: { slot: true, owner: 'worker', settled: false, final: false, metric: 'pending', gate: 'none' },
  creating: { slot: true, owner: 'worker', settled: false, final: false, metric: 'pending', gate: 'none' },
  pending: { slot: true, owner: 'worker', settled: false, final: false, metric: 'pending', gate: 'none' },
  progressing: {
    slot: true,
    owner: 'worker',
    settled: false,
    final: false,
    metric: 'progressing',
    gate: 'none',
  },
  reconciling: {
    slot: true,
    owner: 'scheduler',
    settled: false,
    final: false,
    metric: 'pending',
    gate: 'none',
    index: 'reconciling',
  },
  // A task that succeeded, until the listings show the Collector alive on the build: no slot.
  verifying: {
    slot: false,
    owner: 'scheduler',
    settled: false,
    final: false,
    metric: 'verifying',
    gate: 'none',
    index: 'verifying',
  },
  succeeded: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'succeeded', gate: 'good' },
  unhealthy: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'unhealthy', gate: 'bad' },
  // On the worklist: an operator's, not the gate's.
  manual: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'manual', gate: 'none' },
  // An outcome nobody can know (a create cut off, the Collector offered again): never judged.
  unknown: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'unknown', gate: 'none' },
  quarantined: {
    slot: false,
    owner: 'nobody',
    settled: true,
    final: true,
    metric: 'quarantined',
    gate: 'none',
  },
  failed: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'failed', gate: 'bad' },
  timed_out: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'timed_out', gate: 'bad' },
  not_alive: {
    slot: false,
    owner: 'scheduler',
    settled: true,
    final: false,
    metric: 'not_alive',
    gate: 'sample',
  },
  rejected: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'rejected', gate: 'sample' },
  error: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'error', gate: 'bad' },
  skipped: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'skipped', gate: 'none' },
  aborted: { slot: false, owner: 'nobody', settled: true, final: true, metric: 'aborted', gate: 'none' },
};

/** Every event type, with the variants that take different paths. */
const EVENTS: Record<CollectorEventType, CollectorEvent[]> = {
  discover: [{ type: 'discover' }],
  admit: [{ type: 'admit' }, { type: 'admit', wave: 2 }],
  send: [{ type: 'send' }],
  resend: [{ type: 'resend' }],
  withdraw: [{ type: 'withdraw', message: 'the rollout is paused' }],
  created: [{ type: 'created', taskId: '42', requestTime: NOW - 1000, createdBy: 'host:1' }],
  not_alive: [{ type: 'not_alive', message: 'Collector is not alive' }],
  create_error: [
    { type: 'create_error', transient: true, message: '503 Service Unavailable' },
    { type: 'create_error', transient: false, message: '403 Forbidden' },
  ],
  rejected: [{ type: 'rejected', message: 'collector.invalid: no such Collector' }],
  org_refused: [{ type: 'org_refused', message: 'org emea: credentials refused (401)' }],
  task_unknown: [
    { type: 'task_unknown', proven: true, message: 'an unreadable 202' },
    { type: 'task_unknown', proven: false, message: 'no answer' },
  ],
  outcome_unknown: [{ type: 'outcome_unknown', message: 'offered again after an unanswered create' }],
  status: [
    { type: 'status', status: 0 },
    { type: 'status', status: 1 },
    { type: 'status', status: 6 },
  ],
  status_error: [
    { type: 'status_error', notFound: true, message: 'task not found' },
    { type: 'status_error', notFound: false, message: '400 unreadable' },
    { type: 'status_error', notFound: false, message: 'no status past the deadline', exhausted: true },
  ],
  succeeded: [{ type: 'succeeded', status: 2 }, { type: 'succeeded' }],
  verify: [{ type: 'verify', status: 2, dueAt: NOW + 60_000 }],
  verify_later: [{ type: 'verify_later', message: 'not listed', dueAt: NOW + 60_000 }],
  seen_on_build: [{ type: 'seen_on_build', mark: NOW - 5000, dueAt: NOW + 300_000 }],
  verified: [{ type: 'verified' }, { type: 'verified', message: 'unverified: turned off' }],
  unhealthy: [{ type: 'unhealthy', message: 'stopped heartbeating' }],
  cause_retry: [
    {
      type: 'cause_retry',
      message: 'No space left on device',
      failureClass: 'disk_space',
      backoffMs: 600_000,
      status: 3,
    },
  ],
  manual: [
    { type: 'manual', message: 'Upgrades are disabled', failureClass: 'upgrades_disabled', status: 3 },
  ],
  known_issue: [
    { type: 'known_issue', action: 'skip', note: 'stops until restarted by hand' },
    { type: 'known_issue', action: 'manual', note: 'stops until restarted by hand' },
  ],
  quarantine: [{ type: 'quarantine', message: 'cohort linux/arm64 quarantined' }],
  failed: [
    { type: 'failed', message: 'Upgrade failed', status: 3 },
    { type: 'failed', message: 'failed (listing)' },
  ],
  timed_out: [{ type: 'timed_out', message: 'no final status in 35m' }],
  seen_alive: [{ type: 'seen_alive' }],
  retarget: [{ type: 'retarget', to: '19.480-2', kind: 'Linux:1' }],
  supersede: [{ type: 'supersede', message: 'superseded by a newer rollout' }],
  abort: [{ type: 'abort', message: 'rollout aborted (by ops@host)' }],
  operator_retry: [{ type: 'operator_retry', message: 'retried by ops@host' }],
};
const EVENT_TYPES = Object.keys(EVENTS) as CollectorEventType[];
const ALL_EVENTS = Object.values(EVENTS).flat();

function record(state: CollectorState, patch: Partial<CollectorRecord> = {}): CollectorRecord {
  return {
    ...newRecord(
      { id: 101, name: 'web-1', hostName: 'web-1.prod.internal', collectorVersion: '19.400-5' },
      '19.470-4',
      NOW - 3_600_000,
    ),
    state,
    ...patch,
  };
}

/** Records of a state: fresh, and one whose counters stand one short of every limit. */
function samplesOf(state: CollectorState): CollectorRecord[] {
  return [
    record(state),
    record(state, {
      attempts: 4,
      admissions: 4,
      taskId: '41',
      notAliveAnswers: SETTINGS.notAliveAttempts - 1,
      errorAnswers: SETTINGS.errorAttempts - 1,
      transientErrors: SETTINGS.transientAttempts - 1,
      statusErrors: NOT_FOUND_LIMIT - 1,
      statusReads: 9,
      nextAttemptAt: NOW - 5,
      reconcilingSince: NOW - 60_000,
      taskProven: true,
      finishedAt: NOW - 10,
    }),
    record(state, { statusErrors: STATUS_ERROR_LIMIT - 1, taskId: '41' }),
  ];
}

const ctx = (random: () => number = () => 0.5, settings: LifeSettings = SETTINGS) => ({
  now: NOW,
  settings,
  random,
});

/** The record after a move (fails the test when there is none). */
function move(r: CollectorRecord, event: CollectorEvent, c = ctx()): CollectorRecord {
  const t = transition(r, event, c);
  if (!t.ok) throw new Error(`expected a move: ${t.reason}`);
  return t.move.next;
}

/** Runs a sequence of events from a record, each at `now` advanced by a minute. */
function walk(start: CollectorRecord, events: CollectorEvent[], settings = SETTINGS): CollectorRecord {
  let r = start;
  let now = NOW;
  for (const e of events) {
    const t = transition(r, e, { now, settings, random: () => 0.5 });
    if (!t.ok) throw new Error(`${e.type} from ${r.state}: ${t.reason}`);
    r = t.move.next;
    now += 60_000;
  }
  return r;
}

const rowsFrom = (state: CollectorState | undefined, event?: CollectorEventType) =>
  TRANSITIONS.filter(([from, e]) => from === state && (event === undefined || e === event));

describe('states and their predicates', () => {
  it('lists every state once, and nothing else is a state', () => {
    expect(new Set(COLLECTOR_STATES).size).toBe(COLLECTOR_STATES.length);
    expect([...COLLECTOR_STATES].sort()).toEqual(Object.keys(TABLE).sort());
    for (const s of COLLECTOR_STATES) expect(isCollectorState(s)).toBe(true);
    for (const s of ['waiting_alive', '', 'QUEUED', 'done']) expect(isCollectorState(s)).toBe(false);
  });

  it.each(COLLECTOR_STATES)('%s: every predicate agrees with the table', (s) => {
    const info = TABLE[s];
    expect(holdsSlot(s)).toBe(info.slot);
    expect(ownerOf(s)).toBe(info.owner);
    expect(isSettled(s)).toBe(info.settled);
    expect(isFinal(s)).toBe(info.final);
    expect(metricState(s)).toBe(info.metric);
    expect(gateClass(s)).toBe(info.gate);
    expect(indexOf(s)).toBe(info.index);
    expect(needsJob(s)).toBe(info.owner === 'worker');
    expect(SLOT_STATES.includes(s)).toBe(info.slot);
    expect(SETTLED_STATES.includes(s)).toBe(info.settled);
    expect(FINAL_STATES.includes(s)).toBe(info.final);
    expect(ACTIVE_STATES.includes(s)).toBe(!info.settled);
    expect(STARTED_ACTIVE_STATES.includes(s)).toBe(!info.settled && s !== 'queued');
  });

  it('slot states are exactly those that may have an unfinished task', () => {
    expect([...SLOT_STATES]).toEqual(['admitted', 'creating', 'pending', 'progressing', 'reconciling']);
  });

  it('settled ⊇ final; not_alive is settled but not final; final states are nobody’s', () => {
    for (const s of FINAL_STATES) expect(SETTLED_STATES).toContain(s);
    expect(SETTLED_STATES.filter((s) => !isFinal(s))).toEqual(['not_alive']);
    for (const s of COLLECTOR_STATES) expect(ownerOf(s) === 'nobody').toBe(isFinal(s));
    // Nothing holds a slot once settled.
    for (const s of SETTLED_STATES) expect(holdsSlot(s)).toBe(false);
  });

  it('a job is needed exactly in admitted, creating, pending and progressing', () => {
    expect(COLLECTOR_STATES.filter(needsJob)).toEqual(['admitted', 'creating', 'pending', 'progressing']);
  });

  it('only queued, waiting_retry, reconciling and verifying are kept in an index', () => {
    expect(COLLECTOR_STATES.filter((s) => indexOf(s) !== undefined)).toEqual([
      'queued',
      'waiting_retry',
      'reconciling',
      'verifying',
    ]);
    expect(indexOf('verifying')).toBe('verifying');
    expect(indexOf('queued')).toBe('queued');
    expect(indexOf('waiting_retry')).toBe('retries');
    expect(indexOf('reconciling')).toBe('reconciling');
  });

  it('every metric state is shown by the state of its name; counts fold onto every metric state', () => {
    for (const m of METRIC_STATES) expect(metricState(m)).toBe(m);
    const all = Object.fromEntries(COLLECTOR_STATES.map((s, i) => [s, i + 1]));
    const folded = countsByMetricState(all);
    expect(Object.keys(folded)).toEqual([...METRIC_STATES]);
    for (const m of METRIC_STATES)
      expect(folded[m]).toBe(
        COLLECTOR_STATES.filter((s) => TABLE[s].metric === m).reduce((n, s) => n + (all[s] ?? 0), 0),
      );
  });
});

describe('every list of states is a column of the one table', () => {
  // The lists as the product shows them (restated, not read from the table): each must come out of
  // the table's columns, and each module that shows one must show that one.
  it('METRIC_STATES: the metric column, in the table’s order; the metrics use it', () => {
    expect([...METRIC_STATES]).toEqual([
      'queued',
      'waiting_retry',
      'pending',
      'progressing',
      'verifying',
      'succeeded',
      'failed',
      'timed_out',
      'unhealthy',
      'not_alive',
      'rejected',
      'error',
      'manual',
      'unknown',
      'quarantined',
      'skipped',
      'aborted',
    ]);
    expect([...new Set(COLLECTOR_STATES.map((s) => TABLE[s].metric))]).toEqual([...METRIC_STATES]);
    expect(METRICS_OF_THE_METRICS).toBe(METRIC_STATES);
  });

  it('RETRYABLE_STATES: the states with an operator_retry row; control and the HTTP API use it', () => {
    const derived = TRANSITIONS.filter(([, e]) => e === 'operator_retry').map(([from]) => from);
    expect([...door.RETRYABLE_STATES]).toEqual(derived);
    expect([...door.RETRYABLE_STATES]).toEqual([
      'failed',
      'timed_out',
      'not_alive',
      'error',
      'rejected',
      'unhealthy',
      'manual',
      'quarantined',
      'unknown',
    ]);
    for (const s of COLLECTOR_STATES)
      expect(RetryBody.safeParse({ only: [s] }).success, s).toBe(door.RETRYABLE_STATES.includes(s));
  });

  it('status labels: the label column, by rank; `status` shows them', () => {
    expect(door.STATE_LABELS).toEqual([
      ['succeeded', 'ok'],
      ['verifying', 'verifying'],
      ['failed', 'failed'],
      ['timed_out', 'timed_out'],
      ['unhealthy', 'unhealthy'],
      ['error', 'error'],
      ['manual', 'worklist'],
      ['unknown', 'unknown'],
      ['quarantined', 'quarantined'],
      ['not_alive', 'not_alive'],
      ['rejected', 'rejected'],
      ['waiting_retry', 'retrying'],
      ['skipped', 'skipped'],
      ['aborted', 'aborted'],
      ['queued', 'queued'],
    ]);
    // The in-flight states have no label: `status` shows them in a column of their own.
    const labelled = door.STATE_LABELS.map(([m]) => m);
    expect(METRIC_STATES.filter((m) => !labelled.includes(m))).toEqual(['pending', 'progressing']);
    expect(LABELS_OF_STATUS).toBe(door.STATE_LABELS);
  });

  it('the gate, the listing, rollback: each list is a column', () => {
    expect([...door.GATED_STATES]).toEqual(
      COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad' || gateClass(s) === 'sample'),
    );
    // The policy file's `failureGate.<outcome>` keys are the states the gate counts, no other.
    expect([...GATED_OUTCOMES].sort()).toEqual([...door.GATED_STATES].sort());
    expect([...door.OFF_LISTING_STATES]).toEqual([
      'pending',
      'progressing',
      'verifying',
      'succeeded',
      'unhealthy',
    ]);
    expect([...door.ROLLBACK_STATES]).toEqual(['succeeded', 'verifying', 'unhealthy', 'failed', 'timed_out']);
    expect([...door.DEFAULT_ROLLBACK_STATES]).toEqual(['unhealthy', 'failed', 'timed_out']);
    expect([...door.WAVE_ROLLBACK_STATES]).toEqual(['succeeded', 'verifying', 'unhealthy']);
    for (const s of COLLECTOR_STATES)
      expect(RollbackBody.safeParse({ only: [s] }).success, s).toBe(door.ROLLBACK_STATES.includes(s));
  });
});

describe('the transition table', () => {
  it('has only known states and event types, and no row twice', () => {
    const seen = new Set<string>();
    for (const [from, event, to] of TRANSITIONS) {
      if (from !== undefined) expect(COLLECTOR_STATES).toContain(from);
      expect(COLLECTOR_STATES).toContain(to);
      expect(EVENT_TYPES).toContain(event);
      const key = `${from}|${event}|${to}`;
      expect(seen.has(key), key).toBe(false);
      seen.add(key);
      expect(isAllowed(from, event, to)).toBe(true);
    }
  });

  it('final states leave only by operator_retry; not_alive reopens when seen alive or retried', () => {
    for (const s of FINAL_STATES)
      for (const [, event, to] of rowsFrom(s)) {
        expect(event, s).toBe('operator_retry');
        expect(to, s).toBe('waiting_retry');
      }
    // Outcomes are retried; a success, a skip and an abort are for good.
    for (const s of [
      'failed',
      'timed_out',
      'error',
      'rejected',
      'unhealthy',
      'manual',
      'quarantined',
    ] as const)
      expect(rowsFrom(s)).toEqual([[s, 'operator_retry', 'waiting_retry']]);
    // Reached only from reconciling (what became of its task cannot be known), left only by a retry.
    expect(rowsFrom('unknown')).toEqual([['unknown', 'operator_retry', 'waiting_retry']]);
    expect(TRANSITIONS.filter(([, , to]) => to === 'unknown')).toEqual([
      ['reconciling', 'outcome_unknown', 'unknown'],
    ]);
    for (const s of ['succeeded', 'skipped', 'aborted'] as const) expect(rowsFrom(s)).toEqual([]);
    expect(rowsFrom('not_alive')).toHaveLength(2);
    expect(rowsFrom('not_alive')).toContainEqual(['not_alive', 'seen_alive', 'queued']);
    expect(rowsFrom('not_alive')).toContainEqual(['not_alive', 'operator_retry', 'waiting_retry']);
  });

  it('abort leaves only states without a task, to aborted; operator_retry only outcomes, to waiting_retry', () => {
    expect(TRANSITIONS.filter(([, e]) => e === 'abort')).toEqual([
      ['queued', 'abort', 'aborted'],
      ['waiting_retry', 'abort', 'aborted'],
      ['admitted', 'abort', 'aborted'],
    ]);
    expect(TRANSITIONS.filter(([, , to]) => to === 'aborted').map(([, e]) => e)).toEqual([
      'abort',
      'abort',
      'abort',
    ]);
    expect(
      TRANSITIONS.filter(([, e]) => e === 'operator_retry')
        .map(([from, , to]) => `${from}->${to}`)
        .sort(),
    ).toEqual(
      [
        'error',
        'failed',
        'manual',
        'not_alive',
        'quarantined',
        'rejected',
        'timed_out',
        'unhealthy',
        'unknown',
      ].map((s) => `${s}->waiting_retry`),
    );
  });

  it('a slot is taken only by admit, and admitted is reached only by admit from a state without a task', () => {
    for (const [from, event, to] of TRANSITIONS) {
      const took = holdsSlot(to) && (from === undefined || !holdsSlot(from));
      expect(took, `${from} -${event}-> ${to}`).toBe(event === 'admit');
      if (to === 'admitted') expect(['queued', 'waiting_retry']).toContain(from);
    }
  });

  it('only send and resend lead into creating, and send only leaves admitted', () => {
    expect(TRANSITIONS.filter(([, , to]) => to === 'creating').map(([from, e]) => `${from}:${e}`)).toEqual([
      'admitted:send',
      'creating:resend',
    ]);
    expect(TRANSITIONS.filter(([, e]) => e === 'send')).toEqual([['admitted', 'send', 'creating']]);
  });

  it('a record comes into being only by discover, as queued', () => {
    expect(rowsFrom(undefined)).toEqual([[undefined, 'discover', 'queued']]);
    for (const s of COLLECTOR_STATES)
      for (const e of EVENT_TYPES)
        expect(isAllowed(undefined, e, s)).toBe(e === 'discover' && s === 'queued');
  });

  it('every state but the first can be reached', () => {
    const reached = new Set(TRANSITIONS.map(([, , to]) => to));
    expect(COLLECTOR_STATES.filter((s) => !reached.has(s))).toEqual([]);
  });
});

describe('transition against the table', () => {
  it('refuses discover and any event without a record (new records come from newRecord)', () => {
    for (const e of ALL_EVENTS) {
      const t = transition(undefined, e, ctx());
      expect(t.ok).toBe(false);
      if (!t.ok) expect(t.reason).toBe(`no transition from nothing on ${e.type}`);
    }
    for (const s of COLLECTOR_STATES)
      expect(transition(record(s), { type: 'discover' }, ctx()).ok).toBe(false);
  });

  it.each(COLLECTOR_STATES)('%s: refuses every event not in the table, and moves only along it', (s) => {
    for (const r of samplesOf(s))
      for (const e of ALL_EVENTS)
        for (const random of [() => 0, () => 0.5, () => 0.999_999]) {
          const t = transition(r, e, ctx(random));
          const rows = rowsFrom(s, e.type);
          if (rows.length === 0) {
            expect(t.ok, `${s} on ${e.type}`).toBe(false);
            if (!t.ok) expect(t.reason).toBe(`no transition from ${s} on ${e.type}`);
            continue;
          }
          if (!t.ok) continue; // a row may be conditional; refusing is always safe
          expect(t.move.from).toBe(s);
          expect(t.move.event).toBe(e.type);
          expect(isAllowed(s, e.type, t.move.next.state), `${s} -${e.type}-> ${t.move.next.state}`).toBe(
            true,
          );
          // Who it is never changes, and neither do the builds: only `retarget` gives it another
          // target (its organization's build moved on), and only that.
          const to = e.type === 'retarget' ? e.to : r.to;
          expect(t.move.next).toMatchObject({ id: r.id, name: r.name, from: r.from, to });
          expect(t.move.next.discoveredAt).toBe(r.discoveredAt);
        }
  });

  it('accepts some variant of every (state, event) the table names', () => {
    for (const [from, event] of TRANSITIONS) {
      if (from === undefined) continue;
      const ok = samplesOf(from).some((r) => EVENTS[event].some((e) => transition(r, e, ctx()).ok));
      expect(ok, `${from} on ${event}`).toBe(true);
    }
  });

  it('never lowers attempts (but to take back a send that never went out) or admissions, on any move', () => {
    for (const s of COLLECTOR_STATES)
      for (const r of samplesOf(s))
        for (const e of ALL_EVENTS) {
          const t = transition(r, e, ctx());
          if (!t.ok) continue;
          // A withdraw from creating: the pre-write was not confirmed and no create went out.
          const takenBack = s === 'creating' && e.type === 'withdraw';
          expect(t.move.next.attempts, `${s} on ${e.type}`).toBeGreaterThanOrEqual(
            takenBack ? Math.max(0, r.attempts - 1) : r.attempts,
          );
          expect(t.move.next.admissions, `${s} on ${e.type}`).toBeGreaterThanOrEqual(r.admissions);
          // Only send adds an attempt; only admit adds an admission.
          expect(t.move.next.attempts - r.attempts).toBe(
            e.type === 'send' ? 1 : takenBack ? Math.max(0, r.attempts - 1) - r.attempts : 0,
          );
          expect(t.move.next.admissions - r.admissions).toBe(e.type === 'admit' ? 1 : 0);
        }
  });

  it('is pure: the record it is given is left as it was', () => {
    for (const s of COLLECTOR_STATES)
      for (const r of samplesOf(s)) {
        const frozen = Object.freeze({ ...r });
        for (const e of ALL_EVENTS) transition(frozen, e, ctx());
        expect(frozen).toEqual(r);
      }
  });

  it('stamps finishedAt on every move to a settled state', () => {
    for (const s of COLLECTOR_STATES)
      for (const e of ALL_EVENTS) {
        const t = transition(record(s), e, ctx());
        if (t.ok && isSettled(t.move.next.state))
          expect(t.move.next.finishedAt, `${s} on ${e.type}`).toBe(NOW);
      }
  });
});

describe('not alive', () => {
  const notAlive: CollectorEvent = { type: 'not_alive', message: 'Collector is not alive' };

  it('waits for a retry at now + notAliveBackoffMs while answers are left', () => {
    const r = move(record('creating', { attempts: 1 }), notAlive);
    expect(r).toMatchObject({
      state: 'waiting_retry',
      notAliveAnswers: 1,
      nextAttemptAt: NOW + SETTINGS.notAliveBackoffMs,
      message: 'Collector is not alive',
      attempts: 1,
    });
    expect(r.finishedAt).toBeUndefined();
  });

  it('ends not_alive at the notAliveAttempts-th answer, keeping the last message', () => {
    const cycle = (message: string): CollectorEvent[] => [
      { type: 'admit' },
      { type: 'send' },
      { type: 'not_alive', message },
    ];
    const r = walk(record('queued'), [...cycle('first'), ...cycle('second'), ...cycle('third: still down')]);
    expect(r).toMatchObject({
      state: 'not_alive',
      notAliveAnswers: 3,
      attempts: 3,
      admissions: 3,
      message: 'third: still down',
    });
    expect(r.finishedAt).toBeDefined();
    const before = walk(record('queued'), [...cycle('first'), ...cycle('second')]);
    expect(before).toMatchObject({ state: 'waiting_retry', notAliveAnswers: 2, message: 'second' });
  });

  it('with notAliveAttempts 1 the first answer ends it', () => {
    const t = transition(record('creating'), notAlive, ctx(undefined, { ...SETTINGS, notAliveAttempts: 1 }));
    expect(t.ok && t.move.next).toMatchObject({ state: 'not_alive', notAliveAnswers: 1, finishedAt: NOW });
  });

  it('seen alive again: queued, answers reset, no outcome any more', () => {
    const ended = move(record('creating', { notAliveAnswers: 2 }), notAlive);
    expect(ended.state).toBe('not_alive');
    const r = move(ended, { type: 'seen_alive' });
    expect(r).toMatchObject({ state: 'queued', notAliveAnswers: 0 });
    expect(r.finishedAt).toBeUndefined();
    expect(r.attempts).toBe(ended.attempts);
    // And it may go round again in full.
    expect(move(move(move(r, { type: 'admit' }), { type: 'send' }), notAlive)).toMatchObject({
      state: 'waiting_retry',
      notAliveAnswers: 1,
    });
  });
});

describe('create errors', () => {
  const transient = (message = '503'): CollectorEvent => ({ type: 'create_error', transient: true, message });
  const hard = (message = '403'): CollectorEvent => ({ type: 'create_error', transient: false, message });

  it('counts transient and other errors separately', () => {
    const t = move(record('creating', { errorAnswers: 1, transientErrors: 2 }), transient());
    expect(t).toMatchObject({ state: 'waiting_retry', transientErrors: 3, errorAnswers: 1 });
    const h = move(record('creating', { errorAnswers: 1, transientErrors: 2 }), hard());
    expect(h).toMatchObject({ state: 'waiting_retry', transientErrors: 2, errorAnswers: 2 });
    // Transient errors one short of their limit do not end a Collector on its first other error.
    const mixed = move(record('creating', { transientErrors: SETTINGS.transientAttempts - 1 }), hard());
    expect(mixed.state).toBe('waiting_retry');
  });

  it.each([
    ['transient', transient, SETTINGS.transientBackoffMs, 'transientErrors'],
    ['other', hard, SETTINGS.errorBackoffMs, 'errorAnswers'],
  ] as const)(
    '%s: the wait doubles with each error (no jitter at random 0.5)',
    (_kind, event, base, counter) => {
      for (let n = 0; n < 2; n++) {
        const r = move(
          record('creating', { [counter]: n }),
          event(),
          ctx(() => 0.5),
        );
        expect(r.nextAttemptAt).toBe(NOW + base * 2 ** n);
        expect(r[counter]).toBe(n + 1);
      }
    },
  );

  it('the jitter stays within ±25% of the grown wait', () => {
    const low = move(
      record('creating', { errorAnswers: 1 }),
      hard(),
      ctx(() => 0),
    );
    const high = move(
      record('creating', { errorAnswers: 1 }),
      hard(),
      ctx(() => 0.999_999),
    );
    expect(low.nextAttemptAt).toBe(NOW + 0.75 * 2 * SETTINGS.errorBackoffMs);
    expect(high.nextAttemptAt).toBe(NOW + Math.round(1.25 * 2 * SETTINGS.errorBackoffMs));
  });

  it('ends `error` at the policy’s attempts, with the last message', () => {
    const cycle = (e: CollectorEvent): CollectorEvent[] => [{ type: 'admit' }, { type: 'send' }, e];
    const r = walk(record('queued'), [
      ...cycle(hard('401 a')),
      ...cycle(hard('403 b')),
      ...cycle(hard('400 c')),
    ]);
    expect(r).toMatchObject({ state: 'error', errorAnswers: 3, attempts: 3, message: '400 c' });
    expect(r.finishedAt).toBeDefined();

    const near = record('creating', { transientErrors: SETTINGS.transientAttempts - 1 });
    const t = move(near, transient('502 Bad Gateway'));
    expect(t).toMatchObject({ state: 'error', transientErrors: SETTINGS.transientAttempts, finishedAt: NOW });
    expect(t.message).toContain('502 Bad Gateway');
    expect(t.message).toContain(`${SETTINGS.transientAttempts} transient errors`);
  });

  it('with attempts 1 the first error ends it', () => {
    const t = transition(record('creating'), hard('403'), ctx(undefined, { ...SETTINGS, errorAttempts: 1 }));
    expect(t.ok && t.move.next).toMatchObject({ state: 'error', message: '403', errorAnswers: 1 });
  });
});

describe('grownBackoff', () => {
  it('doubles from the base with n, capped, within ±25% jitter, never below 1', () => {
    const base = 1000;
    const cap = 60_000;
    for (let n = 1; n <= 30; n++) {
      const raw = Math.min(cap, base * 2 ** Math.min(n - 1, 20));
      expect(grownBackoff(base, n, cap, () => 0.5)).toBe(raw);
      expect(grownBackoff(base, n, cap, () => 0)).toBe(Math.round(raw * 0.75));
      const high = grownBackoff(base, n, cap, () => 0.999_999);
      expect(high).toBeGreaterThan(raw * 1.24);
      expect(high).toBeLessThanOrEqual(Math.round(raw * 1.25));
    }
    expect(grownBackoff(base, 1, cap, () => 0.5)).toBe(1000);
    expect(grownBackoff(base, 2, cap, () => 0.5)).toBe(2000);
    expect(grownBackoff(base, 3, cap, () => 0.5)).toBe(4000);
    expect(grownBackoff(base, 0, cap, () => 0.5)).toBe(1000);
    expect(grownBackoff(1, 1, cap, () => 0)).toBe(1);
    expect(grownBackoff(0, 5, cap, () => 0)).toBe(1);
    // A huge n neither overflows nor passes the cap.
    expect(grownBackoff(base, 10_000, Number.MAX_SAFE_INTEGER, () => 0.5)).toBe(base * 2 ** 20);
    expect(grownBackoff(base, 10_000, cap, () => 0.999_999)).toBeLessThanOrEqual(cap * 1.25);
  });
});

describe('status reads', () => {
  it('an unfinished status: 6 is progressing, 0 and 1 pending; reads counted, errors reset', () => {
    for (const from of ['pending', 'progressing'] as const) {
      expect(
        move(record(from, { statusErrors: 2, statusReads: 3 }), { type: 'status', status: 6 }),
      ).toMatchObject({
        state: 'progressing',
        lastStatus: 6,
        statusReads: 4,
        statusErrors: 0,
      });
      for (const status of [0, 1])
        expect(move(record(from), { type: 'status', status })).toMatchObject({
          state: 'pending',
          lastStatus: status,
        });
    }
  });

  it(`${NOT_FOUND_LIMIT} not-found reads in a row hand the task to the listings (reconciling, taskProven)`, () => {
    const notFound: CollectorEvent = { type: 'status_error', notFound: true, message: 'task 42 not found' };
    let r = record('progressing', { taskId: '42', statusReads: 5 });
    for (let i = 1; i < NOT_FOUND_LIMIT; i++) {
      r = move(r, notFound);
      expect(r).toMatchObject({ state: 'progressing', statusErrors: i, statusReads: 5 + i });
    }
    r = move(r, notFound);
    expect(r).toMatchObject({
      state: 'reconciling',
      statusErrors: NOT_FOUND_LIMIT,
      statusReads: 5 + NOT_FOUND_LIMIT,
      taskProven: true,
      reconcilingSince: NOW,
    });
    expect(r.message).toContain('42');
    expect(r.message).toContain('task 42 not found');
  });

  it(`${STATUS_ERROR_LIMIT} other unusable reads in a row do too, without counting as reads`, () => {
    const bad: CollectorEvent = { type: 'status_error', notFound: false, message: '400 unreadable' };
    let r = record('pending', { taskId: '42', statusReads: 5 });
    for (let i = 1; i < STATUS_ERROR_LIMIT; i++) {
      r = move(r, bad);
      expect(r).toMatchObject({ state: 'pending', statusErrors: i, statusReads: 5 });
    }
    r = move(r, bad);
    expect(r).toMatchObject({ state: 'reconciling', statusErrors: STATUS_ERROR_LIMIT, taskProven: true });
    expect(r.message).toContain('400 unreadable');
  });

  it('a usable read in between starts the count again', () => {
    const bad: CollectorEvent = { type: 'status_error', notFound: false, message: 'x' };
    const r = walk(record('pending', { taskId: '42' }), [
      ...Array<CollectorEvent>(STATUS_ERROR_LIMIT - 1).fill(bad),
      { type: 'status', status: 6 },
      ...Array<CollectorEvent>(STATUS_ERROR_LIMIT - 1).fill(bad),
    ]);
    expect(r).toMatchObject({ state: 'progressing', statusErrors: STATUS_ERROR_LIMIT - 1 });
  });

  it('a final read counts as a read; an outcome learned from the listings does not', () => {
    expect(move(record('progressing', { statusReads: 3 }), { type: 'succeeded', status: 2 })).toMatchObject({
      state: 'succeeded',
      statusReads: 4,
      lastStatus: 2,
      message: '',
      finishedAt: NOW,
    });
    expect(move(record('reconciling', { statusReads: 3 }), { type: 'succeeded' })).toMatchObject({
      state: 'succeeded',
      statusReads: 3,
    });
    expect(move(record('pending'), { type: 'failed', message: 'disk full', status: 3 })).toMatchObject({
      state: 'failed',
      message: 'disk full',
    });
  });
});

describe('admission, creates and tasks', () => {
  it('admit with a wave records the wave of the first admission only', () => {
    const first = move(record('queued'), { type: 'admit', wave: 0 });
    expect(first).toMatchObject({ state: 'admitted', wave: 0, admissions: 1 });
    // Withdrawn, then admitted again while a later wave is open: it stays in its first wave.
    const again = walk(first, [
      { type: 'withdraw', message: 'paused' },
      { type: 'admit', wave: 3 },
    ]);
    expect(again).toMatchObject({ state: 'admitted', wave: 0, admissions: 2 });
    // Without a wave nothing is recorded; a later admit with one records it then.
    const none = move(record('queued'), { type: 'admit' });
    expect(none.wave).toBeUndefined();
    expect(Object.hasOwn(none, 'wave')).toBe(false);
    const later = walk(none, [
      { type: 'withdraw', message: 'paused' },
      { type: 'admit', wave: 2 },
    ]);
    expect(later.wave).toBe(2);
    // An operator's retry keeps the wave too.
    const retried = move(record('failed', { wave: 1, retries: 0 }), {
      type: 'operator_retry',
      message: 'retried by ops',
    });
    expect(move(retried, { type: 'admit', wave: 4 }).wave).toBe(1);
  });

  it('admit gives a slot state, counts the admission and clears the retry time', () => {
    for (const from of ['queued', 'waiting_retry'] as const) {
      const r = move(record(from, { admissions: 2, nextAttemptAt: NOW - 1 }), { type: 'admit' });
      expect(r).toMatchObject({ state: 'admitted', admissions: 3, admittedAt: NOW });
      expect(r.nextAttemptAt).toBeUndefined();
      expect(holdsSlot(r.state)).toBe(true);
    }
  });

  it('send counts an attempt and stamps the send; resend is the same attempt', () => {
    const sent = move(record('admitted', { attempts: 2 }), { type: 'send' });
    expect(sent).toMatchObject({ state: 'creating', attempts: 3, createSentAt: NOW });
    const again = transition({ ...sent, createSentAt: NOW - 3000 }, { type: 'resend' }, ctx());
    expect(again.ok && again.move.next).toMatchObject({ state: 'creating', attempts: 3, createSentAt: NOW });
  });

  it('withdraw gives the slot back: waiting_retry, due at once', () => {
    const r = move(record('admitted'), { type: 'withdraw', message: 'the rollout is paused' });
    expect(r).toMatchObject({ state: 'waiting_retry', nextAttemptAt: NOW, message: 'the rollout is paused' });
  });

  it('withdraw from creating (its pre-write unconfirmed, no create sent) takes the attempt back', () => {
    const admitted = record('admitted', { attempts: 1, attemptLog: [{ n: 1, sentAt: NOW - 60_000 }] });
    const sent = move(admitted, { type: 'send' });
    expect(sent.attemptLog).toHaveLength(2);
    const back = move(sent, { type: 'withdraw', message: 'not confirmed by the replicas' });
    expect(back).toMatchObject({ state: 'waiting_retry', attempts: 1, nextAttemptAt: NOW });
    expect(back.createSentAt).toBeUndefined();
    // No trace of a send that never went out: the log ends with the earlier attempt.
    expect(back.attemptLog).toEqual(admitted.attemptLog);
    expect(holdsSlot(back.state)).toBe(false);
  });

  it('created records the task and clears what reconciling left', () => {
    const created: CollectorEvent = {
      type: 'created',
      taskId: '42',
      requestTime: NOW - 500,
      createdBy: 'h:1',
    };
    for (const from of ['creating', 'reconciling'] as const) {
      const r = move(
        record(from, { taskProven: true, reconcilingSince: NOW - 10_000, statusErrors: 2, message: 'old' }),
        created,
      );
      expect(r).toMatchObject({
        state: 'pending',
        taskId: '42',
        requestTime: NOW - 500,
        createdBy: 'h:1',
        message: '',
        statusErrors: 0,
      });
      expect(r.taskProven).toBeUndefined();
      expect(r.reconcilingSince).toBeUndefined();
    }
  });

  it('task_unknown reconciles, noting whether the service proved a task runs', () => {
    for (const proven of [true, false]) {
      const r = move(record('creating'), { type: 'task_unknown', proven, message: 'm' });
      expect(r).toMatchObject({
        state: 'reconciling',
        taskProven: proven,
        reconcilingSince: NOW,
        message: 'm',
      });
    }
  });

  it('nothing leads from reconciling to a new attempt: a lost create is never sent again', () => {
    for (const proven of [true, false]) {
      const from = record('reconciling', { taskProven: proven, reconcilingSince: NOW - 1 });
      for (const event of ALL_EVENTS) {
        const t = transition(from, event, ctx());
        if (t.ok)
          expect(['waiting_retry', 'admitted', 'queued', 'creating'], event.type).not.toContain(
            t.move.next.state,
          );
      }
    }
  });

  it('rejected is final with the vendor’s message', () => {
    expect(
      move(record('creating'), { type: 'rejected', message: 'collector.version.invalid: x' }),
    ).toMatchObject({
      state: 'rejected',
      message: 'collector.version.invalid: x',
      finishedAt: NOW,
    });
  });
});

describe('retarget', () => {
  it('moves a Collector whose create was not sent to its organization’s new build, in the same state', () => {
    for (const s of ['queued', 'waiting_retry'] as const)
      expect(move(record(s), { type: 'retarget', to: '19.480-2', kind: 'Linux:2' })).toMatchObject({
        state: s,
        to: '19.480-2',
        kind: 'Linux:2',
      });
  });

  it('never once a create may have gone out, nor to the build it already goes to', () => {
    const ctxNow = ctx();
    for (const s of COLLECTOR_STATES.filter((x) => x !== 'queued' && x !== 'waiting_retry'))
      expect(transition(record(s), { type: 'retarget', to: '19.480-2' }, ctxNow).ok, s).toBe(false);
    expect(transition(record('queued'), { type: 'retarget', to: '19.470-4' }, ctxNow).ok).toBe(false);
  });
});

describe('supersede', () => {
  it('skips a Collector that waits, is admitted without a create sent, or reconciles; nothing else', () => {
    const from = COLLECTOR_STATES.filter(
      (s) => transition(record(s), { type: 'supersede', message: 'superseded' }, ctx()).ok,
    );
    expect(from).toEqual(['queued', 'waiting_retry', 'admitted', 'reconciling', 'verifying']);
    // One under verification reached the build: a success, unverified.
    expect(move(record('verifying'), { type: 'supersede', message: 'superseded' })).toMatchObject({
      state: 'succeeded',
      message: 'unverified: superseded',
    });
    for (const s of from.filter((s) => s !== 'verifying'))
      expect(move(record(s), { type: 'supersede', message: 'superseded' })).toMatchObject({
        state: 'skipped',
        message: 'superseded',
        finishedAt: NOW,
      });
  });
});

describe('abort', () => {
  const abort: CollectorEvent = { type: 'abort', message: 'rollout aborted (by ops@host)' };

  it('ends a Collector that has not sent a create: queued, waiting_retry or admitted; nothing else', () => {
    const from = COLLECTOR_STATES.filter((s) => transition(record(s), abort, ctx()).ok);
    expect(from).toEqual(['queued', 'waiting_retry', 'admitted']);
    for (const s of from) {
      const r = move(record(s, { attempts: 2, admissions: 3, nextAttemptAt: NOW + 5 }), abort);
      expect(r).toMatchObject({
        state: 'aborted',
        message: 'rollout aborted (by ops@host)',
        finishedAt: NOW,
        attempts: 2,
        admissions: 3,
      });
      // Aborted is final, settled, owned by nobody, holds no slot and is not judged by the gate.
      expect(isFinal(r.state)).toBe(true);
      expect(holdsSlot(r.state)).toBe(false);
      expect(gateClass(r.state)).toBe('none');
      expect(metricState(r.state)).toBe('aborted');
    }
  });

  it('an aborted Collector never moves again, not even by an operator’s retry', () => {
    const r = move(record('queued'), abort);
    for (const e of ALL_EVENTS) expect(transition(r, e, ctx()).ok, e.type).toBe(false);
  });
});

describe('operator_retry', () => {
  const retry: CollectorEvent = { type: 'operator_retry', message: 'retried by ops@host' };
  const OUTCOMES = [
    'failed',
    'timed_out',
    'not_alive',
    'error',
    'rejected',
    'unhealthy',
    'manual',
    'quarantined',
    'unknown',
  ] as const;

  it('applies to the outcomes failed, timed_out, not_alive, error, rejected, unhealthy, manual, quarantined and unknown only', () => {
    expect(COLLECTOR_STATES.filter((s) => transition(record(s), retry, ctx()).ok).sort()).toEqual(
      [...OUTCOMES].sort(),
    );
  });

  it.each(OUTCOMES)(
    '%s → waiting_retry due at once, retries +1, per-attempt counters reset, attempts kept',
    (s) => {
      const before = record(s, {
        attempts: 4,
        admissions: 5,
        wave: 1,
        taskId: '41',
        notAliveAnswers: 2,
        errorAnswers: 2,
        transientErrors: 3,
        statusErrors: 4,
        statusReads: 9,
        finishedAt: NOW - 10,
        reconcilingSince: NOW - 60_000,
        taskProven: true,
        causeRetries: 2,
        message: 'the old outcome',
      });
      const r = move(before, retry);
      expect(r.causeRetries).toBe(0);
      expect(r).toMatchObject({
        state: 'waiting_retry',
        retries: 1,
        nextAttemptAt: NOW,
        message: 'retried by ops@host',
        notAliveAnswers: 0,
        errorAnswers: 0,
        transientErrors: 0,
        statusErrors: 0,
        // The same Collector: its attempts, admissions, reads, wave and last task are kept.
        attempts: 4,
        admissions: 5,
        statusReads: 9,
        wave: 1,
        taskId: '41',
      });
      expect(r.finishedAt).toBeUndefined();
      expect(r.reconcilingSince).toBeUndefined();
      expect(r.taskProven).toBeUndefined();
      expect(isSettled(r.state)).toBe(false);
      // A second retry after another outcome counts on.
      const twice = walk(r, [
        { type: 'admit' },
        { type: 'send' },
        { type: 'rejected', message: 'again' },
        retry,
      ]);
      expect(twice).toMatchObject({ state: 'waiting_retry', retries: 2, attempts: 5 });
    },
  );

  it('the retried Collector gets the policy’s full allowance of answers again', () => {
    const ended = move(record('creating', { notAliveAnswers: SETTINGS.notAliveAttempts - 1 }), {
      type: 'not_alive',
      message: 'down',
    });
    expect(ended.state).toBe('not_alive');
    const cycle: CollectorEvent[] = [
      { type: 'admit' },
      { type: 'send' },
      { type: 'not_alive', message: 'down' },
    ];
    const after = walk(move(ended, retry), cycle);
    expect(after).toMatchObject({ state: 'waiting_retry', notAliveAnswers: 1 });
  });
});

describe('the attempt log', () => {
  /** Moves `r` through `events` at one-second steps; the record after the last. */
  function through(r: CollectorRecord, events: CollectorEvent[], settings = SETTINGS): CollectorRecord {
    let at = NOW;
    let current = r;
    for (const event of events) {
      at += 1000;
      const t = transition(current, event, { now: at, settings, random: () => 0.5 });
      if (!t.ok) throw new Error(t.reason);
      current = t.move.next;
    }
    return current;
  }
  const created = (taskId: string): CollectorEvent => ({
    type: 'created',
    taskId,
    requestTime: NOW,
    createdBy: 'h:1',
  });

  it('keeps each attempt: when it was sent, the answer, the task and how it ended', () => {
    const r = through(record('admitted'), [
      { type: 'send' },
      { type: 'not_alive', message: 'down' },
      { type: 'admit' },
      { type: 'send' },
      created('7'),
      { type: 'status', status: 6 },
      { type: 'failed', message: 'disk full', status: 3 },
      { type: 'operator_retry', message: 'retried by ops' },
      { type: 'admit' },
      { type: 'send' },
      created('9'),
      { type: 'succeeded', status: 2 },
    ]);
    expect(r.attemptLog).toEqual([
      { n: 1, sentAt: NOW + 1000, answer: 'not_alive' },
      { n: 2, sentAt: NOW + 4000, answer: 'created', taskId: '7', outcome: 'failed', endedAt: NOW + 7000 },
      {
        n: 3,
        sentAt: NOW + 10_000,
        answer: 'created',
        taskId: '9',
        outcome: 'succeeded',
        endedAt: NOW + 12_000,
      },
    ]);
  });

  it('records error answers, transient or not, and keeps only the latest few attempts', () => {
    const events: CollectorEvent[] = [];
    for (let i = 0; i < 8; i++)
      events.push(
        { type: 'send' },
        { type: 'create_error', transient: i % 2 === 0, message: 'e' },
        { type: 'admit' },
      );
    const r = through(record('admitted'), events, {
      ...SETTINGS,
      errorAttempts: 100,
      transientAttempts: 100,
    });
    expect(r.attemptLog).toHaveLength(5);
    expect(r.attemptLog?.map((a) => [a.n, a.answer])).toEqual([
      [4, 'error'],
      [5, 'transient_error'],
      [6, 'error'],
      [7, 'transient_error'],
      [8, 'error'],
    ]);
  });
});

describe('verification of a success', () => {
  const verifying = () =>
    walk(record('progressing', { taskId: '41', attempts: 1 }), [
      { type: 'verify', status: 2, dueAt: NOW + 60_000 },
    ]);

  it('a task’s success under verification gives the slot back and waits for a look, no outcome yet', () => {
    const r = verifying();
    expect(r).toMatchObject({
      state: 'verifying',
      succeededAt: NOW,
      verifyDueAt: NOW + 60_000,
      lastStatus: 2,
    });
    expect(holdsSlot(r.state)).toBe(false);
    expect(isSettled(r.state)).toBe(false);
    expect(r.finishedAt).toBeUndefined();
  });

  it('seen on the build: the mark is kept and the next look is after the bake; then verified', () => {
    const seen = walk(verifying(), [{ type: 'seen_on_build', mark: 1234, dueAt: NOW + 360_000 }]);
    expect(seen).toMatchObject({ state: 'verifying', seenAliveMark: 1234, verifyDueAt: NOW + 360_000 });
    const done = move(seen, { type: 'verified' });
    expect(done).toMatchObject({ state: 'succeeded', message: '', finishedAt: NOW });
    expect(done.verifyDueAt).toBeUndefined();
  });

  it('unhealthy is a final bad outcome that keeps what was seen; retry verifies afresh', () => {
    const seen = walk(verifying(), [{ type: 'seen_on_build', mark: 1234, dueAt: NOW + 360_000 }]);
    const bad = move(seen, { type: 'unhealthy', message: 'stopped heartbeating' });
    expect(bad).toMatchObject({ state: 'unhealthy', message: 'stopped heartbeating', finishedAt: NOW });
    expect(gateClass('unhealthy')).toBe('bad');
    const again = walk(bad, [
      { type: 'operator_retry', message: 'retried' },
      { type: 'admit' },
      { type: 'send' },
      { type: 'created', taskId: '42', requestTime: NOW, createdBy: 'h:1' },
      { type: 'verify', status: 2, dueAt: NOW + 10 * 60_000 },
    ]);
    expect(again.state).toBe('verifying');
    // The earlier sighting belongs to the earlier task.
    expect(again.seenOnBuildAt).toBeUndefined();
    expect(again.seenAliveMark).toBeUndefined();
  });
});

describe('failure causes', () => {
  it('cause_retry: the failed attempt is logged and a new one waits for the back-off', () => {
    const r = walk(record('queued'), [
      { type: 'admit' },
      { type: 'send' },
      { type: 'created', taskId: '41', requestTime: NOW, createdBy: 'h:1' },
    ]);
    const later = move(r, {
      type: 'cause_retry',
      message: 'No space left on device',
      failureClass: 'disk_space',
      backoffMs: 600_000,
      status: 3,
    });
    expect(later).toMatchObject({
      state: 'waiting_retry',
      failureClass: 'disk_space',
      causeRetries: 1,
      nextAttemptAt: NOW + 600_000,
    });
    expect(later.attemptLog?.at(-1)).toMatchObject({ outcome: 'failed', endedAt: NOW });
  });

  it('manual ends the Collector on the worklist, outside the gate; quarantine holds a waiting one', () => {
    const m = move(record('pending', { taskId: '41' }), {
      type: 'manual',
      message: 'Upgrades are disabled for this Collector',
      failureClass: 'upgrades_disabled',
    });
    expect(m).toMatchObject({ state: 'manual', failureClass: 'upgrades_disabled', finishedAt: NOW });
    expect(gateClass('manual')).toBe('none');
    for (const s of ['queued', 'waiting_retry'] as const)
      expect(move(record(s), { type: 'quarantine', message: 'cohort held' })).toMatchObject({
        state: 'quarantined',
        message: 'cohort held',
      });
    expect(
      COLLECTOR_STATES.filter((s) => transition(record(s), { type: 'quarantine', message: 'x' }, ctx()).ok),
    ).toEqual(['queued', 'waiting_retry']);
  });
});
