/**
 * Benchmark: a whole rollout against the simulator, measuring what the policy's budget costs
 * and allows: calls per Collector and per upgraded Collector, status reads per task, 429s, and
 * the run's length against its lower bound (max of Σ durations ÷ maxInFlight, the longest task,
 * calls ÷ 4/s) and against the ideal (the same durations longest first on the same limit), with
 * where the slot-time went and what each refill of a slot waited for (bench/lib/slot-time.ts);
 * and what verification of successes costs: listing requests per Collector (`--verify 0` turns
 * verification off, for the comparison); and what the health events cost (`--health 0` judges by
 * heartbeat only): health requests per upgraded Collector, on a fleet where `--health-noise` of
 * the Collectors have an unresolved event from before (default 0.05).
 *
 * The fleet is the comparison's (bench/lib/bench-fleet.ts): durations by OS and build distance
 * (`--durations random`: one log-normal duration whatever the Collector), 2 % failures.
 *
 * `--stuck 0.02` makes that share of tasks hang until the service's 30-minute time-out; `--offline
 * 0.05` that share of the Collectors offline (listed, refused `collector.not.alive` at create, retried
 * by the policy); `--duration-scale 0.1` shortens every duration tenfold, for a run at `--time-scale 1`
 * in which no real millisecond is multiplied (compare it with the same fleet at 60).
 *
 * Run: npm run bench -- rollout [--collectors 1000] [--in-flight 50] [--time-scale 30] [--stuck 0]
 *        [--offline 0.01] [--duration-scale 1] [--verify 1] [--health 1] [--health-noise 0.05] [--durations kinds|random] [--seed 3] [--max-minutes 60] [--log error|info|debug]
 * Needs Redis: REDIS_URL, a redis-server on PATH (started privately), a container runtime, or root
 * with apt-get (see scripts/provision-redis.mjs).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { DEFAULT_API_SHARE } from '../src/cli/boot/daemon-config.js';
import { createLogger } from '../src/lib/logger.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { BENCH_USER, benchBuilds, benchFleet, DEFAULT_FLEET } from './lib/bench-fleet.js';
import { budgetUse } from './lib/budget-use.js';
import {
  formatBudgetLine,
  formatIdleSplit,
  formatRefillTable,
  formatRunningProfile,
} from './lib/format-table.js';
import { measureRun, readSimulation } from './lib/measure-run.js';
import { noiseMeter } from './lib/noise-meter.js';
import { readRequestLog } from './lib/request-log.js';
import { runFleetUpgrade } from './lib/run-fleet-upgrade.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? String(process.argv[i + 1]) : fallback;
}

const collectors = Number(arg('collectors', '1000'));
const inFlight = Number(arg('in-flight', '50'));
const timeScale = Number(arg('time-scale', '30'));
const stuckRatio = Number(arg('stuck', '0'));
const verify = arg('verify', '1') !== '0';
const health = arg('health', '1') !== '0';
const healthNoise = Number(arg('health-noise', '0.05'));
const fleetOptions = {
  ...DEFAULT_FLEET,
  count: collectors,
  seed: Number(arg('seed', '3')),
  durations: arg('durations', 'kinds') === 'random' ? ('random' as const) : ('kinds' as const),
  offlineRatio: Number(arg('offline', String(DEFAULT_FLEET.offlineRatio))),
  durationScale: Number(arg('duration-scale', '1')),
};
const builds = benchBuilds(fleetOptions);
const logger = createLogger({ level: arg('log', 'error') as 'error', name: 'bench' });
const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-bench-'));
const redis = await provisionRedis({ ensureRedis, logger, dataDir: join(dir, 'redis') });
const fleet = benchFleet(fleetOptions);
fleet.behaviour = { ...fleet.behaviour, stuckRatio, healthEvents: { noiseRatio: healthNoise } };
const sim = await startSimulator({ timeScale, fleet });
try {
  const noise = noiseMeter();
  const run = await runFleetUpgrade({
    redisUrl: redis.url,
    dataDir: dir,
    baseUrl: sim.baseUrl,
    ...BENCH_USER,
    simClock: sim.clock,
    timeScale,
    inFlight,
    logger,
    maxRealMs: Number(arg('max-minutes', '60')) * 60_000,
    policy: verify ? (health ? {} : { verify: { healthEvents: false } }) : { verify: false },
  });
  const { stats, collectors: simCollectors } = await readSimulation(sim.url);
  const f = measureRun({
    stats,
    collectors: simCollectors,
    inFlight,
    target: builds[builds.length - 1] as string,
    noticed: run.noticed,
    perSecond: 4,
    share: DEFAULT_API_SHARE,
    timings: run.timings,
  });
  const { firstTaskMs: _, ...figures } = f;
  const log = await readRequestLog(sim.url);
  const finishes = simCollectors.flatMap((c) => c.tasks.map((t) => t.finishTime ?? 0));
  const budget = budgetUse(log.requests, {
    target: builds[builds.length - 1] as string,
    from: log.requests[0]?.at ?? 0,
    until: Math.max(...finishes),
    perSecond: 4,
    share: DEFAULT_API_SHARE,
  });
  process.stdout.write(
    `${JSON.stringify({
      collectors,
      maxInFlight: inFlight,
      timeScale,
      durations: fleetOptions.durations,
      offline: fleetOptions.offlineRatio,
      stuck: stuckRatio,
      durationScale: fleetOptions.durationScale,
      verify,
      health,
      finished: run.finished,
      phase: run.phase,
      // Every request ÷ every Collector of the rollout (#31's goal reads "per Collector"); the
      // figures below also give it per *upgraded* Collector (callsPerUpgraded).
      callsPerCollector: Number((f.calls / collectors).toFixed(3)),
      listRequestsPerCollector: Number(((stats.requests.byEndpoint.list ?? 0) / collectors).toFixed(3)),
      healthRequests: stats.requests.byEndpoint.health ?? 0,
      healthRequestsPerUpgraded: Number(
        ((stats.requests.byEndpoint.health ?? 0) / Math.max(1, f.upgraded)).toFixed(4),
      ),
      realSeconds: Math.round(run.realMs / 1000),
      redisBytesPerCollector: run.redisBytesPerCollector,
      noise: noise(),
      ...figures,
      budget: { ...budget, logDropped: log.dropped },
    })}\n\ncalls per Collector ${(f.calls / collectors).toFixed(3)}, per upgraded Collector ${f.callsPerUpgraded}\n${formatBudgetLine(budget)}\n\n${formatRefillTable([{ label: `${collectors} Collectors, ${inFlight} in flight`, refill: f.refill }])}\n${formatIdleSplit(f.idle)}\n${formatRunningProfile(f.runningBy5Min)}\n`,
  );
} finally {
  await sim.close();
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}
