/**
 * The metrics of what happens to Collectors, written once: the worker reports every one of these,
 * and the scheduler (`run`) the outcomes and task ends it settles itself (a listing that shows a
 * Collector upgraded, a gate, an admission that ends a Collector).
 */
import type { Metrics } from '../../metrics/create-metrics.js';
import { healthVerdictOf, orgOf } from '../../rollout/index.js';
import type { UpgradeEvents } from '../../worker/upgrade-processor.js';

export function metricEvents(metrics: Metrics): Required<UpgradeEvents> {
  return {
    onTaskCreated: (rollout, org) => metrics.tasksCreated.labels({ rollout, org }).inc(),
    onRetry: (reason) => metrics.retries.labels(reason).inc(),
    onOutcome: (rollout, record) => {
      const org = orgOf(record);
      metrics.results.labels({ rollout, org, outcome: record.state }).inc();
      const verdict = healthVerdictOf(record);
      if (verdict) metrics.healthVerdicts.labels({ rollout, org, verdict }).inc();
    },
    onTaskEnded: (state, durationMs) => metrics.upgradeDuration.labels(state).observe(durationMs / 1000),
  };
}
