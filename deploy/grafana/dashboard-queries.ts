/**
 * The PromQL of the fleet-upgrade dashboard, one constant per query, so that the panels in
 * build-dashboard.ts stay readable and every expression has its reason next to it.
 *
 * Two rules follow from how the processes export metrics (src/metrics/create-metrics.ts):
 * - The gauges read from Redis (collectors, inflight, inflight_limit, queue_jobs, rollout_info,
 *   rollout_phase, cohort_quarantined, rollback_unavailable) are exported by every `run` process
 *   with the same value: take `max by (...)`, never `sum`, or two daemons would double the fleet.
 * - Counters and histograms count what one process did: `sum` them across processes.
 * `$rollout` is the dashboard variable (a regex, `.*` for All); `$__rate_interval` is Grafana's.
 */

import type { RolloutPhase } from '../../src/rollout/index.js';
import { gateClass, isSettled, METRIC_STATES } from '../../src/rollout/index.js';

/** Selector of the rollouts picked in the `rollout` variable. */
const R = 'rollout=~"$rollout"';
/**
 * The state groups below are asked of src/rollout/collector/collector-state.ts (the one module that knows a
 * Collector's life), never listed here: a new state lands in the right group by itself.
 */
const statesWhere = (test: (s: (typeof METRIC_STATES)[number]) => boolean) =>
  METRIC_STATES.filter(test).join('|');
/**
 * States with an outcome: the final states (succeeded, failed, timed_out, unhealthy, rejected,
 * error, manual, quarantined, skipped, aborted), and not_alive (settled until a scan sees the
 * Collector alive again). verifying has none yet.
 */
const FINAL = statesWhere(isSettled);
/**
 * Outcomes the failure gate counts as bad (src/rollout/gates/failure-gate.ts): failed, timed_out,
 * unhealthy (a success that did not stay alive) and error. not_alive and rejected are not the
 * build's fault: they only add to the sample.
 */
const FAILED = statesWhere((s) => gateClass(s) === 'bad');
/**
 * Outcomes the failure gate judges (bad, good or sample): every outcome but skipped, aborted,
 * manual (the worklist: a person's job, not the build's fault) and quarantined (held, no verdict).
 */
const JUDGED = statesWhere((s) => gateClass(s) !== 'none');
/**
 * Every phase of src/rollout/life/rollout-phase.ts as the number the phase timeline shows, which
 * build-dashboard.ts maps back to the name (`satisfies`: a new phase without a number does not
 * compile). paused is 5 and aborted 6 so that the numbers of the older phases keep their meaning.
 */
export const PHASE_NUMBERS = {
  running: 1,
  converged: 2,
  halted: 3,
  superseded: 4,
  paused: 5,
  aborted: 6,
} as const satisfies Record<RolloutPhase, number>;

/** Collectors per rollout and state, one value per pair whatever the number of daemons. */
const collectors = (states?: string) =>
  `max by (rollout, state) (fleet_upgrade_collectors{${R}${states ? `, state=~"${states}"` : ''}})`;

export const Q = {
  rolloutInfo: `max by (rollout, policy, target) (fleet_upgrade_rollout_info{${R}})`,
  progressSucceeded: `sum by (rollout) (${collectors('succeeded')})
/ clamp_min(sum by (rollout) (${collectors()}), 1)`,
  progressFinished: `sum by (rollout) (${collectors(FINAL)})
/ clamp_min(sum by (rollout) (${collectors()}), 1)`,
  /** Stacked per state; the panel repeats per rollout, so `$rollout` is one rollout there. */
  collectorsByState: `sum by (state) (${collectors()})`,
  /**
   * The phase as one number per rollout (PHASE_NUMBERS), which a state timeline maps back to
   * names: every rollout exports every phase, 1 for its own and 0 for the others.
   */
  rolloutPhase: Object.entries(PHASE_NUMBERS)
    .map(([phase, n]) => `${n} * max by (rollout) (fleet_upgrade_rollout_phase{${R}, phase="${phase}"})`)
    .join('\n+ '),
  outcomesPerMinute: `60 * sum by (outcome) (rate(fleet_upgrade_results_total{${R}}[$__rate_interval]))`,
  /**
   * Share of the outcomes of the interval that are failures, out of those the gate judges (not
   * skipped: superseding a rollout skips its waiting Collectors at once, which is no verdict on
   * the build). `or 0 * ...` gives 0 rather than no series while a rollout has had no failure at
   * all (results_total appears per outcome).
   */
  failureRate: `(
  sum by (rollout) (rate(fleet_upgrade_results_total{${R}, outcome=~"${FAILED}"}[$__rate_interval]))
  or
  0 * sum by (rollout) (rate(fleet_upgrade_results_total{${R}, outcome=~"${JUDGED}"}[$__rate_interval]))
)
/ sum by (rollout) (rate(fleet_upgrade_results_total{${R}, outcome=~"${JUDGED}"}[$__rate_interval]))`,
  /** Since the rollout began, from the state in Redis (survives restarts of every process). */
  failureRatioSoFar: `sum by (rollout) (${collectors(FAILED)})
/ clamp_min(sum by (rollout) (${collectors(JUDGED)}), 1)`,
  tasksCreatedPerMinute: `60 * sum by (rollout) (rate(fleet_upgrade_tasks_created_total{${R}}[$__rate_interval]))`,
  /** The histogram has no rollout label (one series per outcome): it covers every rollout. */
  durationHeatmap: 'sum by (le) (increase(fleet_upgrade_upgrade_duration_seconds_bucket[$__rate_interval]))',
  durationQuantile: (q: number) =>
    `histogram_quantile(${q}, sum by (le) (rate(fleet_upgrade_upgrade_duration_seconds_bucket{outcome="succeeded"}[$__rate_interval])))`,
  inflight: `max by (rollout) (fleet_upgrade_inflight{${R}})`,
  inflightLimit: `max by (rollout) (fleet_upgrade_inflight_limit{${R}})`,
  apiRequestsByCode: 'sum by (code) (rate(fleet_upgrade_api_requests_total[$__rate_interval]))',
  /**
   * The API budget every process keeps to (the vendor allows 4 requests/s per access ID,
   * api-facts.md), in real time: in a rehearsal at time scale K the line is at 4·K.
   */
  vendorLimit: 'max(fleet_upgrade_api_budget_requests_per_second)',
  rateLimited: 'sum(rate(fleet_upgrade_api_rate_limited_total[$__rate_interval]))',
  retriesByReason: 'sum by (reason) (rate(fleet_upgrade_retries_total[$__rate_interval]))',
  apiLatencyP90: `histogram_quantile(0.9, sum by (le, endpoint) (rate(fleet_upgrade_api_request_duration_seconds_bucket[$__rate_interval])))`,
  /** Seconds spent waiting for the shared budget per second: above 0 means the budget is the limit. */
  budgetWait: 'sum(rate(fleet_upgrade_api_budget_wait_seconds_total[$__rate_interval]))',
  queueJobs: 'max by (state) (fleet_upgrade_queue_jobs)',
  /** Processes that export metrics, by role (`run` runs workers too). */
  processesByRole: 'count by (role) (fleet_upgrade_process_info)',
  /** Scrape targets whose job starts with fleet-upgrade (compose, the ServiceMonitor). */
  targetsUp: 'sum(up{job=~"fleet-upgrade.*"})',
  targetsDown: 'count(up{job=~"fleet-upgrade.*"} == 0) or vector(0)',
  /** Default process metrics carry no role; join it from process_info (whatever the job name). */
  memory: 'process_resident_memory_bytes * on (job, instance) group_left (role) fleet_upgrade_process_info',
  cpu: 'rate(process_cpu_seconds_total[$__rate_interval]) * on (job, instance) group_left (role) fleet_upgrade_process_info',
  /**
   * Successes under verification (verifying: not an outcome yet) and those that did not stay
   * alive (unhealthy: a bad outcome), per rollout.
   */
  verification: collectors('verifying|unhealthy'),
  /** The worklist (`fleet-upgrade report --worklist`): failures whose class needs a person. */
  worklist: `sum by (rollout) (${collectors('manual')})`,
  /**
   * One row per quarantined cohort: the Collectors held when it was quarantined. A released
   * cohort's series goes (the gauge is reset at every scrape).
   */
  quarantinedCohorts: `max by (rollout, cohort) (fleet_upgrade_cohort_quarantined{${R}})`,
  /** Collectors a rollback could not take back: their previous build is no longer offered. */
  rollbackUnavailable: `max by (rollout) (fleet_upgrade_rollback_unavailable{${R}})`,
} as const;
