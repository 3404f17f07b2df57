import type { FleetFileInput } from '../../src/simulator/schema.js';

/**
 * A generated fleet for a whole rehearsal across processes: `count` Collectors, all online and
 * upgradable, on three builds, of which 3 % fail. The failures are of the cause the default
 * policy fails outright (unknown): each ends `failed` after its one task (a network failure would
 * be retried with a new task, by design), so every Collector has exactly one task.
 */
export function rehearsalFleet(count: number, seed: number): FleetFileInput {
  return {
    builds: ['19.400-5', '19.450-12', '19.470-4'],
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    generate: { count, seed, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
    behaviour: {
      upgradeSeconds: { median: 90, p95: 200 },
      failureRatio: 0.03,
      failureCauses: { unknown: 1 },
      stuckRatio: 0,
      incrementalAbove: 1,
    },
    seed,
  };
}
