/**
 * The gauges read from Redis at scrape time, through one fleet snapshot per scrape (the `run`
 * processes export them; every one the same values, so dashboards and rules take max()):
 * Collectors per state, in-flight, queue depth, rollout info and phase, quarantined cohorts,
 * rollbacks not possible. Each is reset at each scrape, so that a series whose subject is gone
 * (a rollout forgotten, a cohort released) disappears.
 */
import { Gauge, type Registry } from 'prom-client';
import { countsByMetricState, METRIC_STATES, ROLLOUT_PHASES } from '../rollout/index.js';
import { type HoldsSource, MAX_COHORT_SERIES, OTHER_COHORT, rolloutHolds } from './rollout-holds.js';

export interface FleetSnapshot {
  rollouts: {
    id: string;
    policy: string;
    target: string;
    phase: string;
    maxInFlight: number;
    inflight: number;
    counts: Record<string, number>;
    /** Cohorts the cohort gate quarantined, with the Collectors each held (RolloutRecord's). */
    quarantined?: HoldsSource['quarantined'];
    /** Rollbacks carried out, `unavailable` when the previous build is no longer offered (RolloutRecord's). */
    rollbacks?: HoldsSource['rollbacks'];
  }[];
  queue: Record<string, number>;
}

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
  new Gauge({
    name: 'fleet_upgrade_collectors',
    help: 'Collectors per rollout and state.',
    labelNames: ['rollout', 'state'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts) {
        const byState = countsByMetricState(r.counts);
        for (const m of METRIC_STATES) this.labels(r.id, m).set(byState[m]);
      }
      // A forgotten rollout's counters go too (a snapshot that failed shows no rollouts: keep them).
      if (s.rollouts.length) forgetRollouts(new Set(s.rollouts.map((r) => r.id)));
    },
  });
  new Gauge({
    name: 'fleet_upgrade_inflight',
    help: 'Collectors holding an in-flight slot (may have an unfinished task), per rollout.',
    labelNames: ['rollout'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts) this.labels(r.id).set(r.inflight);
    },
  });
  new Gauge({
    name: 'fleet_upgrade_inflight_limit',
    help: "The rollout's maxInFlight.",
    labelNames: ['rollout'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts) this.labels(r.id).set(r.maxInFlight);
    },
  });
  new Gauge({
    name: 'fleet_upgrade_queue_jobs',
    help: 'BullMQ jobs of the upgrades queue, by state.',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const [state, n] of Object.entries(s.queue)) this.labels(state).set(n);
    },
  });
  new Gauge({
    name: 'fleet_upgrade_rollout_info',
    help: 'One per rollout: its policy and target build.',
    labelNames: ['rollout', 'policy', 'target'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts) this.labels(r.id, r.policy, r.target).set(1);
    },
  });
  new Gauge({
    name: 'fleet_upgrade_rollout_phase',
    help: 'Phase of each rollout: 1 for the phase it is in, 0 for the others.',
    labelNames: ['rollout', 'phase'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts)
        for (const p of ROLLOUT_PHASES) this.labels(r.id, p).set(r.phase === p ? 1 : 0);
    },
  });
  new Gauge({
    name: 'fleet_upgrade_cohort_quarantined',
    help: `Collectors held when their cohort was quarantined, one series per quarantined cohort (the policy's cohorts.by key; \`${OTHER_COHORT}\` sums those past the first ${MAX_COHORT_SERIES}), while the rollout can still release it (\`fleet-upgrade retry ROLLOUT --only quarantined\`).`,
    labelNames: ['rollout', 'cohort'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts)
        for (const q of rolloutHolds(r).quarantined) this.labels(r.id, q.cohort).set(q.held);
    },
  });
  new Gauge({
    name: 'fleet_upgrade_rollback_unavailable',
    help: 'Collectors of the rollout that a rollback could not take back: the service no longer offers their previous build.',
    labelNames: ['rollout'],
    registers: [registry],
    async collect() {
      const s = await read();
      this.reset();
      for (const r of s.rollouts) this.labels(r.id).set(rolloutHolds(r).rollbackUnavailable);
    },
  });
}
