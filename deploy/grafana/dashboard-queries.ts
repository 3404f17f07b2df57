/**
 * The PromQL of the fleet-upgrade dashboard, one constant per query, so that the panels in
 * build-dashboard.ts stay readable and every expression has its reason next to it.
 *
 * Three rules follow from how the processes export metrics (src/metrics/create-metrics.ts):
 * - The gauges read from Redis (src/metrics/fleet-gauges.ts) are exported by every `run` process
 *   with the same value: take `max by (...)`, never `sum`, or two daemons would double the fleet.
 * - Those of a rollout's part in an organization carry `org`: keep it in that `max by`, then sum
 *   over organizations (a max across them would keep only the largest organization's).
 * - Counters and histograms count what one process did: `sum` them across processes.
 * `$rollout` and `$org` are the dashboard's variables (regexes, `.*` for All); `$__rate_interval`
 * is Grafana's. A metric of the whole rollout (no `org`) follows `$org` through the rollouts that
 * cover a picked organization (`coversPickedOrg`).
 */

import type { OrgProblemKind, RolloutPhase } from '../../src/rollout/index.js';
import { gateClass, isSettled, METRIC_STATES } from '../../src/rollout/index.js';

/** Selector of the rollouts picked in the `rollout` variable. */
const R = 'rollout=~"$rollout"';
/** Selector of the organizations picked in the `org` variable. */
const O = 'org=~"$org"';
/** Both: the picked rollouts' parts in the picked organizations. */
const RO = `${R}, ${O}`;
/**
 * `expr` (labelled by rollout, no org) for the picked rollouts that cover a picked organization:
 * the metrics of a whole rollout (info, phase, limit, cohorts) follow `$org` this way.
 */
const coversPickedOrg = (expr: string) =>
  `${expr}\nand on (rollout)\nmax by (rollout) (fleet_upgrade_rollout_org_info{${RO}})`;
/**
 * The state groups below are asked of src/rollout/collector/collector-state.ts (the one module that knows a
 * Collector's life), never listed here: a new state lands in the right group by itself.
 */
const statesWhere = (test: (s: (typeof METRIC_STATES)[number]) => boolean) =>
  METRIC_STATES.filter(test).join('|');
/**
 * States with an outcome: the final states (succeeded, failed, timed_out, unhealthy, rejected,
 * error, manual, unknown, quarantined, skipped, aborted), and not_alive (settled until a scan sees the
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
 * manual (the worklist: a person's job, not the build's fault), unknown (a create whose fate cannot
 * be known: no verdict either way) and quarantined (held, no verdict).
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

/**
 * Every kind of an organization's problem (src/rollout/orgs/org-health.ts) as the number the
 * "Progress by organization" table maps back to the name; 0 is an organization that answers
 * (`satisfies`: a new kind without a number does not compile).
 */
export const ORG_PROBLEM_NUMBERS = {
  credentials: 1,
  unavailable: 2,
  unreachable: 3,
  rate_limited: 4,
  malformed: 5,
} as const satisfies Record<OrgProblemKind, number>;

/**
 * Collectors per rollout, organization and state, one value per triple whatever the number of
 * daemons; sum it over organizations for a rollout's.
 */
const collectors = (states?: string) =>
  `max by (rollout, org, state) (fleet_upgrade_collectors{${RO}${states ? `, state=~"${states}"` : ''}})`;

export const Q = {
  rolloutInfo: coversPickedOrg(`max by (rollout, policy, target) (fleet_upgrade_rollout_info{${R}})`),
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
  rolloutPhase: coversPickedOrg(
    `(\n${Object.entries(PHASE_NUMBERS)
      .map(([phase, n]) => `${n} * max by (rollout) (fleet_upgrade_rollout_phase{${R}, phase="${phase}"})`)
      .join('\n+ ')}\n)`,
  ),
  outcomesPerMinute: `60 * sum by (outcome) (rate(fleet_upgrade_results_total{${RO}}[$__rate_interval]))`,
  /**
   * Share of the outcomes of the interval that are failures, out of those the gate judges (not
   * skipped: superseding a rollout skips its waiting Collectors at once, which is no verdict on
   * the build). `or 0 * ...` gives 0 rather than no series while a rollout has had no failure at
   * all (results_total appears per outcome).
   */
  failureRate: `(
  sum by (rollout) (rate(fleet_upgrade_results_total{${RO}, outcome=~"${FAILED}"}[$__rate_interval]))
  or
  0 * sum by (rollout) (rate(fleet_upgrade_results_total{${RO}, outcome=~"${JUDGED}"}[$__rate_interval]))
)
/ sum by (rollout) (rate(fleet_upgrade_results_total{${RO}, outcome=~"${JUDGED}"}[$__rate_interval]))`,
  /** Since the rollout began, from the state in Redis (survives restarts of every process). */
  failureRatioSoFar: `sum by (rollout) (${collectors(FAILED)})
/ clamp_min(sum by (rollout) (${collectors(JUDGED)}), 1)`,
  tasksCreatedPerMinute: `60 * sum by (rollout) (rate(fleet_upgrade_tasks_created_total{${RO}}[$__rate_interval]))`,
  /** The histogram has no rollout label (one series per outcome): it covers every rollout. */
  durationHeatmap: 'sum by (le) (increase(fleet_upgrade_upgrade_duration_seconds_bucket[$__rate_interval]))',
  durationQuantile: (q: number) =>
    `histogram_quantile(${q}, sum by (le) (rate(fleet_upgrade_upgrade_duration_seconds_bucket{outcome="succeeded"}[$__rate_interval])))`,
  inflight: `sum by (rollout) (max by (rollout, org) (fleet_upgrade_inflight{${RO}}))`,
  /** The policy's maxInFlight bounds the rollout across its organizations. */
  inflightLimit: coversPickedOrg(`max by (rollout) (fleet_upgrade_inflight_limit{${R}})`),
  apiRequestsByCode: `sum by (code) (rate(fleet_upgrade_api_requests_total{${O}}[$__rate_interval]))`,
  /**
   * The API budget every process keeps to per organization (the vendor allows 4 requests/s per
   * access ID, api-facts.md, and each organization has its own), in real time (in a rehearsal at
   * time scale K, 4·K), times the picked organizations that made requests: their summed budget.
   */
  vendorLimit: `max(fleet_upgrade_api_budget_requests_per_second)
* count(count by (org) (fleet_upgrade_api_requests_total{${O}}))`,
  rateLimited: `sum(rate(fleet_upgrade_api_rate_limited_total{${O}}[$__rate_interval]))`,
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
  verification: `sum by (rollout, state) (${collectors('verifying|unhealthy')})`,
  /**
   * What the service's health events decided at verification, per rollout (counted by the
   * processes that verify since they started, summed): new_event (unhealthy by a new health
   * event during the bake), heartbeat_only (verified without them).
   */
  healthVerdicts: `sum by (rollout, verdict) (fleet_upgrade_health_verdicts_total{${RO}})`,
  /** The worklist (`fleet-upgrade report --worklist`): failures whose class needs a person. */
  worklist: `sum by (rollout) (${collectors('manual|unknown')})`,
  /**
   * One row per quarantined cohort: the Collectors held when it was quarantined. A released
   * cohort's series goes (the gauge is reset at every scrape).
   */
  quarantinedCohorts: coversPickedOrg(`max by (rollout, cohort) (fleet_upgrade_cohort_quarantined{${R}})`),
  /** Collectors a rollback could not take back: their previous build is no longer offered. */
  rollbackUnavailable: `sum by (rollout) (max by (rollout, org) (fleet_upgrade_rollback_unavailable{${RO}}))`,
  /** Per organization, over the picked rollouts: Collectors with an outcome, and all of them. */
  orgDone: `sum by (org) (${collectors(FINAL)})`,
  orgTotal: `sum by (org) (${collectors()})`,
  orgProgress: `sum by (org) (${collectors(FINAL)})
/ clamp_min(sum by (org) (${collectors()}), 1)`,
  /**
   * Why an organization's part of every rollout waits: the kind of its service's problem as a
   * number (ORG_PROBLEM_NUMBERS; 0: it answers). Every organization exports every kind, 1 for the
   * one it has and 0 for the others.
   */
  orgWaiting: Object.entries(ORG_PROBLEM_NUMBERS)
    .map(([kind, n]) => `${n} * max by (org) (fleet_upgrade_org_problem{${O}, kind="${kind}"})`)
    .join('\n+ '),
  /** The picked rollouts whose part in the organization an operator paused (`pause --org`). */
  orgPausedParts: `sum by (org) (max by (rollout, org) (fleet_upgrade_rollout_org_paused{${RO}}))`,
  /**
   * Compliance over time, from the inventory of the whole fleet (src/inventory, one pass per
   * `inventory.interval`): per policy and organization, the share of its installed Collectors on
   * the build its target resolves to (or newer). Prometheus keeps the history, so a range of a
   * month answers "how compliant were we last month".
   */
  complianceOnTarget: `max by (policy, org) (fleet_upgrade_compliance_ratio{${O}, kind="compliant"})`,
  /** The share on or above the policy's minimumBuild (only policies that set one). */
  complianceMinimum: `max by (policy, org) (fleet_upgrade_compliance_ratio{${O}, kind="minimum"})`,
  /** Each policy's complianceAlert.below, drawn next to its share (FleetUpgradeComplianceLow). */
  complianceAlertBelow: 'max by (policy) (fleet_upgrade_compliance_alert_below)',
  /** Installed Collectors by build, summed over the picked organizations, their OS and alive. */
  fleetByBuild: `sum by (build) (max by (org, build, os, alive) (fleet_upgrade_fleet_collectors{${O}}))`,
  /** Installed Collectors that are not alive, by organization. */
  /** 0, not no series, for an organization whose Collectors are all alive. */
  fleetOffline: `sum by (org) (max by (org, build, os, alive) (fleet_upgrade_fleet_collectors{${O}, alive="false"}))
or
0 * sum by (org) (max by (org, build, os, alive) (fleet_upgrade_fleet_collectors{${O}}))`,
} as const;
