/**
 * Benchmark (issue #11, "the API budget spent like gold"): fleet-upgrade against the vendor's bulk
 * script, on one simulated fleet, at equal concurrency.
 *
 * For each in-flight limit, two runs, each against a FRESH simulator built from the same explicit
 * fleet file (bench/lib/bench-fleet.ts: per-Collector durations and outcomes, so that the same
 * Collector's task takes the same time in both runs):
 *   (a) baseline: the vendor's script (bench/lib/vendor-script.ts), batches of the limit;
 *   (b) fleet-upgrade: the real daemon in this process, a policy with target latest and
 *       maxInFlight = the limit (bench/lib/run-fleet-upgrade.ts).
 * Everything is measured from the simulator's side (bench/lib/measure-run.ts); noticed times come
 * from the script itself and from the daemon's records.
 *
 * The baseline runs on a jump clock by default (bench/lib/jump-clock.ts: a discrete-event
 * simulation of the serial script, its calls taking --vendor-latency-ms simulated ms, default 0);
 * `--baseline-clock scaled` runs it in real time at the time scale instead, as the daemon runs.
 *
 * Run: npm run bench -- compare [--collectors 640] [--time-scale 30] [--in-flight 10,50] [--seed 11]
 *        [--network-failures 0] [--max-minutes 30] [--only baseline|fleet-upgrade]
 *        [--baseline-clock jump|scaled] [--vendor-latency-ms 0] [--durations kinds|random]
 * Each run is also measured against the ideal of issue #18 (the same durations longest first on
 * the same limit), with where its slot-time went and, for fleet-upgrade, what each refill of a
 * slot waited for (bench/lib/slot-time.ts).
 * Prints a table and the path of a JSON file with every figure (bench/results/, not committed).
 * Needs Redis (see scripts/provision-redis.mjs).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { createLogger } from '../src/lib/logger.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { startSimulator } from '../src/simulator/start-simulator.js';
import { BENCH_USER, benchBuilds, benchFleet, DEFAULT_FLEET } from './lib/bench-fleet.js';
import { formatRefillTable, formatTable } from './lib/format-table.js';
import { createJumpClock } from './lib/jump-clock.js';
import { measureRun, type RunFigures, readSimulation } from './lib/measure-run.js';
import { noiseMeter } from './lib/noise-meter.js';
import { runFleetUpgrade } from './lib/run-fleet-upgrade.js';
import { VendorClient } from './lib/vendor-client.js';
import { runVendorScript } from './lib/vendor-script.js';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? String(process.argv[i + 1]) : fallback;
}

const fleetOptions = {
  ...DEFAULT_FLEET,
  count: Number(arg('collectors', String(DEFAULT_FLEET.count))),
  seed: Number(arg('seed', String(DEFAULT_FLEET.seed))),
  networkFailures: arg('network-failures', '0') !== '0',
  durations:
    arg('durations', DEFAULT_FLEET.durations) === 'random' ? ('random' as const) : ('kinds' as const),
};
const timeScale = Number(arg('time-scale', '30'));
const inFlights = arg('in-flight', '10,50').split(',').map(Number);
const maxRealMs = Number(arg('max-minutes', '30')) * 60_000;
const only = arg('only', '');
const baselineClock = arg('baseline-clock', 'jump') === 'scaled' ? 'scaled' : 'jump';
const vendorLatencyMs = Number(arg('vendor-latency-ms', '0'));
const BUILDS = benchBuilds(fleetOptions);
const TARGET = BUILDS[BUILDS.length - 1] as string;
const PER_SECOND = 4;

const logger = createLogger({ level: 'error', name: 'bench' });
const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-compare-'));
const resultsDir = join(import.meta.dirname, 'results');
mkdirSync(resultsDir, { recursive: true });
const stamp = new Date().toISOString().slice(0, 19).replace(/:/g, '');
const fleet = benchFleet(fleetOptions);
const fleetFile = join(resultsDir, `compare-${stamp}-fleet.json`);
writeFileSync(fleetFile, JSON.stringify(fleet));
const redis = await provisionRedis({ ensureRedis, logger, dataDir: join(dir, 'redis') });

async function freshSimulator() {
  return startSimulator({ fleet: JSON.parse(JSON.stringify(fleet)), timeScale });
}

async function baseline(inFlight: number) {
  // On a jump clock the script runs as a discrete-event simulation (seconds, not hours); on the
  // scaled clock it runs like the daemon, in real time (a check that both agree).
  const sim =
    baselineClock === 'jump'
      ? await startSimulator({ fleet: JSON.parse(JSON.stringify(fleet)), clock: createJumpClock() })
      : await freshSimulator();
  const noise = noiseMeter();
  const t0 = Date.now();
  try {
    const client = new VendorClient({
      baseUrl: sim.baseUrl,
      ...BENCH_USER,
      clock: sim.clock,
      perSecond: PER_SECOND,
      latencyMs: vendorLatencyMs,
    });
    const script = await runVendorScript({ client, clock: sim.clock, batch: inFlight });
    const realSeconds = (Date.now() - t0) / 1000;
    const { stats, collectors } = await readSimulation(sim.url);
    const figures = measureRun({
      stats,
      collectors,
      inFlight,
      target: TARGET,
      noticed: script.noticed,
      perSecond: PER_SECOND,
    });
    return {
      figures,
      extra: {
        listed: script.listed,
        created: script.created,
        refused: script.refused,
        clientRetriedAfter429: client.counts.rateLimited,
        clock: baselineClock,
        callLatencyMs: vendorLatencyMs,
        realSeconds,
        noise: noise(),
      },
    };
  } finally {
    await sim.close();
  }
}

async function fleetUpgrade(inFlight: number) {
  const sim = await freshSimulator();
  const noise = noiseMeter();
  try {
    const run = await runFleetUpgrade({
      redisUrl: redis.url,
      dataDir: dir,
      baseUrl: sim.baseUrl,
      ...BENCH_USER,
      simClock: sim.clock,
      timeScale,
      inFlight,
      logger,
      maxRealMs,
    });
    const { stats, collectors } = await readSimulation(sim.url);
    const figures = measureRun({
      stats,
      collectors,
      inFlight,
      target: TARGET,
      noticed: run.noticed,
      perSecond: PER_SECOND,
      timings: run.timings,
    });
    return {
      figures,
      extra: {
        rollout: run.rolloutId,
        finished: run.finished,
        phase: run.phase,
        counts: run.counts,
        clockOffsetMs: Math.round(run.clockOffsetMs),
        redisBytesPerCollectorFinished: run.redisBytesPerCollector,
        redisBytesPerCollectorFinishedByGroup: run.redisBytesPerCollectorByGroup,
        realSeconds: run.realMs / 1000,
        noise: noise(),
      },
    };
  } finally {
    await sim.close();
  }
}

/** How far the same Collector's first task took different times in two runs (heartbeat pick-up). */
function sameDurations(a: RunFigures, b: RunFigures) {
  const diffs: number[] = [];
  for (const [id, ms] of Object.entries(a.firstTaskMs)) {
    const other = b.firstTaskMs[id];
    if (other !== undefined) diffs.push(Math.abs(ms - other) / 1000);
  }
  diffs.sort((x, y) => x - y);
  return {
    collectors: diffs.length,
    medianAbsDiffS: diffs[Math.floor(diffs.length / 2)] ?? null,
    maxAbsDiffS: diffs[diffs.length - 1] ?? null,
  };
}

const strip = (f: RunFigures) => {
  const { firstTaskMs: _, ...rest } = f;
  return rest;
};

const wallStart = Date.now();
const levels = [];
try {
  for (const inFlight of inFlights) {
    const b = only === 'fleet-upgrade' ? undefined : await baseline(inFlight);
    const f = only === 'baseline' ? undefined : await fleetUpgrade(inFlight);
    levels.push({
      inFlight,
      baseline: b && { ...strip(b.figures), ...b.extra },
      fleetUpgrade: f && { ...strip(f.figures), ...f.extra },
      sameTaskDurations: b && f ? sameDurations(b.figures, f.figures) : undefined,
    });
    process.stderr.write(
      `in flight ${inFlight} done after ${Math.round((Date.now() - wallStart) / 1000)} s\n`,
    );
  }
} finally {
  await redis.stop();
  rmSync(dir, { recursive: true, force: true });
}

const out = {
  benchmark: 'compare',
  at: new Date().toISOString(),
  fleet: { ...fleetOptions, file: fleetFile, builds: BUILDS },
  timeScale,
  baselineClock,
  vendorLatencyMs,
  budgetPerSecond: PER_SECOND,
  realSeconds: Math.round((Date.now() - wallStart) / 1000),
  levels,
};
const file = join(resultsDir, `compare-${stamp}.json`);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
const refills = levels.flatMap((l) =>
  l.fleetUpgrade ? [{ label: `fleet-upgrade, ${l.inFlight} in flight`, refill: l.fleetUpgrade.refill }] : [],
);
process.stdout.write(
  `${formatTable(levels)}\n\n${refills.length ? `${formatRefillTable(refills)}\n\n` : ''}full figures: ${file}\n`,
);
