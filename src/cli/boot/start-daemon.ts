/**
 * The composition root of `run` and `worker`: it only wires pieces that small functions build
 * (connect-redis.ts, create-state.ts, create-api.ts, the shared clock, the queue, the worker, the
 * scheduler loop, the HTTP endpoints) and `stop()` closes them in reverse order, each within a
 * few seconds (create-shutdown.ts).
 */
import { readFileSync } from 'node:fs';
import type { Worker } from 'bullmq';
import { createRolloutApi, type RolloutApi } from '../../http/create-rollout-api.js';
import { createAccess, DISK_TOKEN_FILES } from '../../http/read-access.js';
import { type RunningHttpServer, startHttpServer } from '../../http/start-http-server.js';
import type { InventoryLoop } from '../../inventory/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../../lib/redis/create-redis.js';
import { pingWithin } from '../../lib/redis/ping-within.js';
import { startReplicaWait } from '../../lib/redis/replica-wait.js';
import { alignSharedClock, openSharedClock } from '../../lib/shared-clock.js';
import { withTimeout } from '../../lib/with-timeout.js';
import { createMetrics, type Metrics } from '../../metrics/create-metrics.js';
import { startNotifier } from '../../notify/start-notifier.js';
import type { PolicyFileStatus } from '../../policy/load/policy-store.js';
import type { Policy } from '../../policy/schema.js';
import { createUpgradeQueue, type UpgradeQueue } from '../../queue/upgrade-job.js';
import type { CollectorStore, Keys, RolloutStore } from '../../rollout/index.js';
import {
  AuditLog,
  LeaderLock,
  OrgHealth,
  orgsOf,
  PROBLEM_TTL_MS,
  readFleetStatus,
  Scheduler,
  type SchedulerLoop,
  startSchedulerLoop,
} from '../../rollout/index.js';
import { startUpgradeWorker } from '../../worker/start-upgrade-worker.js';
import { connectRedis } from './connect-redis.js';
import { createOrgApis } from './create-api.js';
import { createShutdown } from './create-shutdown.js';
import { createState } from './create-state.js';
import type { DaemonConfig } from './daemon-config.js';
import { metricEvents } from './metric-events.js';
import { syncPolicyFileProblems } from './policy-file-problems.js';
import { readinessChecks, targetReadiness } from './readiness-checks.js';
import { registerProcess } from './register-process.js';
import { type ProblemReporter, startProblemReporter } from './report-problems.js';
import { startFleetInventory } from './start-fleet-inventory.js';
import { timeScaleProblem } from './watch-time-scale.js';

export interface DaemonOptions {
  config: DaemonConfig;
  role: 'run' | 'worker';
  logger: Logger;
  /** `run`: the policies in force, read at every scheduler round. */
  policies?: () => readonly Policy[];
  /** `run`: policy files' state, for /readyz. */
  policyProblems?: () => string | undefined;
  /** `run`: every policy file with its state: an invalid one is a problem `status` shows. */
  policyStatus?: () => readonly PolicyFileStatus[];
}

export interface Daemon {
  keys: Keys;
  /** The audit trail (rollout/life/audit-log.ts) with the settings' bounds. */
  audit: AuditLog;
  redis: Redis;
  clock: Clock;
  metrics: Metrics;
  rollouts: RolloutStore;
  store: CollectorStore;
  queue: UpgradeQueue;
  http?: RunningHttpServer;
  loop?: SchedulerLoop;
  /** `run`: the inventory of the whole fleet (start-fleet-inventory.ts), unless turned off. */
  inventory?: InventoryLoop;
  /** This process's problems, written to Redis for `status` (report-problems.ts). */
  problems: ProblemReporter;
  /** Closes everything in reverse order, each step bounded; false when a step failed or timed out. */
  stop(): Promise<boolean>;
}

export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const { config, logger, role } = options;
  if (config.orgs.length === 0) throw new Error('the API settings are required to start workers');
  const shutdown = createShutdown(logger);
  const stop = shutdown.stop;
  try {
    const conn = await connectRedis(config, logger, role);
    shutdown.add(() => conn.close());
    const metrics = createMetrics({ role });
    // What this process's workers and scheduler count (the outcomes are Redis's tally: exportOutcomes).
    const counted = metricEvents(metrics);
    const state = createState(conn.redis, config.keyPrefix, logger);
    const { keys, redis, store, rollouts } = state;
    const clock = await openSharedClock(redis, keys.clock, config.timeScale);
    let aligned = false;
    const policies = options.policies ?? (() => []);
    // This process's problems, in Redis with an expiry; the scheduler's only while it leads.
    let leads = () => false;
    const policyStatus = options.policyStatus;
    const problems = startProblemReporter({
      redis,
      keys,
      role,
      logger,
      include: (id) => !id.startsWith('target:') || leads(),
      ...(policyStatus
        ? { refresh: () => syncPolicyFileProblems(problems.book, policyStatus(), clock.now()) }
        : {}),
    });
    shutdown.add(() => problems.stop());
    const apis = createOrgApis(config.orgs, {
      config,
      redis,
      keys,
      policies: policies(),
      clock,
      logger,
      hooks: (org) => metrics.apiHooksOf(org),
      watchTimeScale: {
        onChange: (told) =>
          told === undefined
            ? problems.book.clear('time-scale')
            : problems.book.set('time-scale', timeScaleProblem(config.timeScale, told, clock.now())),
        // One rehearsal, one clock: the first answer that tells the simulator's now sets ours.
        onNow: (simNow, wallAt) => {
          if (aligned) return;
          aligned = true;
          alignSharedClock(redis, keys.clock, clock, simNow, wallAt).then(
            (moved) => {
              if (moved !== 0) logger.info({ movedMs: moved }, "clock set by the simulator's");
            },
            (err: Error) => logger.warn({ err: err.message }, "could not set the clock by the simulator's"),
          );
        },
      },
    });
    shutdown.add(() => apis.close());
    const first = apis.get(apis.names[0] as string);
    // A rehearsal: ask the service once before anything is stamped, so that this process (a
    // `worker` started before `run` too) is on the simulator's clock from its first step. A
    // service that does not answer yet is set by later at its first answer (onNow).
    if (config.timeScale > 1)
      await withTimeout(
        first.client.listTargets().catch(() => undefined),
        5000,
        () => undefined,
      );
    metrics.setApiBudget(first.perSecond * config.timeScale, first.concurrent);
    const health = new OrgHealth(redis, keys, PROBLEM_TTL_MS);
    metrics.watchRedis(async () => (await pingWithin(redis, 1000)) === undefined);
    const queue = createUpgradeQueue(conn.bullConnection, keys.bullPrefix);
    // Without a listener BullMQ prints a queue's connection errors raw to stderr.
    queue.on('error', (err: Error) => logger.warn({ err: err.message }, 'queue error'));
    shutdown.add(() => queue.close());

    // The worker's steps write on a connection of their own: a create's pre-write is confirmed
    // by WAIT on the connection that carried it, and a WAIT held up by a lagging replica then
    // holds up only these steps, not the scheduler, the budget or the leader's lock.
    const stepRedis = createRedis(conn.target, { logger, name: `${role}-steps` });
    shutdown.add(() => closeRedis(stepRedis));
    await pingWithin(stepRedis, 5000);
    const steps = createState(stepRedis, config.keyPrefix, logger);
    const replicaWait = await startReplicaWait({
      redis: stepRedis,
      key: keys.clock,
      flagKey: keys.replicated,
      topology: conn.target.kind,
      minReplicas: config.minReplicasForCreate,
      ...(config.replicaWaitMs === undefined ? {} : { timeoutMs: config.replicaWaitMs }),
      logger,
    });
    shutdown.add(async () => replicaWait.close());
    const worker: Worker = startUpgradeWorker({
      connection: conn.bullConnection,
      prefix: keys.bullPrefix,
      concurrency: config.workerConcurrency,
      timeScale: config.timeScale,
      stalledIntervalMs: config.stalledIntervalMs,
      deps: {
        api: first.client,
        apis: (org) => apis.get(org).client,
        health,
        store: steps.store,
        rollouts: steps.rollouts,
        clock,
        logger,
        events: counted,
        replicaWait,
        ...(config.confirmTaskIds === false ? { confirmTaskIds: false } : {}),
      },
    });
    shutdown.add(() => worker.close());
    shutdown.add(await registerProcess(redis, keys, role));

    const audit = new AuditLog(redis, keys, config.audit);
    const daemon: Daemon = { keys, audit, redis, clock, metrics, rollouts, store, queue, problems, stop };
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
        orgsOf: async (id) => {
          const rollout = await rollouts.get(id);
          return rollout ? orgsOf(rollout) : undefined;
        },
      });
      shutdown.add(() => notifier.stop());
      const scheduler = new Scheduler({
        apis: { names: apis.names, get: (org) => apis.get(org) },
        redis,
        keys,
        store,
        rollouts,
        queue,
        clock,
        logger,
        scanIntervalMs: config.scanIntervalMs,
        retentionMs: config.retentionMs,
        onTaskEnded: counted.onTaskEnded,
        problems: problems.book,
        apiRatePerSecond: first.perSecond,
      });
      const lock = new LeaderLock(redis, keys.leader, Math.max(2_000, config.tickMs * 5));
      const loop = startSchedulerLoop({
        scheduler,
        lock,
        policies,
        intervalMs: config.tickMs,
        logger,
        // The scheduler's due times are clock time; a rehearsal's clock runs timeScale times faster.
        dueInMs: () => {
          const due = scheduler.dueInMs();
          return due === undefined ? undefined : due / config.timeScale;
        },
      });
      shutdown.add(() => loop.stop());
      daemon.loop = loop;
      leads = () => loop.isLeader;
      // A Collector that gives its slot back is published (lua/apply-moves-15.lua): admit at once.
      const subscriber = createRedis(conn.target, { logger, name: `${role}-events` });
      shutdown.add(() => closeRedis(subscriber));
      await subscriber.subscribe(keys.slotFreedChannel);
      subscriber.on('message', () => loop.kick());
      const snapshot = () => readFleetStatus({ redis, keys, rollouts, queue });
      metrics.exportFleet(snapshot);
      // The outcomes' tally (kept in Redis by the store's writes): the leader alone exports it.
      metrics.exportOutcomes(async () => (loop.isLeader ? state.store.outcomeTallies() : new Map()));
      status = snapshot;
      const inventory = startFleetInventory({
        config,
        redis,
        keys,
        clock,
        logger,
        metrics,
        orgs: apis.names,
        client: (org) => apis.get(org).client,
        rollouts,
        policies,
      });
      if (inventory) {
        shutdown.add(() => inventory.stop());
        daemon.inventory = inventory;
      }
      rolloutApi = createRolloutApi({
        // `forget` is refused while a policy in force still selects the rollout's build.
        deps: {
          rollouts,
          store,
          events: state.events,
          clock,
          keys,
          ...(options.policies ? { policies: options.policies } : {}),
        },
        redis,
        token: config.controlToken,
        authReads: config.authReads,
        // `access:`: named people; their token files are read again when they change.
        ...(config.access
          ? {
              access: createAccess(
                config.access,
                DISK_TOKEN_FILES((p) => readFileSync(p, 'utf8')),
                logger,
              ),
            }
          : {}),
        audit,
        logger,
        // POST /upgrades asks each organization's service through the daemon's own client.
        oneOffs: { orgs: apis.names, client: (org) => apis.get(org).client },
      });
    }
    const http = await startHttpServer({
      host: config.listen.host,
      port: config.listen.port,
      registry: metrics.registry,
      logger,
      status,
      ...(status ? { clock } : {}),
      api: rolloutApi,
      readiness: readinessChecks(
        redis,
        new Map(apis.names.map((org) => [org, apis.get(org).client])),
        options.policyProblems,
        role === 'run' ? targetReadiness(redis, keys) : undefined,
      ),
    });
    daemon.http = http;
    shutdown.add(() => http.close());
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
