/**
 * A whole rollout under test: the real simulator over HTTP at an accelerated clock, the real
 * Redis of the run (with a key prefix of its own), a policy file, and the orchestrator either
 * in this process (`startRun`) or as child processes of the real CLI (`spawnCli`). Everything
 * is closed by `close()`; child processes are killed.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createState, type FleetState } from '../../src/cli/boot/create-state.js';
import { type DaemonConfig, rehearsalConfig } from '../../src/cli/boot/daemon-config.js';
import { type Daemon, startDaemon } from '../../src/cli/boot/start-daemon.js';
import { createLogger } from '../../src/lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../../src/lib/redis/create-redis.js';
import type { RedisTarget } from '../../src/lib/redis/redis-target.js';
import { loadPolicies } from '../../src/policy/load/load-policies.js';
import type { CollectorRecord } from '../../src/rollout/collector/index.js';
import type { Keys } from '../../src/rollout/index.js';
import { type FleetStatus, readFleetStatus } from '../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../src/simulator/schema.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/start-simulator.js';
import { spawnCliChild } from './cli-child.js';
import { deleteKeys, testRedisUrl } from './redis.js';
import { startSeparateSimulator } from './separate-simulator.js';

export { CLI } from './cli-child.js';

export interface SimCollectorView {
  id: number;
  type: string;
  version: string;
  alive: boolean;
  osName: string;
  osArch: string;
  /** Heartbeating now; `stoppedAt` set while it is stopped. */
  running: boolean;
  stoppedAt: number | null;
  stops: { at: number; afterTask: number | null; restartedAt: number | null }[];
  /** Collecting: no break of a build unresolved (health events, the simulator's truth). */
  collecting: boolean;
  health: {
    breakDueAt: number | null;
    events: {
      trackerId: string;
      severity: string;
      cause: 'noise' | 'break';
      build: string;
      eventTime: number;
      resolvedAt: number | null;
    }[];
  };
  tasks: {
    id: number;
    toVersion: string;
    status: number;
    result: string | null;
    message: string;
    fromVersion: string;
    cause: string | null;
    finishTime: number | null;
  }[];
}

export interface SimStats {
  tasksCreated: number;
  maxConcurrentTasks: number;
  unfinishedTasks: number;
  rateLimited: number;
  requests: { total: number; byEndpoint: Record<string, number> };
  tasksByOutcome: { succeeded: number; failed: number; timedOut: number };
}

export interface HarnessOptions {
  fleet: FleetFileInput;
  /** The policy as YAML would hold it (durations as text, in simulated time). */
  policy: Record<string, unknown>;
  timeScale: number;
  tickMs?: number;
  /** Redis of this rollout (default: the test run's). */
  redisUrl?: string;
  /**
   * Or a replicated Redis (test/support/redis-topology.ts): its target, and the environment that
   * names it to a CLI process (REDIS_SENTINELS ..., REDIS_PASSWORD_FILE).
   */
  redis?: { target: RedisTarget; env: Record<string, string> };
  /** More environment for the CLI processes (e.g. FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE). */
  env?: Record<string, string>;
  /**
   * The simulator in a process of its own (separate-simulator.ts), for a test that asserts what
   * the service's one-second window sees: in this process its requests' arrivals wait on the
   * event loop that `run` and the test runner keep busy, and a stall of 10 ms is 150 ms of service
   * time at ×15, enough to squeeze five requests the budget spaced into one window. `sim` then has
   * its addresses and `close` only (its model, clock and organizations are in the other process).
   */
  separateSimulator?: boolean;
}

export interface Harness {
  sim: RunningSimulator;
  keys: Keys;
  redis: Redis;
  policyFile: string;
  /** Environment of a child process of the CLI for this rollout. */
  env: NodeJS.ProcessEnv;
  /** The orchestrator (`run`) in this process. */
  startRun(overrides?: Partial<DaemonConfig>): Promise<Daemon>;
  /** `fleet-upgrade <args>` as a child process; its output is kept in `output()`. */
  spawnCli(args: string[]): ChildProcess & { output(): string };
  status(): Promise<FleetStatus>;
  /** The records of the newest rollout (or of `rolloutId`), by id. */
  records(rolloutId?: string): Promise<CollectorRecord[]>;
  /** The orchestrator's state in Redis, as the commands open it. */
  state: FleetState;
  /** Polls (bounded) until `done(status)`; throws with the last status after `timeoutMs` real ms. */
  waitFor(done: (s: FleetStatus) => boolean, timeoutMs: number): Promise<FleetStatus>;
  simCollectors(): Promise<SimCollectorView[]>;
  simStats(): Promise<SimStats>;
  close(): Promise<void>;
}

/** The simulator of a harness: in this process, or in its own (`separateSimulator`). */
async function startHarnessSimulator(options: HarnessOptions): Promise<RunningSimulator> {
  if (!options.separateSimulator)
    return startSimulator({ fleet: options.fleet, timeScale: options.timeScale });
  const s = await startSeparateSimulator(options.fleet, options.timeScale);
  const elsewhere = (what: string): never => {
    throw new Error(`the simulator's ${what} is in its own process (separateSimulator)`);
  };
  return {
    url: s.url,
    baseUrl: s.baseUrl,
    port: Number(new URL(s.url).port),
    get clock() {
      return elsewhere('clock');
    },
    get model() {
      return elsewhere('model');
    },
    get orgs() {
      return elsewhere('organizations');
    },
    close: s.close,
  };
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const sim = await startHarnessSimulator(options);
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const redisUrl = options.redis ? undefined : (options.redisUrl ?? testRedisUrl());
  const target: RedisTarget = options.redis?.target ?? { kind: 'standalone', url: redisUrl as string };
  const redis = createRedis(target, { name: 'harness' });
  const state = createState(redis, prefix);
  const keys = state.keys;
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-rollout-'));
  const policyFile = join(dir, `${String(options.policy.name)}.yaml`);
  writeFileSync(policyFile, stringify(options.policy));
  const user = (options.fleet.users ?? [{ accessId: 'demo', accessKey: 'demo-secret' }])[0] as {
    accessId: string;
    accessKey: string;
  };
  const tickMs = options.tickMs ?? 100;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...(redisUrl ? { REDIS_URL: redisUrl } : {}),
    ...options.redis?.env,
    FLEET_UPGRADE_KEY_PREFIX: prefix,
    FLEET_UPGRADE_TICK: `${tickMs}ms`,
    FLEET_UPGRADE_STALLED_INTERVAL: '1s',
    FLEET_UPGRADE_TIME_SCALE: String(options.timeScale),
    FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
    SUMOLOGIC_BASE_URL: sim.baseUrl,
    SUMOLOGIC_ACCESSID: user.accessId,
    SUMOLOGIC_ACCESSKEY: user.accessKey,
    LOG_LEVEL: 'warn',
    ...options.env,
  };
  const daemons: Daemon[] = [];
  const children: ChildProcess[] = [];
  const simGet = async <T>(path: string): Promise<T> =>
    (await (await fetch(`${sim.url}${path}`)).json()) as T;

  const harness: Harness = {
    sim,
    keys,
    redis,
    policyFile,
    env,
    state,
    async startRun(overrides = {}) {
      const config: DaemonConfig = rehearsalConfig({
        ...(redisUrl ? { redisUrl } : { redis: target }),
        keyPrefix: prefix,
        dataDir: join(dir, 'data'),
        timeScale: options.timeScale,
        policyDir: dir,
        policyFiles: [policyFile],
        tickMs,
        stalledIntervalMs: 1000,
        api: { baseUrl: sim.baseUrl, accessId: user.accessId, accessKey: user.accessKey },
        ...overrides,
      });
      // The policy of the harness, or the files `overrides.policyFiles` names (rings: several).
      const policies = loadPolicies({ files: config.policyFiles ?? [policyFile] }).map((l) => l.policy);
      const daemon = await startDaemon({
        config,
        role: 'run',
        logger: createLogger({ level: 'warn', name: 'test-run' }),
        policies: () => policies,
      });
      daemons.push(daemon);
      return daemon;
    },
    spawnCli: (args) => spawnCliChild(args, env, children),
    status: () => readFleetStatus(state),
    async records(rolloutId) {
      const id = rolloutId ?? (await state.rollouts.list())[0]?.id;
      if (!id) return [];
      const out: CollectorRecord[] = [];
      for await (const r of state.store.all(id)) out.push(r);
      return out.sort((a, b) => a.id - b.id);
    },
    async waitFor(done, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let last: FleetStatus | undefined;
      while (Date.now() < deadline) {
        // Redis failing over answers nothing for a moment: look again.
        const now = await readFleetStatus(state).catch((e) => {
          if (process.env.DEBUG_HARNESS) console.error('status failed', e);
          return undefined;
        });
        if (now) last = now;
        if (now && done(now)) return now;
        await new Promise((r) => setTimeout(r, 100));
      }
      throw new Error(
        `not reached within ${timeoutMs} ms; last status: ${JSON.stringify(last?.rollouts.map((r) => ({ id: r.id, phase: r.phase, counts: r.counts })))}`,
      );
    },
    simCollectors: async () =>
      (await simGet<{ collectors: SimCollectorView[] }>('/_sim/collectors')).collectors,
    simStats: () => simGet<SimStats>('/_sim/stats'),
    async close() {
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
      for (const d of daemons) await d.stop();
      await sim.close();
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}

/** Why what we recorded is not what the simulator knows happened (undefined when it is). */
export function agreesWithSimulator(r: CollectorRecord, c: SimCollectorView | undefined): string | undefined {
  if (!c) return 'unknown to the simulator';
  const last = c.tasks[c.tasks.length - 1];
  switch (r.state) {
    case 'succeeded':
      return c.version === r.to && last?.result === 'succeeded'
        ? undefined
        : `simulator: ${c.version}, ${last?.result}`;
    case 'failed':
    case 'manual':
      return last?.result === 'failed' && last.message === r.message
        ? undefined
        : `simulator: ${last?.result} ${last?.message}`;
    case 'unhealthy':
      // A health event: the task succeeded, and the build broke its collection after it.
      if (r.failureClass?.startsWith('health:'))
        return last?.result === 'succeeded' &&
          last.toVersion === r.to &&
          c.health.events.some(
            (e) => e.cause === 'break' && e.build === r.to && e.eventTime > (last.finishTime ?? 0),
          )
          ? undefined
          : `simulator: ${last?.result}, health ${JSON.stringify(c.health.events)}`;
      // The task succeeded, and the Collector stopped heartbeating after it.
      return c.version === r.to &&
        last?.result === 'succeeded' &&
        c.stops.some((s) => s.afterTask === last.id)
        ? undefined
        : `simulator: ${c.version}, ${last?.result}, stops ${JSON.stringify(c.stops)}`;
    case 'quarantined':
      return c.tasks.length === 0 ? undefined : `simulator: ${c.tasks.length} tasks`;
    case 'timed_out':
      return last?.result === 'timedOut' ? undefined : `simulator: ${last?.result}`;
    case 'not_alive':
      return c.tasks.length === 0 && !c.alive
        ? undefined
        : `simulator: ${c.tasks.length} tasks, alive ${c.alive}`;
    default:
      return `not final: ${r.state}`;
  }
}

/** The one rollout of a harness has converged (or halted with nothing under way). */
export function converged(s: FleetStatus): boolean {
  const r = s.rollouts[0];
  return r !== undefined && r.phase === 'converged';
}

/** Waits (bounded) for a child process to exit; returns its exit code. */
export function exitOf(child: ChildProcess, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    // Exited already: by itself (exitCode) or by a signal (signalCode, exitCode stays null).
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
    const timer = setTimeout(
      () => reject(new Error(`process did not exit within ${timeoutMs} ms`)),
      timeoutMs,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}
