/** The chaos run's check of fleet_upgrade_results_total against the records (test/support/chaos/chaos-figures.ts). */
import { describe, expect, it } from 'vitest';
import { resultsMetricViolations } from '../../support/chaos/chaos-figures.js';

describe('resultsMetricViolations', () => {
  it('passes a metric equal to the records, not_alive counted at least as often as it rests', () => {
    expect(resultsMetricViolations({ succeeded: 5, not_alive: 3 }, { succeeded: 5, not_alive: 2 })).toEqual(
      [],
    );
  });

  it('names each outcome the metric misses, over-counts, or invents', () => {
    expect(
      resultsMetricViolations(
        { succeeded: 4, failed: 2, aborted: 1, not_alive: 1 },
        { succeeded: 5, failed: 1, not_alive: 2 },
      ),
    ).toEqual([
      'fleet_upgrade_results_total{outcome="succeeded"} is 4, but 5 record(s) are succeeded',
      'fleet_upgrade_results_total{outcome="failed"} is 2, but 1 record(s) are failed',
      'fleet_upgrade_results_total{outcome="aborted"} is 1, but 0 record(s) are aborted',
      'fleet_upgrade_results_total{outcome="not_alive"} is 1, but 2 record(s) are not_alive',
    ]);
  });
});
