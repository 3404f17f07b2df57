/**
 * The composition root of `run` and `worker`: it only wires pieces that small functions build
 * (connect-redis.ts, create-state.ts, create-api.ts, the shared clock, the queue, the worker, the
 * scheduler loop, the HTTP endpoints) and `stop()` closes them in reverse order, each within a
 * few seconds.
 */
import type { Worker } from 'bullmq';
import { createRolloutApi, type RolloutApi } from '../../http/create-rollout-api.js';
import {
  type ReadinessCheck,
  type RunningHttpServer,
  startHttpServer,
} from '../../http/start-http-server.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../../lib/redis/create-redis.js';
import { pingWithin } from '../../lib/redis/ping-within.js';
import { openSharedClock } from '../../lib/shared-clock.js';
import { withTimeout } from '../../lib/with-timeout.js';
import { createMetrics, type Metrics } from '../../metrics/create-metrics.js';
import { startNotifier } from '../../notify/start-notifier.js';
import type { Policy } from '../../policy/schema.js';
import { createUpgradeQueue, type UpgradeQueue } from '../../queue/upgrade-job.js';
import type { CollectorStore, Keys, RolloutStore } from '../../rollout/index.js';
import {
  LeaderLock,
  readFleetStatus,
  Scheduler,
  type SchedulerLoop,
  startSchedulerLoop,
} from '../../rollout/index.js';
import { startUpgradeWorker } from '../../worker/start-upgrade-worker.js';
import type { UpgradeEvents } from '../../worker/upgrade-processor.js';
import { connectRedis } from './connect-redis.js';
import { createApi } from './create-api.js';
import { createState } from './create-state.js';
import type { DaemonConfig } from './daemon-config.js';

const SHUTDOWN_STEP_MS = 5000;

export interface DaemonOptions {
  config: DaemonConfig;
  role: 'run' | 'worker';
  logger: Logger;
  /** `run`: the policies in force, read at every scheduler round. */
  policies?: () => readonly Policy[];
  /** `run`: policy files' state, for /readyz. */
  policyProblems?: () => string | undefined;
}

export interface Daemon {
  keys: Keys;
  redis: Redis;
  clock: Clock;
  metrics: Metrics;
  rollouts: RolloutStore;
  store: CollectorStore;
  queue: UpgradeQueue;
  http?: RunningHttpServer;
  loop?: SchedulerLoop;
  /** Closes everything in reverse order, each step bounded; false when a step failed or timed out. */
  stop(): Promise<boolean>;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, logger, role } = options;
  if (!config.api) throw new Error('the API settings are required to start workers');
  const cleanups: (() => Promise<unknown>)[] = [];
  // Each step gets a few seconds: with Redis gone, closing a queue or a worker would wait forever.
  // The first step pushed (Redis, and a private redis-server) is closed last.
  const stop = async () => {
    let clean = true;
    for (const c of cleanups.reverse()) {
      const step = c().then(
        () => 'done' as const,
        (err: Error) => {
          logger.warn({ err: err.message }, 'shutdown step failed');
          return 'failed' as const;
        },
      );
      const ended = await withTimeout(step, SHUTDOWN_STEP_MS, () => 'timeout' as const);
      if (ended === 'timeout') logger.warn('shutdown step timed out');
      if (ended !== 'done') clean = false;
    }
    return clean;
  };
  try {
    const conn = await connectRedis(config, logger, role);
    cleanups.push(() => conn.close());
    const state = createState(conn.redis, config.keyPrefix, logger);
    const { keys, redis, store, rollouts } = state;
    const clock = await openSharedClock(redis, keys.clock, config.timeScale);
    const metrics = createMetrics({ role });
    const policies = options.policies ?? (() => []);
    const api = createApi({
      api: config.api,
      config,
      redis,
      keys,
      policies: policies(),
      clock,
      logger,
      hooks: metrics.apiHooks,
      watchTimeScale: true,
    });
    cleanups.push(() => api.client.close());
    metrics.setApiBudget(api.perSecond * config.timeScale, api.concurrent);
    metrics.watchRedis(async () => (await pingWithin(redis, 1000)) === undefined);
    const queue = createUpgradeQueue(conn.bullConnection, keys.bullPrefix);
    // Without a listener BullMQ prints a queue's connection errors raw to stderr.
    queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'queue error'));
    cleanups.push(() => queue.close());

    const events: UpgradeEvents = {
      onTaskCreated: (rollout) => metrics.tasksCreated.labels(rollout).inc(),
      onRetry: (reason) => metrics.retries.labels(reason).inc(),
      onOutcome: (rollout, record) => metrics.results.labels(rollout, record.state).inc(),
      onTaskEnded: (state, durationMs) => metrics.upgradeDuration.labels(state).observe(durationMs / 1000),
    };
    const worker: Worker = startUpgradeWorker({
      connection: conn.bullConnection,
      prefix: keys.bullPrefix,
      concurrency: config.workerConcurrency,
      timeScale: config.timeScale,
      stalledIntervalMs: config.stalledIntervalMs,
      deps: { api: api.client, store, clock, logger, events },
    });
    cleanups.push(() => worker.close());
    const processId = `${role}:${process.pid}`;
    await redis.hset(
      keys.processes,
      processId,
      JSON.stringify({ role, pid: process.pid, since: Date.now() }),
    );
    cleanups.push(() => redis.hdel(keys.processes, processId));

    const daemon: Daemon = { keys, redis, clock, metrics, rollouts, store, queue, stop };
    let status: (() => Promise<unknown>) | undefined;
    let rolloutApi: RolloutApi | undefined;
    if (role === 'run') {
      // Before the scheduler can record an event: from here on every webhook's consumer group exists.
      const notifier = await startNotifier({
        redis,
        keys,
        webhooks: config.webhooks,
        logger,
        metrics,
        claimIdleMs: config.stalledIntervalMs,
      });
      cleanups.push(() => notifier.stop());
      const scheduler = new Scheduler({
        api: api.client,
        redis,
        keys,
        store,
        rollouts,
        events: state.events,
        queue,
        clock,
        logger,
        scanIntervalMs: config.scanIntervalMs,
        retentionMs: config.retentionMs,
        onOutcome: (rollout, record) => metrics.results.labels(rollout, record.state).inc(),
        onTaskEnded: (state, durationMs) => metrics.upgradeDuration.labels(state).observe(durationMs / 1000),
      });
      const lock = new LeaderLock(redis, keys.leader, Math.max(2_000, config.tickMs * 5));
      const loop = startSchedulerLoop({ scheduler, lock, policies, intervalMs: config.tickMs, logger });
      cleanups.push(() => loop.stop());
      daemon.loop = loop;
      // A Collector that gives its slot back is published (lua/apply-moves.lua): admit at once.
      const subscriber = createRedis(conn.url, { logger, name: `${role}-events` });
      cleanups.push(() => closeRedis(subscriber));
      await subscriber.subscribe(keys.slotFreedChannel);
      subscriber.on('message', () => loop.kick());
      const snapshot = () => readFleetStatus({ redis, keys, rollouts, queue });
      metrics.exportFleet(snapshot);
      status = snapshot;
      rolloutApi = createRolloutApi({
        deps: { rollouts, store, events: state.events, clock, keys },
        redis,
        token: config.controlToken,
        authReads: config.authReads,
        logger,
      });
    }
    const http = await startHttpServer({
      host: config.listen.host,
      port: config.listen.port,
      registry: metrics.registry,
      logger,
      status,
      api: rolloutApi,
      readiness: readinessChecks(redis, api.client, options.policyProblems),
    });
    daemon.http = http;
    cleanups.push(() => http.close());
    const access = rolloutApi && {
      control: config.controlToken ? 'bearer token' : 'loopback callers only (no token configured)',
      authReads: config.authReads,
    };
    logger.info({ url: http.url, role, ...access }, 'http listening');
    return daemon;
  } catch (err) {
    await stop();
    throw err;
  }
}

function readinessChecks(
  redis: Redis,
  client: { listTargets(): Promise<unknown> },
  policyProblems?: () => string | undefined,
): ReadinessCheck[] {
  let apiCheck: { at: number; problem: string | undefined } | undefined;
  const checks: ReadinessCheck[] = [
    {
      name: 'redis',
      check: async () =>
        (await pingWithin(redis, 1000)) === undefined ? undefined : 'Redis does not answer PING within 1 s',
    },
    {
      name: 'api',
      // Credentials are checked at most once a minute: the check spends API budget.
      check: async () => {
        if (apiCheck && Date.now() - apiCheck.at < 60_000) return apiCheck.problem;
        let problem: string | undefined;
        try {
          await client.listTargets();
        } catch (err) {
          problem = (err as Error).message;
        }
        apiCheck = { at: Date.now(), problem };
        return problem;
      },
    },
  ];
  if (policyProblems) checks.push({ name: 'policies', check: async () => policyProblems() });
  return checks;
}
