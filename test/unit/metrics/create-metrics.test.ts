/**
 * The process's metrics: a registry of its own, API attempts counted by endpoint and status code
 * (429s on their own counter), and the fleet gauges read from a snapshot at scrape time, with
 * internal states folded into the dashboard's states.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiAttemptEvent } from '../../../src/api/index.js';
import { metricEvents } from '../../../src/cli/boot/metric-events.js';
import {
  countsByMetricState,
  createMetrics,
  type FleetSnapshot,
  METRIC_STATES,
  metricState,
} from '../../../src/metrics/create-metrics.js';
import * as collectorState from '../../../src/rollout/collector/index.js';
import { COLLECTOR_STATES, parseOutcomeTally } from '../../../src/rollout/collector/index.js';
import { ROLLOUT_PHASES } from '../../../src/rollout/life/index.js';

afterEach(() => {
  vi.useRealTimers();
});

/** The value of one sample of the exposition text, or undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries(
      [...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]),
    );
    if (
      Object.entries(labels).every(([k, v]) => got[k] === v) &&
      Object.keys(got).length === Object.keys(labels).length
    )
      return Number(m[3]);
  }
  return undefined;
}

function attempt(partial: Partial<ApiAttemptEvent>): ApiAttemptEvent {
  return {
    endpoint: 'status',
    method: 'GET',
    attempt: 1,
    statusCode: 200,
    outcome: 'ok',
    durationMs: 12,
    budgetWaitMs: 0,
    rateLimited: false,
    ...partial,
  };
}

describe('metricState', () => {
  it('maps every internal state onto a dashboard state', () => {
    for (const s of COLLECTOR_STATES) expect(METRIC_STATES).toContain(metricState(s));
    // A Collector holding a slot before its task runs is pending (admitted was `queued` before).
    expect(metricState('admitted')).toBe('pending');
    expect(metricState('creating')).toBe('pending');
    expect(metricState('reconciling')).toBe('pending');
    for (const s of METRIC_STATES) expect(metricState(s)).toBe(s);
  });

  it('has waiting_retry (was waiting_alive), error, aborted and the verification, worklist and cohort states among the dashboard states', () => {
    expect(METRIC_STATES).toEqual([
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
    expect(METRIC_STATES).not.toContain('waiting_alive');
    expect(metricState('aborted')).toBe('aborted');
  });

  it('is the one of collector-state.ts, re-exported', () => {
    expect(METRIC_STATES).toBe(collectorState.METRIC_STATES);
    expect(metricState).toBe(collectorState.metricState);
    expect(countsByMetricState).toBe(collectorState.countsByMetricState);
  });
});

describe('createMetrics', () => {
  it('uses a registry of its own per call', async () => {
    const a = createMetrics({ role: 'run' });
    const b = createMetrics({ role: 'worker' });
    expect(a.registry).not.toBe(b.registry);
    a.tasksCreated.labels({ rollout: 'r@1', org: 'default' }).inc();
    const textA = await a.registry.metrics();
    const textB = await b.registry.metrics();
    expect(sample(textA, 'fleet_upgrade_tasks_created_total', { rollout: 'r@1', org: 'default' })).toBe(1);
    expect(
      sample(textB, 'fleet_upgrade_tasks_created_total', { rollout: 'r@1', org: 'default' }),
    ).toBeUndefined();
    expect(sample(textA, 'fleet_upgrade_process_info', { role: 'run' })).toBe(1);
    expect(sample(textB, 'fleet_upgrade_process_info', { role: 'worker' })).toBe(1);
  });

  it('names every metric of its own fleet_upgrade_*, with units in counters and histograms', async () => {
    const m = createMetrics();
    m.exportFleet(async () => ({ rollouts: [], queue: {} }));
    const names = (await m.registry.getMetricsAsJSON())
      .map((x) => x.name)
      .filter((n) => n.startsWith('fleet_upgrade_'));
    expect(names).toEqual(
      expect.arrayContaining([
        'fleet_upgrade_tasks_created_total',
        'fleet_upgrade_results_total',
        'fleet_upgrade_retries_total',
        'fleet_upgrade_upgrade_duration_seconds',
        'fleet_upgrade_api_requests_total',
        'fleet_upgrade_api_request_duration_seconds',
        'fleet_upgrade_api_rate_limited_total',
        'fleet_upgrade_api_budget_wait_seconds_total',
        'fleet_upgrade_collectors',
        'fleet_upgrade_inflight',
        'fleet_upgrade_inflight_limit',
        'fleet_upgrade_queue_jobs',
        'fleet_upgrade_rollout_info',
        'fleet_upgrade_rollout_phase',
        'fleet_upgrade_cohort_quarantined',
        'fleet_upgrade_rollback_unavailable',
        'fleet_upgrade_rollout_org_info',
        'fleet_upgrade_rollout_org_paused',
        'fleet_upgrade_org_up',
        'fleet_upgrade_org_problem',
      ]),
    );
  });

  it('starts the retry reasons and the 429 counter at zero, so rate() works from the first scrape', async () => {
    const text = await createMetrics().registry.metrics();
    for (const reason of ['collector_not_alive', 'rate_limited', 'server_error', 'network', 'error'])
      expect(sample(text, 'fleet_upgrade_retries_total', { reason })).toBe(0);
    expect(sample(text, 'fleet_upgrade_api_rate_limited_total', { org: 'default' })).toBe(0);
  });

  it("starts each organization's 429 counter at zero when its client's hooks are made", async () => {
    const m = createMetrics();
    m.apiHooksOf('emea');
    const text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_api_rate_limited_total', { org: 'emea' })).toBe(0);
    expect(sample(text, 'fleet_upgrade_api_rate_limited_total', { org: 'default' })).toBe(0);
  });
});

describe('apiHooks', () => {
  it('count requests by endpoint and status code, 0 for no answer, and 429s on their own', async () => {
    const m = createMetrics();
    const on = m.apiHooks.onAttempt as (e: ApiAttemptEvent) => void;
    on(attempt({ endpoint: 'status', statusCode: 200 }));
    on(attempt({ endpoint: 'status', statusCode: 200 }));
    on(attempt({ endpoint: 'create', method: 'POST', statusCode: 202 }));
    on(attempt({ endpoint: 'create', method: 'POST', statusCode: 400, outcome: 'collector.not.alive' }));
    on(attempt({ endpoint: 'list', statusCode: 429, outcome: 'rate_limited', rateLimited: true }));
    on(attempt({ endpoint: 'status', statusCode: 429, outcome: 'rate_limited', rateLimited: true }));
    on(attempt({ endpoint: 'create', method: 'POST', statusCode: undefined, outcome: 'ambiguous' }));
    on(attempt({ endpoint: 'targets', statusCode: 503, outcome: 'server', budgetWaitMs: 1500 }));
    const text = await m.registry.metrics();
    const req = (endpoint: string, code: string) =>
      sample(text, 'fleet_upgrade_api_requests_total', { org: 'default', endpoint, code });
    expect(req('status', '200')).toBe(2);
    expect(req('create', '202')).toBe(1);
    expect(req('create', '400')).toBe(1);
    expect(req('list', '429')).toBe(1);
    expect(req('status', '429')).toBe(1);
    expect(req('create', '0')).toBe(1);
    expect(req('targets', '503')).toBe(1);
    expect(sample(text, 'fleet_upgrade_api_rate_limited_total', { org: 'default' })).toBe(2);
    expect(sample(text, 'fleet_upgrade_api_budget_wait_seconds_total')).toBeCloseTo(1.5, 6);
    expect(sample(text, 'fleet_upgrade_api_request_duration_seconds_count', { endpoint: 'status' })).toBe(3);
    expect(
      sample(text, 'fleet_upgrade_api_request_duration_seconds_sum', { endpoint: 'status' }),
    ).toBeCloseTo(0.036, 6);
  });
});

describe('watchRedis and setApiBudget', () => {
  it('fleet_upgrade_redis_up is 1 when the ping answers, 0 when it fails, throws or hangs', async () => {
    let answer: () => Promise<boolean> = async () => true;
    const m = createMetrics();
    m.watchRedis(() => answer());
    expect(sample(await m.registry.metrics(), 'fleet_upgrade_redis_up')).toBe(1);
    answer = async () => false;
    expect(sample(await m.registry.metrics(), 'fleet_upgrade_redis_up')).toBe(0);
    answer = async () => {
      throw new Error('ECONNREFUSED');
    };
    expect(sample(await m.registry.metrics(), 'fleet_upgrade_redis_up')).toBe(0);

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    answer = () => new Promise<boolean>(() => {}); // never answers
    const scrape = m.registry.metrics();
    await vi.advanceTimersByTimeAsync(1000);
    expect(sample(await scrape, 'fleet_upgrade_redis_up')).toBe(0);
  });

  it('shows the API budget it is given', async () => {
    const m = createMetrics();
    m.setApiBudget(240, 10);
    const text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_api_budget_requests_per_second')).toBe(240);
    expect(sample(text, 'fleet_upgrade_api_budget_concurrent_requests')).toBe(10);
  });
});

describe('exportFleet', () => {
  const snapshot = (counts: Record<string, number>, phase = 'running', inflight = 3): FleetSnapshot => ({
    rollouts: [
      {
        id: 'linux-fleet@19.470-4',
        policy: 'linux-fleet',
        target: 'latest',
        phase,
        maxInFlight: 50,
        inflight,
        counts,
        byOrg: [{ org: 'default', build: '19.470-4', counts, inflight }],
      },
    ],
    queue: { waiting: 2, active: 1, delayed: 40, failed: 0 },
  });

  it('shows Collectors per dashboard state, every state present, internal states folded in', async () => {
    const m = createMetrics();
    m.exportFleet(async () =>
      snapshot({
        queued: 10,
        admitted: 2,
        creating: 1,
        reconciling: 1,
        pending: 3,
        progressing: 4,
        succeeded: 7,
        waiting_retry: 6,
        error: 2,
      }),
    );
    const text = await m.registry.metrics();
    const c = (state: string) =>
      sample(text, 'fleet_upgrade_collectors', { rollout: 'linux-fleet@19.470-4', org: 'default', state });
    expect(c('queued')).toBe(10);
    expect(c('pending')).toBe(7);
    expect(c('progressing')).toBe(4);
    expect(c('succeeded')).toBe(7);
    expect(c('waiting_retry')).toBe(6);
    expect(c('error')).toBe(2);
    for (const s of ['failed', 'timed_out', 'not_alive', 'rejected', 'skipped']) expect(c(s)).toBe(0);
    // One series per dashboard state, none for internal or old names.
    for (const s of ['admitted', 'creating', 'reconciling', 'waiting_alive']) expect(c(s)).toBeUndefined();
    expect(sample(text, 'fleet_upgrade_inflight', { rollout: 'linux-fleet@19.470-4', org: 'default' })).toBe(
      3,
    );
    expect(sample(text, 'fleet_upgrade_inflight_limit', { rollout: 'linux-fleet@19.470-4' })).toBe(50);
    expect(sample(text, 'fleet_upgrade_queue_jobs', { state: 'delayed' })).toBe(40);
    expect(
      sample(text, 'fleet_upgrade_rollout_info', {
        rollout: 'linux-fleet@19.470-4',
        policy: 'linux-fleet',
        target: 'latest',
      }),
    ).toBe(1);
    expect(ROLLOUT_PHASES).toContain('paused');
    for (const phase of ROLLOUT_PHASES)
      expect(sample(text, 'fleet_upgrade_rollout_phase', { rollout: 'linux-fleet@19.470-4', phase })).toBe(
        phase === 'running' ? 1 : 0,
      );
  });

  it('shows each rollout’s own in-flight count and phase', async () => {
    const m = createMetrics();
    const [current] = snapshot({ pending: 3 }, 'running', 3).rollouts;
    const [old] = snapshot({ progressing: 2 }, 'superseded', 2).rollouts;
    m.exportFleet(async () => ({
      rollouts: [
        current as FleetSnapshot['rollouts'][number],
        { ...(old as FleetSnapshot['rollouts'][number]), id: 'linux-fleet@19.450-12' },
      ],
      queue: {},
    }));
    const text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_inflight', { rollout: 'linux-fleet@19.470-4', org: 'default' })).toBe(
      3,
    );
    expect(sample(text, 'fleet_upgrade_inflight', { rollout: 'linux-fleet@19.450-12', org: 'default' })).toBe(
      2,
    );
    expect(
      sample(text, 'fleet_upgrade_rollout_phase', { rollout: 'linux-fleet@19.450-12', phase: 'superseded' }),
    ).toBe(1);
    expect(
      sample(text, 'fleet_upgrade_rollout_phase', { rollout: 'linux-fleet@19.470-4', phase: 'superseded' }),
    ).toBe(0);
  });

  it('shows a paused rollout in the paused phase', async () => {
    const m = createMetrics();
    m.exportFleet(async () => snapshot({ queued: 4 }, 'paused', 0));
    const text = await m.registry.metrics();
    for (const phase of ROLLOUT_PHASES)
      expect(sample(text, 'fleet_upgrade_rollout_phase', { rollout: 'linux-fleet@19.470-4', phase })).toBe(
        phase === 'paused' ? 1 : 0,
      );
  });

  it('reads the snapshot once per scrape, and again at the next scrape', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const m = createMetrics();
    let reads = 0;
    let current = snapshot({ queued: 5 });
    m.exportFleet(async () => {
      reads++;
      return current;
    });
    const first = await m.registry.metrics();
    expect(reads).toBe(1);
    expect(
      sample(first, 'fleet_upgrade_collectors', {
        rollout: 'linux-fleet@19.470-4',
        org: 'default',
        state: 'queued',
      }),
    ).toBe(5);

    current = {
      rollouts: [
        { ...(snapshot({ succeeded: 5 }, 'converged', 0).rollouts[0] as FleetSnapshot['rollouts'][number]) },
      ],
      queue: {},
    };
    vi.advanceTimersByTime(15_000); // the next scrape, 15 s later
    const second = await m.registry.metrics();
    expect(reads).toBe(2);
    const c = (state: string) =>
      sample(second, 'fleet_upgrade_collectors', { rollout: 'linux-fleet@19.470-4', org: 'default', state });
    expect(c('queued')).toBe(0);
    expect(c('succeeded')).toBe(5);
    expect(
      sample(second, 'fleet_upgrade_rollout_phase', { rollout: 'linux-fleet@19.470-4', phase: 'converged' }),
    ).toBe(1);
    expect(
      sample(second, 'fleet_upgrade_inflight', { rollout: 'linux-fleet@19.470-4', org: 'default' }),
    ).toBe(0);
  });

  it('a snapshot that fails (Redis down) leaves the process’s own metrics readable', async () => {
    const m = createMetrics();
    m.tasksCreated.labels({ rollout: 'r@1', org: 'default' }).inc();
    m.exportFleet(async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    });
    const text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_tasks_created_total', { rollout: 'r@1', org: 'default' })).toBe(1);
    // The fleet gauges show no series rather than stale or invented ones.
    expect(text).not.toMatch(/^fleet_upgrade_collectors\{/m);
    expect(text).not.toMatch(/^fleet_upgrade_inflight\{/m);
    // Nor an organization up or down: a Redis that cannot be read says nothing of the services.
    expect(text).not.toMatch(/^fleet_upgrade_org_up\{/m);
    expect(text).not.toMatch(/^fleet_upgrade_org_problem\{/m);
  });

  it('drops the series of a rollout that is gone', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const m = createMetrics();
    let current = snapshot({ queued: 1 });
    m.exportFleet(async () => current);
    expect(await m.registry.metrics()).toContain('linux-fleet@19.470-4');
    current = { rollouts: [], queue: {} };
    vi.advanceTimersByTime(15_000);
    expect(await m.registry.metrics()).not.toContain('linux-fleet@19.470-4');
  });

  it('shows each quarantined cohort with the Collectors it held, and drops it once released', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const m = createMetrics();
    const [base] = snapshot({ quarantined: 7, failed: 6, succeeded: 20 })
      .rollouts as FleetSnapshot['rollouts'];
    const mac = 'osName=Mac OS X,osArch=aarch64';
    const win = 'osName=Windows,osArch=amd64';
    let current: FleetSnapshot = {
      rollouts: [
        {
          ...(base as FleetSnapshot['rollouts'][number]),
          quarantined: [
            { cohort: mac, held: 5 },
            { cohort: win, held: 2 },
          ],
        },
      ],
      queue: {},
    };
    m.exportFleet(async () => current);
    const rollout = 'linux-fleet@19.470-4';
    const first = await m.registry.metrics();
    expect(sample(first, 'fleet_upgrade_cohort_quarantined', { rollout, cohort: mac })).toBe(5);
    expect(sample(first, 'fleet_upgrade_cohort_quarantined', { rollout, cohort: win })).toBe(2);
    expect(sample(first, 'fleet_upgrade_collectors', { rollout, org: 'default', state: 'quarantined' })).toBe(
      7,
    );

    // `retry --only quarantined` released the Mac cohort: its series goes at the next scrape.
    current = {
      rollouts: [{ ...(base as FleetSnapshot['rollouts'][number]), quarantined: [{ cohort: win, held: 2 }] }],
      queue: {},
    };
    vi.advanceTimersByTime(15_000);
    const second = await m.registry.metrics();
    expect(sample(second, 'fleet_upgrade_cohort_quarantined', { rollout, cohort: mac })).toBeUndefined();
    expect(sample(second, 'fleet_upgrade_cohort_quarantined', { rollout, cohort: win })).toBe(2);
  });

  it('shows no quarantine of an aborted or superseded rollout (nothing can be released there)', async () => {
    const m = createMetrics();
    const [base] = snapshot({ quarantined: 3 }).rollouts as FleetSnapshot['rollouts'];
    const q = [{ cohort: 'osName=Linux', held: 3 }];
    m.exportFleet(async () => ({
      rollouts: [
        { ...(base as FleetSnapshot['rollouts'][number]), id: 'a@1', phase: 'aborted', quarantined: q },
        { ...(base as FleetSnapshot['rollouts'][number]), id: 's@1', phase: 'superseded', quarantined: q },
        { ...(base as FleetSnapshot['rollouts'][number]), id: 'h@1', phase: 'halted', quarantined: q },
      ],
      queue: {},
    }));
    const text = await m.registry.metrics();
    const held = (rollout: string) =>
      sample(text, 'fleet_upgrade_cohort_quarantined', { rollout, cohort: 'osName=Linux' });
    expect(held('a@1')).toBeUndefined();
    expect(held('s@1')).toBeUndefined();
    expect(held('h@1')).toBe(3);
  });

  it('counts the Collectors whose rollback is not possible, 0 for a rollout without any', async () => {
    const m = createMetrics();
    const [base] = snapshot({ failed: 9 }).rollouts as FleetSnapshot['rollouts'];
    const entry = { request: 'q1', at: 1, by: 'ops', reason: 'bad build' };
    m.exportFleet(async () => ({
      rollouts: [
        {
          ...(base as FleetSnapshot['rollouts'][number]),
          rollbacks: [
            { ...entry, build: '19.400-5', collectors: 3, ids: [1, 2, 3], state: 'unavailable' },
            { ...entry, build: '19.450-12', collectors: 6, policy: 'rollback-x', state: 'started' },
            { ...entry, request: 'q2', build: '19.400-5', collectors: 2, ids: [3, 4], state: 'unavailable' },
          ],
        },
        { ...(base as FleetSnapshot['rollouts'][number]), id: 'other@1' },
      ],
      queue: {},
    }));
    const text = await m.registry.metrics();
    // Collectors 1 to 4 (3 found twice); the ones that went back are not counted.
    expect(
      sample(text, 'fleet_upgrade_rollback_unavailable', { rollout: 'linux-fleet@19.470-4', org: 'default' }),
    ).toBe(4);
    expect(sample(text, 'fleet_upgrade_rollback_unavailable', { rollout: 'other@1', org: 'default' })).toBe(
      0,
    );
  });
});

describe('organizations', () => {
  const part = (org: string, build: string, counts: Record<string, number>, inflight = 0) => ({
    org,
    build,
    counts,
    inflight,
  });
  /** One rollout over three organizations; emea's latest is an older build than the others'. */
  const threeOrgs = (over: Partial<FleetSnapshot> = {}): FleetSnapshot => ({
    rollouts: [
      {
        id: 'linux-fleet@19.470-4',
        policy: 'linux-fleet',
        target: 'latest',
        phase: 'running',
        maxInFlight: 50,
        inflight: 7,
        counts: { queued: 30, pending: 7, succeeded: 13 },
        byOrg: [
          part('us1', '19.470-4', { queued: 10, pending: 5, succeeded: 10 }, 5),
          part('emea', '19.450-12', { queued: 20, pending: 2 }, 2),
          part('apac', '19.470-4', { succeeded: 3 }),
        ],
        pausedOrgs: [{ org: 'apac' }],
      },
    ],
    orgProblems: [{ org: 'emea', kind: 'credentials' }],
    queue: {},
    ...over,
  });
  const rollout = 'linux-fleet@19.470-4';

  it('shows Collectors and in-flight per rollout and organization, every state of every organization', async () => {
    const m = createMetrics();
    m.exportFleet(async () => threeOrgs());
    const text = await m.registry.metrics();
    const c = (org: string, state: string) =>
      sample(text, 'fleet_upgrade_collectors', { rollout, org, state });
    expect([c('us1', 'queued'), c('us1', 'pending'), c('us1', 'succeeded')]).toEqual([10, 5, 10]);
    expect([c('emea', 'queued'), c('emea', 'pending'), c('emea', 'succeeded')]).toEqual([20, 2, 0]);
    expect(c('apac', 'succeeded')).toBe(3);
    for (const org of ['us1', 'emea', 'apac'])
      for (const state of METRIC_STATES) expect(c(org, state), `${org} ${state}`).toBeTypeOf('number');
    // No series without the organization (it would count the rollout twice in a sum).
    expect(text).not.toMatch(/^fleet_upgrade_collectors\{rollout="[^"]*",state=/m);
    const inflight = (org: string) => sample(text, 'fleet_upgrade_inflight', { rollout, org });
    expect([inflight('us1'), inflight('emea'), inflight('apac')]).toEqual([5, 2, 0]);
    // What belongs to the whole rollout keeps its labels.
    expect(sample(text, 'fleet_upgrade_inflight_limit', { rollout })).toBe(50);
    expect(sample(text, 'fleet_upgrade_rollout_phase', { rollout, phase: 'running' })).toBe(1);
    expect(
      sample(text, 'fleet_upgrade_rollout_info', { rollout, policy: 'linux-fleet', target: 'latest' }),
    ).toBe(1);
  });

  it("names each organization's build and whether an operator paused its part", async () => {
    const m = createMetrics();
    m.exportFleet(async () => threeOrgs());
    const text = await m.registry.metrics();
    const info = (org: string, build: string) =>
      sample(text, 'fleet_upgrade_rollout_org_info', { rollout, org, build });
    expect([info('us1', '19.470-4'), info('emea', '19.450-12'), info('apac', '19.470-4')]).toEqual([1, 1, 1]);
    expect(info('emea', '19.470-4')).toBeUndefined();
    const paused = (org: string) => sample(text, 'fleet_upgrade_rollout_org_paused', { rollout, org });
    expect([paused('us1'), paused('emea'), paused('apac')]).toEqual([0, 0, 1]);
  });

  it('shows each organization up, or down with its problem’s kind, every kind from the start', async () => {
    const m = createMetrics();
    m.exportFleet(async () =>
      threeOrgs({
        // An organization no rollout covers (yet) that has a problem is shown too.
        orgProblems: [
          { org: 'emea', kind: 'credentials' },
          { org: 'au', kind: 'unreachable' },
        ],
      }),
    );
    const text = await m.registry.metrics();
    const up = (org: string) => sample(text, 'fleet_upgrade_org_up', { org });
    expect([up('us1'), up('emea'), up('apac'), up('au')]).toEqual([1, 0, 1, 0]);
    const problem = (org: string, kind: string) => sample(text, 'fleet_upgrade_org_problem', { org, kind });
    const kinds = ['credentials', 'unavailable', 'rate_limited', 'malformed', 'unreachable'];
    expect(kinds.map((k) => problem('emea', k))).toEqual([1, 0, 0, 0, 0]);
    expect(kinds.map((k) => problem('au', k))).toEqual([0, 0, 0, 0, 1]);
    expect(kinds.map((k) => problem('us1', k))).toEqual([0, 0, 0, 0, 0]);
  });

  it('a problem that ends takes its organization back up at the next scrape', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const m = createMetrics();
    let current = threeOrgs();
    m.exportFleet(async () => current);
    expect(sample(await m.registry.metrics(), 'fleet_upgrade_org_up', { org: 'emea' })).toBe(0);
    current = threeOrgs({ orgProblems: [] });
    vi.advanceTimersByTime(15_000);
    const text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_org_up', { org: 'emea' })).toBe(1);
    expect(sample(text, 'fleet_upgrade_org_problem', { org: 'emea', kind: 'credentials' })).toBe(0);
  });

  it('a deployment without orgs shows every series with org="default"', async () => {
    const m = createMetrics();
    const counts = { queued: 2, succeeded: 1 };
    m.exportFleet(async () => ({
      rollouts: [
        {
          id: 'r@1',
          policy: 'r',
          target: '1',
          phase: 'running',
          maxInFlight: 5,
          inflight: 0,
          counts,
          byOrg: [{ org: 'default', build: '1', counts, inflight: 0 }],
        },
      ],
      queue: {},
    }));
    const text = await m.registry.metrics();
    const orgs = new Set(
      [...text.matchAll(/^fleet_upgrade_\w+\{[^}]*\borg="([^"]*)"/gm)].map((x) => x[1] as string),
    );
    expect([...orgs]).toEqual(['default']);
    expect(
      sample(text, 'fleet_upgrade_collectors', { rollout: 'r@1', org: 'default', state: 'queued' }),
    ).toBe(2);
    expect(sample(text, 'fleet_upgrade_org_up', { org: 'default' })).toBe(1);
    expect(sample(text, 'fleet_upgrade_rollback_unavailable', { rollout: 'r@1', org: 'default' })).toBe(0);
  });

  it("counts the workers' events per rollout and organization (cli/boot/metric-events.ts)", async () => {
    const m = createMetrics();
    const events = metricEvents(m);
    events.onTaskCreated(rollout, 'emea');
    events.onTaskCreated(rollout, 'default');
    const text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_tasks_created_total', { rollout, org: 'emea' })).toBe(1);
    expect(sample(text, 'fleet_upgrade_tasks_created_total', { rollout, org: 'default' })).toBe(1);
  });

  it('exports the outcomes as the Redis tally reads them, per rollout and organization; a failed read keeps the last', async () => {
    const m = createMetrics();
    // Without exportOutcomes (a worker): no series.
    expect(await m.registry.metrics()).not.toMatch(/^fleet_upgrade_results_total\{/m);
    // The tally's hash as apply-moves-15.lua leaves it (test/integration/rollout/outcomes-told.test.ts
    // drives the writes themselves).
    const raw = { 'emea|failed': '1', 'default|succeeded': '1', 'default|verdict:heartbeat_only': '1' };
    let fail = false;
    m.exportOutcomes(async () => {
      if (fail) throw new Error('Redis away');
      return new Map([[rollout, parseOutcomeTally(raw)]]);
    });
    let text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_results_total', { rollout, org: 'emea', outcome: 'failed' })).toBe(1);
    expect(
      sample(text, 'fleet_upgrade_results_total', { rollout, org: 'default', outcome: 'succeeded' }),
    ).toBe(1);
    expect(
      sample(text, 'fleet_upgrade_health_verdicts_total', {
        rollout,
        org: 'default',
        verdict: 'heartbeat_only',
      }),
    ).toBe(1);
    fail = true;
    await new Promise((r) => setTimeout(r, 250)); // past the scrape's shared read
    text = await m.registry.metrics();
    expect(sample(text, 'fleet_upgrade_results_total', { rollout, org: 'emea', outcome: 'failed' })).toBe(1);
  });
});
