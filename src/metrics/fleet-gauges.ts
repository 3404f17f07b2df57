/**
 * The gauges read from Redis at scrape time, through one fleet snapshot per scrape (the `run`
 * processes export them; every one the same values, so dashboards and rules take max()):
 * Collectors per state, in-flight, queue depth, rollout info and phase, quarantined cohorts,
 * rollbacks not possible, and the organizations: each rollout's part in each organization it
 * covers, and each organization's health; and the daemon's own problems (with credentials refused). What belongs to a rollout's part in an organization
 * carries `org` (`default` without `orgs` in the settings); what belongs to the whole rollout
 * (its policy, target, phase, maxInFlight, cohorts) does not. Each gauge is reset at each scrape,
 * so that a series whose subject is gone (a rollout forgotten, a cohort released) disappears.
 */
import type { Registry } from 'prom-client';
import {
  countsByMetricState,
  DAEMON_PROBLEM_KINDS,
  METRIC_STATES,
  ROLLOUT_PHASES,
} from '../rollout/index.js';
import { type FleetSnapshot, ORG_PROBLEM_KINDS, orgHealthOf } from './fleet-snapshot.js';
import { MAX_COHORT_SERIES, OTHER_COHORT, rolloutHolds } from './rollout-holds.js';
import { snapshotGauges } from './snapshot-gauge.js';

export type { FleetSnapshot } from './fleet-snapshot.js';

/**
 * Registers the fleet gauges in `registry`; each reads the snapshot through `read` (one read per
 * scrape, shared). `forgetRollouts` is told the rollouts that exist, so that the counters of
 * the others can go.
 */
export function registerFleetGauges(
  registry: Registry,
  read: () => Promise<FleetSnapshot>,
  forgetRollouts: (keep: ReadonlySet<string>) => void,
): void {
  /** A gauge that `fill` sets from the snapshot at each scrape, after a reset. */
  const gauge = snapshotGauges(registry, read);

  gauge(
    {
      name: 'fleet_upgrade_collectors',
      help: 'Collectors per rollout, organization and state.',
      labelNames: ['rollout', 'org', 'state'],
    },
    (s, g) => {
      for (const r of s.rollouts)
        for (const part of r.byOrg) {
          const byState = countsByMetricState(part.counts);
          for (const state of METRIC_STATES)
            g.labels({ rollout: r.id, org: part.org, state }).set(byState[state]);
        }
      // A forgotten rollout's counters go too (a snapshot that failed shows no rollouts: keep them).
      if (s.rollouts.length) forgetRollouts(new Set(s.rollouts.map((r) => r.id)));
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_inflight',
      help: 'Collectors holding an in-flight slot (may have an unfinished task), per rollout and organization.',
      labelNames: ['rollout', 'org'],
    },
    (s, g) => {
      for (const r of s.rollouts)
        for (const part of r.byOrg) g.labels({ rollout: r.id, org: part.org }).set(part.inflight);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_inflight_limit',
      help: "The rollout's maxInFlight (its policy's, across its organizations).",
      labelNames: ['rollout'],
    },
    (s, g) => {
      for (const r of s.rollouts) g.labels(r.id).set(r.maxInFlight);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_queue_jobs',
      help: 'BullMQ jobs of the upgrades queue, by state.',
      labelNames: ['state'],
    },
    (s, g) => {
      for (const [state, n] of Object.entries(s.queue)) g.labels(state).set(n);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_rollout_info',
      help: 'One per rollout: its policy and target build.',
      labelNames: ['rollout', 'policy', 'target'],
    },
    (s, g) => {
      for (const r of s.rollouts) g.labels(r.id, r.policy, r.target).set(1);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_rollout_org_info',
      help: "One per rollout and organization it covers: the build its Collectors there go to (`latest` resolves in each organization's build list).",
      labelNames: ['rollout', 'org', 'build'],
    },
    (s, g) => {
      for (const r of s.rollouts)
        for (const part of r.byOrg) g.labels({ rollout: r.id, org: part.org, build: part.build }).set(1);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_rollout_phase',
      help: 'Phase of each rollout: 1 for the phase it is in, 0 for the others.',
      labelNames: ['rollout', 'phase'],
    },
    (s, g) => {
      for (const r of s.rollouts)
        for (const p of ROLLOUT_PHASES) g.labels(r.id, p).set(r.phase === p ? 1 : 0);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_rollout_org_paused',
      help: "1 while an operator holds the organization's part of the rollout (`fleet-upgrade pause ROLLOUT --org ORG`), 0 otherwise.",
      labelNames: ['rollout', 'org'],
    },
    (s, g) => {
      for (const r of s.rollouts) {
        const paused = new Set((r.pausedOrgs ?? []).map((p) => p.org));
        for (const part of r.byOrg)
          g.labels({ rollout: r.id, org: part.org }).set(paused.has(part.org) ? 1 : 0);
      }
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_cohort_quarantined',
      help: `Collectors held when their cohort was quarantined, one series per quarantined cohort (the policy's cohorts.by key; \`${OTHER_COHORT}\` sums those past the first ${MAX_COHORT_SERIES}), while the rollout can still release it (\`fleet-upgrade retry ROLLOUT --only quarantined\`).`,
      labelNames: ['rollout', 'cohort'],
    },
    (s, g) => {
      for (const r of s.rollouts)
        for (const q of rolloutHolds(r).quarantined) g.labels(r.id, q.cohort).set(q.held);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_rollback_unavailable',
      help: 'Collectors of the rollout, per organization, that a rollback could not take back: the service no longer offers their previous build.',
      labelNames: ['rollout', 'org'],
    },
    (s, g) => {
      for (const r of s.rollouts) {
        const byOrg = rolloutHolds(r).rollbackUnavailableByOrg;
        const orgs = new Set([...r.byOrg.map((part) => part.org), ...Object.keys(byOrg)]);
        for (const org of orgs) g.labels({ rollout: r.id, org }).set(byOrg[org] ?? 0);
      }
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_org_up',
      help: "Each organization's service: 1 while it answers, 0 while it has a problem (its part of every rollout then waits).",
      labelNames: ['org'],
    },
    (s, g) => {
      for (const o of orgHealthOf(s)) g.labels(o.org).set(o.problem ? 0 : 1);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_org_problem',
      help: `The problem of each organization's service: 1 for its kind while it lasts, 0 for the other kinds (${ORG_PROBLEM_KINDS.join(', ')}).`,
      labelNames: ['org', 'kind'],
    },
    (s, g) => {
      for (const o of orgHealthOf(s)) {
        const kinds =
          o.problem && !ORG_PROBLEM_KINDS.includes(o.problem)
            ? [...ORG_PROBLEM_KINDS, o.problem]
            : ORG_PROBLEM_KINDS;
        for (const kind of kinds) g.labels(o.org, kind).set(o.problem === kind ? 1 : 0);
      }
    },
  );
  /** The daemon's problems, and refused credentials: the problems only a person ends. */
  const daemonProblems = (s: FleetSnapshot) => [
    ...(s.daemonProblems ?? []),
    ...(s.orgProblems ?? [])
      .filter((p) => p.kind === 'credentials')
      .map((p) => ({ kind: 'credentials', subject: `org ${p.org}` })),
  ];
  gauge(
    {
      name: 'fleet_upgrade_daemon_problem',
      help: "1 for each problem of the daemon that a person must end, while it lasts: kind policy_invalid (subject: the policy file), target_not_offered (the policy), time_scale (the process's time scale is not the simulator's), ring_undefined (the policy follows a ring no policy file defines), credentials (the organization's key is refused). `fleet-upgrade status` says what ends each.",
      labelNames: ['kind', 'subject'],
    },
    (s, g) => {
      for (const p of daemonProblems(s)) g.labels({ kind: p.kind, subject: p.subject }).set(1);
    },
  );
  gauge(
    {
      name: 'fleet_upgrade_daemon_problems',
      help: `The daemon's problems of each kind now (${[...DAEMON_PROBLEM_KINDS, 'credentials'].join(', ')}); 0 when there are none.`,
      labelNames: ['kind'],
    },
    (s, g) => {
      const found = daemonProblems(s);
      for (const kind of new Set([...DAEMON_PROBLEM_KINDS, 'credentials', ...found.map((p) => p.kind)]))
        g.labels(kind).set(found.filter((p) => p.kind === kind).length);
    },
  );
}
