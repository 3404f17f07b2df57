/**
 * The metrics of what happens to Collectors, written once: the worker reports tasks created,
 * retries and task ends, the scheduler (`run`) the task ends the listings show; the outcomes are
 * told by the Collectors' store as it writes them (CollectorStore's `onOutcome`), whichever path
 * wrote them.
 */
import type { Metrics } from '../../metrics/create-metrics.js';
import { type CollectorRecord, healthVerdictOf, orgOf, type StoreListeners } from '../../rollout/index.js';
import type { UpgradeEvents } from '../../worker/upgrade-processor.js';

export function metricEvents(metrics: Metrics): Required<UpgradeEvents> & Required<StoreListeners> {
  return {
    onTaskCreated: (rollout, org) => metrics.tasksCreated.labels({ rollout, org }).inc(),
    onRetry: (reason) => metrics.retries.labels(reason).inc(),
    onOutcome: (rollout: string, record: CollectorRecord) => {
      const org = orgOf(record);
      metrics.results.labels({ rollout, org, outcome: record.state }).inc();
      const verdict = healthVerdictOf(record);
      if (verdict) metrics.healthVerdicts.labels({ rollout, org, verdict }).inc();
    },
    onTaskEnded: (state, durationMs) => metrics.upgradeDuration.labels(state).observe(durationMs / 1000),
  };
}
