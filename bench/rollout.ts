/**
 * Benchmark: a whole rollout against the simulator, measuring what the policy's budget costs
 * and allows: status reads per task, 429s, and the run's length against its lower bound
 * (the sum of the task durations divided by maxInFlight, or the longest task if longer).
 *
 * and what verification of successes costs: listing requests per Collector (`--verify 0` turns
 * verification off, for the comparison).
 *
 * Run: npm run bench -- rollout [--collectors 1000] [--in-flight 50] [--time-scale 30] [--stuck 0] [--verify 1]
 * Needs Redis: REDIS_URL, a redis-server on PATH (started privately), a container runtime, or root
 * with apt-get (see scripts/provision-redis.mjs).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { provisionRedis } from '../scripts/provision-redis.mjs';
import { rehearsalConfig } from '../src/cli/boot/daemon-config.js';
import { startDaemon } from '../src/cli/boot/start-daemon.js';
import { watchRollouts } from '../src/cli/boot/watch-rollouts.js';
import { createLogger } from '../src/lib/logger.js';
import { ensureRedis } from '../src/lib/redis/redis-server.js';
import { Policy } from '../src/policy/schema.js';
import { startSimulator } from '../src/simulator/start-simulator.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
}

const collectors = arg('collectors', 1000);
const inFlight = arg('in-flight', 50);
const timeScale = arg('time-scale', 30);
const stuckRatio = arg('stuck', 0);
const verify = arg('verify', 1) !== 0;
const logger = createLogger({ level: 'error', name: 'bench' });
const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-bench-'));
const redis = await provisionRedis({ ensureRedis, logger, dataDir: join(dir, 'redis') });
const sim = await startSimulator({
  timeScale,
  fleet: {
    builds: ['19.400-5', '19.450-12', '19.470-4'],
    users: [{ accessId: 'bench', accessKey: 'bench-secret' }],
    generate: { count: collectors, seed: 3, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
    behaviour: {
      upgradeSeconds: { median: 180, p95: 600 },
      failureRatio: 0.02,
      stuckRatio,
      incrementalAbove: 2,
    },
    seed: 3,
  },
});
const policy = Policy.parse({ name: 'bench', maxInFlight: inFlight, ...(verify ? {} : { verify: false }) });
const daemon = await startDaemon({
  role: 'run',
  logger,
  policies: () => [policy],
  config: rehearsalConfig({
    redisUrl: redis.url,
    keyPrefix: `bench-${randomBytes(4).toString('hex')}:`,
    dataDir: dir,
    timeScale,
    logLevel: 'error',
    tickMs: 500,
    stalledIntervalMs: 30_000,
    api: { baseUrl: sim.baseUrl, accessId: 'bench', accessKey: 'bench-secret' },
  }),
});
const wallStart = Date.now();
await watchRollouts({ daemon, policies: () => [policy], intervalMs: 500 });
const wallSeconds = (Date.now() - wallStart) / 1000;
const stats = (await (await fetch(`${sim.url}/_sim/stats`)).json()) as {
  tasksCreated: number;
  rateLimited: number;
  maxConcurrentTasks: number;
  requests: { total: number; byEndpoint: Record<string, number> };
};
const all = (await (await fetch(`${sim.url}/_sim/collectors`)).json()) as {
  collectors: { tasks: { requestTime: number; finishTime: number | null }[] }[];
};
const tasks = all.collectors.flatMap((c) => c.tasks).filter((t) => t.finishTime !== null) as {
  requestTime: number;
  finishTime: number;
}[];
const durations = tasks.map((t) => t.finishTime - t.requestTime);
const busy = durations.reduce((a, b) => a + b, 0);
const first = Math.min(...tasks.map((t) => t.requestTime));
const last = Math.max(...tasks.map((t) => t.finishTime));
const bound = Math.max(busy / inFlight, ...durations);
await daemon.stop();
await sim.close();
await redis.stop();
rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify({
    collectors,
    maxInFlight: inFlight,
    timeScale,
    tasks: stats.tasksCreated,
    statusReadsPerTask: Number(((stats.requests.byEndpoint.status ?? 0) / stats.tasksCreated).toFixed(2)),
    requestsPerTask: Number((stats.requests.total / stats.tasksCreated).toFixed(2)),
    verify,
    listRequests: stats.requests.byEndpoint.list ?? 0,
    listRequestsPerCollector: Number(((stats.requests.byEndpoint.list ?? 0) / collectors).toFixed(3)),
    rateLimited: stats.rateLimited,
    maxConcurrentTasks: stats.maxConcurrentTasks,
    simulatedMinutes: Number(((last - first) / 60_000).toFixed(1)),
    lowerBoundMinutes: Number((bound / 60_000).toFixed(1)),
    overBound: Number(((last - first) / bound).toFixed(2)),
    wallSeconds: Number(wallSeconds.toFixed(1)),
  }),
);
