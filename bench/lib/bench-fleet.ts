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
 *
 * Durations (`durations`):
 * - `kinds` (the default since issue #18): they depend on what predicts them, as the vendor says
 *   of real upgrades: a Windows Collector's step takes three times a Linux or Mac one's, and a
 *   Collector more than two builds behind goes in increments of two builds (six builds: one, two
 *   or three steps). Each Collector's step time is drawn around its system's median.
 * - `random`: one log-normal duration per Collector whatever it is (three builds, one step each):
 *   the fleet of issue #11's figures; nothing predicts a duration.
 */
import { createRandom } from '../../src/lib/random.js';
import { generateFleet } from '../../src/simulator/generate-fleet.js';
import type { FailureCause, FleetFileInput } from '../../src/simulator/schema.js';

export const BENCH_USER = { accessId: 'bench', accessKey: 'bench-secret' } as const;
/** The builds of the `random` fleet (three: every move is one step). */
export const BENCH_BUILDS = ['19.400-5', '19.450-12', '19.470-4'] as const;
/** The builds of the `kinds` fleet (six: a move of 3 or 4 builds is two steps, of 5 three). */
export const KIND_BUILDS = ['19.400-5', '19.418-9', '19.432-7', '19.450-12', '19.462-3', '19.470-4'] as const;
/** Step medians and 95th percentiles by system in the `kinds` fleet, seconds. */
const WINDOWS_STEP = { median: 360, p95: 600 } as const;
const OTHER_STEP = { median: 120, p95: 240 } as const;

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
  /** What a duration depends on (see the header); `median`/`p95` apply to `random` only. */
  durations: 'kinds' | 'random';
  /**
   * Every drawn duration times this (default 1): 0.1 makes the `kinds` fleet's steps 12 s (other
   * systems) and 36 s (Windows), for a run at time scale 1 that lasts minutes.
   */
  durationScale?: number;
}

/** The builds of a bench fleet, oldest first (the last is the target). */
export function benchBuilds(o: Pick<BenchFleetOptions, 'durations'>): readonly string[] {
  return o.durations === 'kinds' ? KIND_BUILDS : BENCH_BUILDS;
}

export const DEFAULT_FLEET: BenchFleetOptions = {
  count: 640,
  seed: 11,
  median: 180,
  p95: 600,
  failureRatio: 0.02,
  offlineRatio: 0.01,
  networkFailures: false,
  durations: 'kinds',
};

export function benchFleet(o: BenchFleetOptions): FleetFileInput {
  const generated = generateFleet({
    count: o.count,
    seed: o.seed,
    hostedRatio: 0,
    offlineRatio: o.offlineRatio,
    upToDateRatio: 0,
    idStart: 100_000_000,
    builds: benchBuilds(o),
  });
  // A stream of its own: the generated records stay those of generateFleet(seed).
  const rng = createRandom(o.seed ^ 0xbe1c);
  const causes = o.networkFailures ? ALL_CAUSES : NOT_RETRIED;
  const collectors = generated.map((c) => {
    const step = o.durations === 'random' ? o : c.osName?.startsWith('Windows') ? WINDOWS_STEP : OTHER_STEP;
    const upgradeSeconds = Math.max(
      1,
      Math.round(rng.logNormal(step.median, step.p95) * (o.durationScale ?? 1)),
    );
    const fails = rng.chance(o.failureRatio);
    return fails
      ? { ...c, upgradeSeconds, outcome: 'fail' as const, failureCause: rng.pick(causes) }
      : { ...c, upgradeSeconds };
  });
  return {
    builds: [...benchBuilds(o)],
    users: [{ ...BENCH_USER }],
    collectors,
    behaviour: {
      upgradeSeconds: { median: o.median, p95: o.p95 },
      failureRatio: 0,
      stuckRatio: 0,
      // A move of more than two builds goes in steps of upgradeSeconds each (random: never).
      incrementalAbove: 2,
    },
    seed: o.seed,
  };
}
