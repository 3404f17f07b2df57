/**
 * Assembles a fleet-upgrade process from its settings: Redis (the configured one, or a private
 * redis-server with append-only persistence), the API client with the budget shared in Redis,
 * the BullMQ queue and workers, and for `run` also the scheduler loop and the HTTP endpoints.
 * Everything is passed in explicitly; `stop()` closes it all in order.
 */

import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from 'bullmq';
import { createCollectorUpgradeClient, createRedisRequestBudget } from '../api/index.js';
import { type ReadinessCheck, type RunningHttpServer, startHttpServer } from '../http/start-http-server.js';
import { type Clock, createScaledClock, systemClock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../lib/redis.js';
import { ensureRedis } from '../lib/redis-server.js';
import { withTimeout } from '../lib/with-timeout.js';
import { createMetrics, type Metrics } from '../metrics/create-metrics.js';
import type { Policy } from '../policy/schema.js';
import { InflightSlots } from '../rollout/inflight-slots.js';
import { createKeys, type Keys } from '../rollout/keys.js';
import { LeaderLock } from '../rollout/leader-lock.js';
import { readFleetStatus } from '../rollout/read-fleet-status.js';
import { ResultStore } from '../rollout/result-store.js';
import { RolloutStore } from '../rollout/rollout-store.js';
import { Scheduler } from '../rollout/scheduler.js';
import { type SchedulerLoop, startSchedulerLoop } from '../rollout/scheduler-loop.js';
import { startUpgradeWorker } from '../worker/start-upgrade-worker.js';
import type { UpgradeEvents } from '../worker/upgrade-processor.js';
import { createUpgradeQueue } from '../worker/upgrade-queue.js';
import type { DaemonConfig } from './daemon-config.js';
import { privateRedisUrlFile } from './open-state.js';

const SHUTDOWN_STEP_MS = 5000;

/** PING with a time limit: ioredis would otherwise queue the command until Redis is back. */
export function pingWithin(redis: Redis, ms: number): Promise<boolean> {
  const pong = redis.ping().then(
    (answer) => answer === 'PONG',
    () => false,
  );
  return withTimeout(pong, ms, () => false);
}

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
  results: ResultStore;
  slots: InflightSlots;
  http?: RunningHttpServer;
  loop?: SchedulerLoop;
  stop(): Promise<void>;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, logger } = options;
  const api = config.api;
  if (!api) throw new Error('the API settings are required to start workers');
  const cleanups: (() => Promise<unknown>)[] = [];
  // Each step gets a few seconds: with Redis gone, closing a queue or a worker would wait forever.
  const stop = async () => {
    for (const c of cleanups.reverse()) {
      const step = c().then(
        () => 'done',
        (err: Error) => logger.warn({ err: err.message }, 'shutdown step failed'),
      );
      if ((await withTimeout(step, SHUTDOWN_STEP_MS, () => 'timeout')) === 'timeout')
        logger.warn('shutdown step timed out');
    }
  };
  try {
    let redisUrl = config.redisUrl;
    if (!redisUrl) {
      const ensured = await ensureRedis({ logger, dataDir: join(config.dataDir, 'redis'), appendOnly: true });
      redisUrl = ensured.url;
      cleanups.push(() => ensured.stop());
      // `status` and `report` on this machine find the private Redis through this file.
      const urlFile = privateRedisUrlFile(config);
      mkdirSync(config.dataDir, { recursive: true });
      writeFileSync(urlFile, `${ensured.url}\n`);
      cleanups.push(async () => rmSync(urlFile, { force: true }));
      logger.info(
        { source: ensured.source, dataDir: join(config.dataDir, 'redis') },
        'REDIS_URL is not set: started a private Redis',
      );
    }
    const redis = createRedis(redisUrl, { logger, name: options.role });
    cleanups.push(() => closeRedis(redis));
    await redis.ping();
    const bullConnection = createRedis(redisUrl, { logger, name: `${options.role}-bullmq`, forBullmq: true });
    cleanups.push(() => closeRedis(bullConnection));

    const keys = createKeys(config.keyPrefix);
    const clock = config.timeScale === 1 ? systemClock : createScaledClock(config.timeScale);
    const metrics = createMetrics({ role: options.role });
    // The process's budget: its setting, lowered by the enabled policies' `api` (run only).
    const limits = (options.policies?.() ?? []).filter((p) => p.enabled).map((p) => p.api);
    const perSecond = Math.min(config.apiBudget.requestsPerSecond, ...limits.map((l) => l.requestsPerSecond));
    const concurrent = Math.min(config.apiBudget.maxConcurrent, ...limits.map((l) => l.maxConcurrent));
    const budget = createRedisRequestBudget({
      redis,
      accessId: api.accessId,
      keyPrefix: `${config.keyPrefix}{fleet-upgrade}:`,
      perSecond,
      concurrent,
      timeScale: config.timeScale,
      // At a high time scale a window is a few real ms: pad it more against scheduling lag.
      ...(config.timeScale > 1 ? { marginRatio: 0.15 } : {}),
    });
    metrics.setApiBudget(perSecond * config.timeScale, concurrent);
    metrics.watchRedis(() => pingWithin(redis, 1000));
    const client = createCollectorUpgradeClient({
      config: api,
      budget,
      clock,
      logger,
      hooks: metrics.apiHooks,
    });
    cleanups.push(() => client.close());
    const results = new ResultStore(redis, keys);
    const rollouts = new RolloutStore(redis, keys);
    const slots = new InflightSlots(redis, keys);
    const queue = createUpgradeQueue(bullConnection, keys.bullPrefix);
    // Without a listener BullMQ prints a queue's connection errors raw to stderr.
    queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'queue error'));
    cleanups.push(() => queue.close());

    // Workers tell the leader at once when a slot frees, so admission does not wait for a tick.
    const slotChannel = `${keys.rollouts}:slot-freed`;
    const events: UpgradeEvents = {
      onSlotFreed: (rollout) => {
        redis.publish(slotChannel, rollout).catch(() => undefined);
      },
      onTaskCreated: (rollout) => metrics.tasksCreated.labels(rollout).inc(),
      onRetry: (reason) => metrics.retries.labels(reason).inc(),
      onFinal: (rollout, record, durationMs) => {
        metrics.results.labels(rollout, record.state).inc();
        if (durationMs !== undefined) metrics.upgradeDuration.labels(record.state).observe(durationMs / 1000);
      },
    };
    const worker: Worker = startUpgradeWorker({
      connection: bullConnection,
      prefix: keys.bullPrefix,
      concurrency: config.workerConcurrency,
      timeScale: config.timeScale,
      stalledIntervalMs: config.stalledIntervalMs,
      deps: { api: client, results, rollouts, slots, clock, logger, events },
    });
    cleanups.push(() => worker.close());
    await redis.hset(
      keys.processes,
      `${options.role}:${process.pid}`,
      JSON.stringify({ role: options.role, pid: process.pid, since: Date.now() }),
    );
    cleanups.push(() => redis.hdel(keys.processes, `${options.role}:${process.pid}`));

    const daemon: Daemon = { keys, redis, clock, metrics, rollouts, results, slots, stop };
    let status: (() => Promise<unknown>) | undefined;
    if (options.role === 'run') {
      const policies = options.policies ?? (() => []);
      const scheduler = new Scheduler({
        api: client,
        redis,
        keys,
        results,
        rollouts,
        slots,
        queue,
        clock,
        logger,
        scanIntervalMs: config.scanIntervalMs,
        onFinal: (rollout, record) => metrics.results.labels(rollout, record.state).inc(),
      });
      const lock = new LeaderLock(redis, keys.leader, Math.max(2_000, config.tickMs * 5));
      const loop = startSchedulerLoop({ scheduler, lock, policies, intervalMs: config.tickMs, logger });
      cleanups.push(() => loop.stop());
      daemon.loop = loop;
      const subscriber = createRedis(redisUrl, { logger, name: `${options.role}-events` });
      cleanups.push(() => closeRedis(subscriber));
      await subscriber.subscribe(slotChannel);
      subscriber.on('message', () => loop.kick());
      const snapshot = () => readFleetStatus({ rollouts, results, slots, queue });
      metrics.exportFleet(snapshot);
      status = snapshot;
    }
    let apiCheck: { at: number; problem: string | undefined } | undefined;
    const readiness: ReadinessCheck[] = [
      {
        name: 'redis',
        check: async () =>
          (await pingWithin(redis, 1000)) ? undefined : 'Redis does not answer PING within 1 s',
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
    if (options.policyProblems)
      readiness.push({ name: 'policies', check: async () => options.policyProblems?.() });
    const http = await startHttpServer({
      host: config.listen.host,
      port: config.listen.port,
      registry: metrics.registry,
      logger,
      status,
      readiness,
    });
    daemon.http = http;
    cleanups.push(() => http.close());
    logger.info({ url: http.url, role: options.role }, 'http listening');
    return daemon;
  } catch (err) {
    await stop();
    throw err;
  }
}
