/**
 * The metrics of what happens to Collectors, written once: the worker reports tasks created,
 * retries and task ends, the scheduler (`run`) the task ends the listings show. The outcomes are
 * not told here: the Collectors' store keeps their tally in Redis in the step that writes each
 * move (rollout/collector/outcome-tally.ts), and the leading `run` exports it (exportOutcomes).
 */
import type { Metrics } from '../../metrics/create-metrics.js';
import type { UpgradeEvents } from '../../worker/upgrade-processor.js';

export function metricEvents(metrics: Metrics): Required<UpgradeEvents> {
  return {
    onTaskCreated: (rollout, org) => metrics.tasksCreated.labels({ rollout, org }).inc(),
    onRetry: (reason) => metrics.retries.labels(reason).inc(),
    onTaskEnded: (state, durationMs) => metrics.upgradeDuration.labels(state).observe(durationMs / 1000),
  };
}
