/**
 * The fleet of the comparison benchmark as an explicit fleet file, so that two fresh simulators
 * give the same Collector the same upgrade whoever calls them and in whatever order.
 *
 * Why explicit: the simulator draws a task's duration (`behaviour.upgradeSeconds`) and its outcome
 * from ONE random stream, at the moment a task is created or picked up (fleet-model.ts `create`,
 * `stepMs`). Two orchestrators that create tasks in different orders would give a Collector
 * different durations and outcomes. Here each Collector carries its own `upgradeSeconds` and, for
 * the failing ones, `outcome: fail` with a `failureCause`, drawn once from `seed`; the simulator's
 * own draws then decide nothing that matters (failureRatio and stuckRatio are 0). What still
 * depends on timing is the pick-up at the Collector's next heartbeat (at most heartbeatSeconds).
 */
import { createRandom } from '../../src/lib/random.js';
import { generateFleet } from '../../src/simulator/generate-fleet.js';
import type { FailureCause, FleetFileInput } from '../../src/simulator/schema.js';

export const BENCH_USER = { accessId: 'bench', accessKey: 'bench-secret' } as const;
export const BENCH_BUILDS = ['19.400-5', '19.450-12', '19.470-4'] as const;

/** The failure causes that the default policy does not retry (network is retried 3 × 10m). */
const NOT_RETRIED: readonly FailureCause[] = ['disk_space', 'upgrades_disabled', 'permission', 'unknown'];
const ALL_CAUSES: readonly FailureCause[] = [...NOT_RETRIED, 'network'];

export interface BenchFleetOptions {
  count: number;
  seed: number;
  /** Log-normal upgrade durations, seconds. */
  median: number;
  p95: number;
  failureRatio: number;
  offlineRatio: number;
  /** false: failing Collectors get a cause the default policy does not retry (no 10-minute retries). */
  networkFailures: boolean;
}

export const DEFAULT_FLEET: BenchFleetOptions = {
  count: 640,
  seed: 11,
  median: 180,
  p95: 600,
  failureRatio: 0.02,
  offlineRatio: 0.01,
  networkFailures: false,
};

export function benchFleet(o: BenchFleetOptions): FleetFileInput {
  const generated = generateFleet({
    count: o.count,
    seed: o.seed,
    hostedRatio: 0,
    offlineRatio: o.offlineRatio,
    upToDateRatio: 0,
    idStart: 100_000_000,
    builds: BENCH_BUILDS,
  });
  // A stream of its own: the generated records stay those of generateFleet(seed).
  const rng = createRandom(o.seed ^ 0xbe1c);
  const causes = o.networkFailures ? ALL_CAUSES : NOT_RETRIED;
  const collectors = generated.map((c) => {
    const upgradeSeconds = Math.max(1, Math.round(rng.logNormal(o.median, o.p95)));
    const fails = rng.chance(o.failureRatio);
    return fails
      ? { ...c, upgradeSeconds, outcome: 'fail' as const, failureCause: rng.pick(causes) }
      : { ...c, upgradeSeconds };
  });
  return {
    builds: [...BENCH_BUILDS],
    users: [{ ...BENCH_USER }],
    collectors,
    behaviour: {
      upgradeSeconds: { median: o.median, p95: o.p95 },
      failureRatio: 0,
      stuckRatio: 0,
      // Three builds: no move is longer than two, so every task is one step of upgradeSeconds.
      incrementalAbove: 2,
    },
    seed: o.seed,
  };
}
