/**
 * Benchmark (issues #17 and #18): a rollout of 100,000 Collectors end to end, as the vendor allows
 * them: 10 organizations of 10,000, each with its own user, credentials and API budget (4 requests/s
 * per user in the simulator, 10 at once per key).
 *
 * - The simulator: one process of its own with `orgs:` (bench/lib/orgs-simulator-process.ts), each
 *   organization a fleet like the comparison's (bench/lib/bench-fleet.ts, `durations: kinds`:
 *   durations by OS and build distance; 2 % failures; 1 % offline), a seed of its own. The fleet
 *   goes through a temp file (100,000 explicit Collectors do not fit an environment variable).
 * - fleet-upgrade as the real CLI, built (`npm run build`, then a copy of dist/ in the temp dir, so
 *   that a rebuild by someone else during the run changes nothing): ONE `run` and ONE `worker`
 *   process, a settings file with `orgs` (keys from files), one policy covering every organization:
 *   target latest, maxInFlight = orgs × per-org in flight, maxInFlightPerOrg = per-org in flight.
 * - A private Redis (scripts/provision-redis.mjs; REDIS_URL is ignored, so that Redis's CPU, memory
 *   and commands are this run's alone).
 * - One clock: the simulator's scaled clock and the deployment's (its Redis clock key, written
 *   before any process starts: lib/shared-clock.ts reads it) share one origin; the offset is still
 *   measured (simulator `now` against the deployment's clock) and applied.
 *
 * Measured, every figure of the service from the simulator's records: makespan (first request to
 * last finish, simulated minutes) against the largest organization's bound and ideal
 * (lptMakespan on its own limit), per organization too; slot-time and refills
 * (bench/lib/slot-time.ts, with noticedAt/admittedAt/pickedAt from the daemon's records in Redis);
 * calls per upgraded Collector by endpoint, the aggregate request rate against orgs × 4/s, 429s;
 * peak RSS (VmHWM) and CPU seconds per 1,000 Collectors of run, worker, simulator and Redis;
 * event-loop delay of run and worker (their /metrics) and of the simulator; Redis bytes per
 * Collector after the rollout, peak memory, commands per second and CPU.
 *
 * Run: npm run bench -- orgs [--orgs 10] [--per-org 10000] [--in-flight-per-org 500]
 *        [--time-scale 10] [--max-minutes 90] [--seed 11] [--tick 250ms] [--concurrency N (default: the daemon's, 20 per organization)]
 *        [--sample-seconds 5] [--build 1] [--log-level warn] [--node-options '--max-old-space-size=192']
 * Validate small first: npm run bench -- orgs --orgs 3 --per-org 1000 --time-scale 60
 * Prints a table and the path of a JSON file with every figure (bench/results/, not committed).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { createState } from '../src/cli/boot/create-state.js';
import { DEFAULT_API_SHARE, defaultConcurrency } from '../src/cli/boot/daemon-config.js';
import { watchRollouts } from '../src/cli/boot/watch-rollouts.js';
import { createLogger } from '../src/lib/logger.js';
import { closeRedis, createRedis } from '../src/lib/redis/create-redis.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { readSharedClock } from '../src/lib/shared-clock.js';
import { Policy } from '../src/policy/schema.js';
import type { CollectorRecord } from '../src/rollout/index.js';
import { benchFleet, DEFAULT_FLEET, KIND_BUILDS } from './lib/bench-fleet.js';
import { budgetUse } from './lib/budget-use.js';
import { formatOrgsTables } from './lib/format-orgs.js';
import { formatBudgetLine } from './lib/format-table.js';
import type { SimCollectorView, SimStatsView } from './lib/measure-run.js';
import { orgsFigures, orgTimings } from './lib/orgs-figures.js';
import { logSummary, spawnCli, spawnOrgsSimulator, waitHealthy } from './lib/orgs-processes.js';
import {
  cpuBetween,
  lagSummary,
  parseInfo,
  rates,
  type Sample,
  sampleOnce,
  startSampler,
} from './lib/orgs-sampler.js';
import { redisFootprint } from './lib/redis-footprint.js';
import { readRequestLog, requestFigures } from './lib/request-log.js';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? String(process.argv[i + 1]) : fallback;
};
const orgCount = Number(arg('orgs', '10'));
const perOrg = Number(arg('per-org', '10000'));
const perOrgInFlight = Number(arg('in-flight-per-org', '500'));
const timeScale = Number(arg('time-scale', '10'));
const maxRealMs = Number(arg('max-minutes', '90')) * 60_000;
const seed = Number(arg('seed', String(DEFAULT_FLEET.seed)));
const tick = arg('tick', '250ms');
const concurrency = arg('concurrency', String(defaultConcurrency(orgCount)));
const sampleMs = Number(arg('sample-seconds', '5')) * 1000;
const build = arg('build', '1') !== '0';
/** NODE_OPTIONS of the run and worker processes (e.g. `--max-old-space-size=192`: how much of the RSS is garbage). */
const nodeOptions = arg('node-options', '');
const logLevel = arg('log-level', 'warn');
const PER_SECOND = 4;
const TARGET = KIND_BUILDS[KIND_BUILDS.length - 1] as string;
const root = join(import.meta.dirname, '..');
const say = (msg: string) =>
  process.stderr.write(`[orgs ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// The build, then a copy of it: the processes run what was built now, whatever happens to dist/.
const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-orgs-bench-'));
if (build) {
  say('npm run build');
  execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
}
// What was built: the commit and the files of src/ that differed from it (others edit src/ too).
const git = (...a: string[]) => execFileSync('git', a, { cwd: root, encoding: 'utf8' }).trim();
const source = {
  head: git('rev-parse', '--short', 'HEAD'),
  changedSrc: git('status', '--short', 'src').split('\n').filter(Boolean),
};
const app = join(dir, 'app');
mkdirSync(app);
for (const part of ['dist', 'bin', 'package.json'])
  cpSync(join(root, part), join(app, part), { recursive: true });
symlinkSync(join(root, 'node_modules'), join(app, 'node_modules'));
const cli = join(app, 'bin', 'fleet-upgrade.js');

// The fleet: an organization of `perOrg` per seed, a user each.
const orgNames = Array.from({ length: orgCount }, (_, i) => `org-${String(i + 1).padStart(2, '0')}`);
const users = orgNames.map((_, i) => ({ accessId: `bench-${i + 1}`, accessKey: `bench-${i + 1}-secret` }));
const fleetFile = join(dir, 'fleet.json');
writeFileSync(
  fleetFile,
  JSON.stringify({
    orgs: orgNames.map((name, i) => ({
      name,
      ...benchFleet({ ...DEFAULT_FLEET, count: perOrg, seed: seed + i, durations: 'kinds' }),
      users: [users[i]],
    })),
  }),
);
const logDir = join(dir, 'logs');
mkdirSync(logDir);

const logger = createLogger({ level: 'error', name: 'bench' });
const { REDIS_URL: _ignored, ...envWithoutRedis } = process.env;
const provisioned = await provisionRedis({
  ensureRedis,
  logger,
  env: envWithoutRedis,
  dataDir: join(dir, 'redis'),
});
const redis = createRedis(provisioned.url, { name: 'orgs-bench' });
const prefix = `orgs-bench-${randomBytes(4).toString('hex')}:`;
const state = createState(redis, prefix);
const origin = Date.now();
await redis.set(state.keys.clock, JSON.stringify({ scale: timeScale, origin }));

say(`simulator: ${orgCount} organizations of ${perOrg} at x${timeScale}`);
const sim = await spawnOrgsSimulator({ fleetFile, timeScale, origin, logDir });
const simGet = async <T>(path: string): Promise<T> =>
  (await (await fetch(`${sim.url}${path}`, { signal: AbortSignal.timeout(60_000) })).json()) as T;

// Settings (keys from files), the policy.
const settingsFile = join(dir, 'settings.yaml');
writeFileSync(
  settingsFile,
  stringify({
    orgs: orgNames.map((name, i) => {
      const keyFile = join(dir, `${name}.key`);
      writeFileSync(keyFile, `${users[i]?.accessKey}\n`, { mode: 0o600 });
      return { name, baseUrl: sim.baseUrl, accessId: users[i]?.accessId, accessKeyFile: keyFile };
    }),
  }),
);
const policyDoc = {
  name: 'orgs-bench',
  target: 'latest',
  maxInFlight: perOrgInFlight * orgCount,
  maxInFlightPerOrg: perOrgInFlight,
};
const policy = Policy.parse(policyDoc);
const policyFile = join(dir, 'orgs-bench.yaml');
writeFileSync(policyFile, stringify(policyDoc));
const env: NodeJS.ProcessEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  REDIS_URL: provisioned.url,
  FLEET_UPGRADE_KEY_PREFIX: prefix,
  FLEET_UPGRADE_TIME_SCALE: String(timeScale),
  FLEET_UPGRADE_TICK: tick,
  FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
  FLEET_UPGRADE_CONCURRENCY: concurrency,
  LOG_LEVEL: logLevel,
  ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
};

const redisPid = Number(parseInfo(await redis.info('server')).process_id);
const pids = { simulator: sim.pid, redis: redisPid, bench: process.pid };
const samplerBase = { redis, simUrl: sim.url };
const before = await sampleOnce({ ...samplerBase, pids, metrics: {} });
const load = [loadavg()[0] as number];
const loadTimer = setInterval(() => load.push(loadavg()[0] as number), 30_000);
const t0 = Date.now();
say('starting run and worker');
const run = await spawnCli({
  name: 'run',
  cli,
  args: ['run', '--config', settingsFile, '--policy', policyFile],
  env,
  logDir,
});
const worker = await spawnCli({
  name: 'worker',
  cli,
  args: ['worker', '--config', settingsFile],
  env,
  logDir,
});
let finished = false;
let stoppedWhy = '';
let statsAtEnd: { org: string; stats: SimStatsView }[] = [];
let sampler: ReturnType<typeof startSampler> | undefined;
let last: Sample | undefined;
let realMs = 0;
try {
  await Promise.all([waitHealthy(run, 60_000), waitHealthy(worker, 60_000)]);
  sampler = startSampler({
    ...samplerBase,
    pids: { run: run.pid, worker: worker.pid, ...pids },
    metrics: { run: run.url, worker: worker.url },
    everyMs: sampleMs,
  });
  let lastSay = 0;
  const done = await watchRollouts({
    daemon: state,
    policies: () => [policy],
    intervalMs: 2000,
    stopped: () => {
      if (!run.running() || !worker.running())
        stoppedWhy = `a process exited: run ${JSON.stringify(run.exit())}, worker ${JSON.stringify(worker.exit())}`;
      else if (Date.now() - t0 > maxRealMs) stoppedWhy = `--max-minutes ${maxRealMs / 60_000} passed`;
      return stoppedWhy !== '';
    },
    onProgress: (rollouts) => {
      if (Date.now() - lastSay < 30_000) return;
      lastSay = Date.now();
      for (const r of rollouts) say(`${r.id} ${r.phase}: ${r.done}/${r.total} done, ${r.inflight} in flight`);
    },
  });
  finished = done !== undefined;
  // The service's counts at the rollout's end (the daemon's scans go on after it).
  statsAtEnd = await Promise.all(
    orgNames.map(async (org) => ({ org, stats: await simGet<SimStatsView>(`/_sim/stats?org=${org}`) })),
  );
  sampler.stop();
  last = await sampler.take();
  realMs = Date.now() - t0;
  say(finished ? `rollout finished after ${Math.round(realMs / 1000)} s` : `stopped: ${stoppedWhy}`);
} finally {
  clearInterval(loadTimer);
  sampler?.stop();
  await Promise.all([run.stop(), worker.stop()]);
  if (!last) {
    await sim.stop();
    await closeRedis(redis);
    await provisioned.stop();
  }
}
if (!last) throw new Error('the rollout ended without a last sample');

// Clocks: the simulator's `now` against the deployment's (as its processes read it from Redis).
const clock = await readSharedClock(redis, state.keys.clock);
const offsets: number[] = [];
for (let i = 0; i < 5; i++) {
  const c0 = clock.now();
  const s = await simGet<{ now: number }>(`/_sim/stats?org=${orgNames[0]}`);
  offsets.push(s.now - (c0 + clock.now()) / 2);
}
offsets.sort((a, b) => a - b);
const offsetMs = offsets[2] as number;

const rolloutId = (await state.rollouts.currentIds()).get(policy.name);
const records: CollectorRecord[] = [];
if (rolloutId) for await (const r of state.store.all(rolloutId)) records.push(r);
const counts: Record<string, number> = {};
for (const r of records) counts[r.state] = (counts[r.state] ?? 0) + 1;
say('reading the footprint and the simulator');
const footprint = await redisFootprint(redis, prefix);
const timings = orgTimings(records, offsetMs);
// Each record's times, for an analysis the tables do not make (beside the logs: records.jsonl).
writeFileSync(
  join(logDir, 'records.jsonl'),
  records
    .map((r) =>
      JSON.stringify({
        org: r.org,
        state: r.state,
        taskId: r.taskId,
        admittedAt: r.admittedAt,
        pickedAt: r.pickedAt,
        requestTime: r.requestTime,
        succeededAt: r.succeededAt,
        finishedAt: r.finishedAt,
        attempts: (r.attemptLog ?? []).map((a) => ({ taskId: a.taskId, endedAt: a.endedAt })),
      }),
    )
    .join('\n'),
);
const runs = await Promise.all(
  statsAtEnd.map(async ({ org, stats }) => ({
    org,
    stats,
    collectors: (await simGet<{ collectors: SimCollectorView[] }>(`/_sim/collectors?org=${org}`)).collectors,
    timings: timings.get(org),
  })),
);

// The service's tasks, on its clock (the records' times are the deployment's: + clockOffsetMs).
writeFileSync(
  join(logDir, 'tasks.jsonl'),
  runs
    .flatMap(({ org, collectors }) =>
      collectors.flatMap((c) => c.tasks.map((t) => JSON.stringify({ org, collector: c.id, ...t }))),
    )
    .join('\n'),
);
// The services' request logs: rates per second and minute, and when the 429s came.
const taskTimes = runs.map((r) =>
  r.collectors.flatMap((c) => c.tasks.map((t) => [t.requestTime, t.finishTime ?? t.requestTime])),
);
const logs = await Promise.all(
  runs.map(async (r, i) => {
    const creates = (taskTimes[i] ?? []).map(([at]) => at as number);
    return {
      org: r.org,
      ...(await readRequestLog(sim.url, r.org)),
      creates: { first: Math.min(...creates), last: Math.max(...creates) },
    };
  }),
);
const requestLog = requestFigures(logs, {
  from: Math.min(...logs.map((l) => l.creates.first)),
  until: Math.max(...taskTimes.flat().map(([, end]) => end as number)),
});
// What each organization's budget went to (creates, noticing, scans) and its busiest minute
// against the share (budget-use.ts).
const budgetByOrg = logs.map((l) => ({
  org: l.org,
  ...budgetUse(l.requests, {
    target: TARGET,
    from: l.requests[0]?.at ?? 0,
    until: Math.max(...taskTimes.flat().map(([, end]) => end as number)),
    perSecond: PER_SECOND,
    share: DEFAULT_API_SHARE,
  }),
}));
const samples = sampler?.samples ?? [];
const simLags = sim.lags.filter((l) => l.at >= t0 && l.at <= (last?.at ?? Date.now())).map((l) => l.lag);
await sim.stop();
await closeRedis(redis);
await provisioned.stop();

const figures = orgsFigures(runs, {
  perOrgInFlight,
  target: TARGET,
  perSecond: PER_SECOND,
  share: DEFAULT_API_SHARE,
  budgetRates: new Map(budgetByOrg.map((b) => [b.org, b.busiestMinute.perSecond ?? 0])),
});
const collectors = orgCount * perOrg;
const perK = (x: number) => Number(((x * 1000) / collectors).toFixed(2));
// Redis's own account (INFO cpu), from before `run` started to the rollout's end.
const redisCpu = Number(last.redis?.cpuSeconds) - Number(before.redis?.cpuSeconds);
const cpu = cpuBetween(before, last);
const out = {
  benchmark: 'orgs',
  at: new Date().toISOString(),
  source,
  options: {
    orgs: orgCount,
    perOrg,
    perOrgInFlight,
    timeScale,
    maxMinutes: maxRealMs / 60_000,
    seed,
    tick,
    concurrency,
    ...(nodeOptions ? { nodeOptions } : {}),
  },
  fleet: {
    durations: 'kinds',
    builds: KIND_BUILDS,
    seeds: orgNames.map((_, i) => seed + i),
    simulatorStartMs: sim.startMs,
  },
  finished,
  stoppedWhy: stoppedWhy || undefined,
  realSeconds: Math.round(realMs / 1000),
  clockOffsetMs: Math.round(offsetMs),
  /** Wall-clock ms at which the simulator's and the deployment's clocks read the wall clock. */
  clockOrigin: origin,
  counts,
  ...figures,
  requestLog,
  budgetByOrg,
  requestRatePerSimSecond: rates(
    samples
      .filter((s) => s.sim)
      .map((s) => ({ time: s.sim?.now as number, value: s.sim?.requests as number })),
    1000,
  ),
  processes: {
    peakRssMb: Object.fromEntries(Object.entries(last.procs).map(([k, v]) => [k, v.peakRssMb ?? null])),
    cpuSeconds: cpu.byProcess,
    cpuSecondsPer1000Collectors: Object.fromEntries(
      Object.entries(cpu.byProcess).map(([k, v]) => [k, perK(v)]),
    ),
    coresUsed: Object.fromEntries(
      Object.entries(cpu.byProcess).map(([k, v]) => [k, Number((v / cpu.realSeconds).toFixed(2))]),
    ),
    machine: {
      busyCpuSeconds: cpu.machineBusy,
      othersCpuSeconds: cpu.others,
      cores: cpus().length,
      realSeconds: cpu.realSeconds,
    },
    eventLoopDelayMs: {
      run: lagSummary(samples.map((s) => s.lag.run)) ?? 'not exported',
      worker: lagSummary(samples.map((s) => s.lag.worker)) ?? 'not exported',
      simulator: lagSummary(simLags) ?? 'no samples',
    },
    logs: { run: logSummary(run.logFile), worker: logSummary(worker.logFile) },
  },
  redis: {
    bytesPerCollector: records.length ? Math.round(footprint.bytes / records.length) : null,
    bytesPerCollectorByGroup: Object.fromEntries(
      Object.entries(footprint.byGroup).map(([g, v]) => [
        g,
        records.length ? Math.round(v.bytes / records.length) : 0,
      ]),
    ),
    keys: footprint.keys,
    usedMemoryPeakMb: Number((Number(last.redis?.usedMemoryPeak) / 1024 / 1024).toFixed(1)),
    commandsPerRealSecond: rates(
      samples.filter((s) => s.redis).map((s) => ({ time: s.at, value: s.redis?.commands as number })),
      1000,
    ),
    commandsPerCollector: Number(
      ((Number(last.redis?.commands) - Number(before.redis?.commands)) / collectors).toFixed(1),
    ),
    cpuSeconds: Number(redisCpu.toFixed(2)),
    cpuSecondsPer1000Collectors: perK(redisCpu),
  },
  noise: {
    loadAverage1m: {
      start: load[0],
      mean: Number((load.reduce((a, b) => a + b, 0) / load.length).toFixed(2)),
      end: loadavg()[0],
    },
  },
  samples,
};
const resultsDir = join(import.meta.dirname, 'results');
mkdirSync(resultsDir, { recursive: true });
const file = join(resultsDir, `orgs-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.json`);
writeFileSync(file, `${JSON.stringify(out, null, 2)}\n`);
// The logs of run, worker and simulator beside the figures (the temp dir goes).
const logsKept = file.replace(/\.json$/, '-logs');
cpSync(logDir, logsKept, { recursive: true });
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `${formatOrgsTables(out)}\n\n${budgetByOrg.map((b) => `${b.org}: ${formatBudgetLine(b)}`).join('\n')}\n\nfull figures: ${file}\nlogs: ${logsKept}\n`,
);
