/**
 * fleet-upgrade itself, in this process, through its public entry points (startDaemon with
 * rehearsalConfig, watchRollouts), with one policy: target latest, maxInFlight = the limit, the
 * defaults otherwise. Waits until the rollout has finished (converged, or halted with nothing
 * under way), then reads the daemon's records to learn when it noticed each task's end.
 *
 * Clocks: the daemon's clock and the simulator's are both scaled from the wall clock but from
 * different origins, so they differ by a constant. The offset is read by sampling both `now`s
 * back to back (median of several samples); a time on the daemon's clock + offset is a time on
 * the simulator's.
 */
import { randomBytes } from 'node:crypto';
import { rehearsalConfig } from '../../src/cli/boot/daemon-config.js';
import { startDaemon } from '../../src/cli/boot/start-daemon.js';
import { watchRollouts } from '../../src/cli/boot/watch-rollouts.js';
import type { Clock } from '../../src/lib/clock.js';
import type { Logger } from '../../src/lib/logger.js';
import { Policy } from '../../src/policy/schema.js';
import type { CollectorRecord } from '../../src/rollout/index.js';
import { redisFootprint } from './redis-footprint.js';
import type { TaskTimings } from './slot-time.js';

export interface FleetUpgradeRunOptions {
  redisUrl: string;
  dataDir: string;
  baseUrl: string;
  accessId: string;
  accessKey: string;
  simClock: Clock;
  timeScale: number;
  inFlight: number;
  logger: Logger;
  /** Gives up after this many real ms (the rollout is then reported as unfinished). */
  maxRealMs: number;
  /** More of the policy (as YAML would hold it), e.g. `{ verify: false }`. */
  policy?: Record<string, unknown>;
  /** Real ms between two scheduler rounds at the most (default: the rehearsal's). */
  tickMs?: number;
}

export interface FleetUpgradeRun {
  rolloutId: string | undefined;
  finished: boolean;
  phase: string | undefined;
  counts: Record<string, number>;
  /** Task id → the simulator-clock time at which the daemon recorded the task's end. */
  noticed: Map<string, number>;
  /** Task id → what the daemon recorded of it (noticed, admitted, taken up), on the simulator's clock. */
  timings: Map<string, TaskTimings>;
  clockOffsetMs: number;
  realMs: number;
  /** Redis bytes (MEMORY USAGE) of the deployment's keys once the rollout has finished, per Collector recorded. */
  redisBytesPerCollector: number | undefined;
  /** The same by kind of key (records, indexes, history, ...), bytes per Collector. */
  redisBytesPerCollectorByGroup: Record<string, number>;
}

/** The daemon's time at which it learned that this record's task (or an earlier attempt) ended. */
function noticedTimes(r: CollectorRecord): [string, number][] {
  const out: [string, number][] = [];
  // The current task: a success was noticed when a status read said so (succeededAt, set when
  // verification begins), whatever verification took after; a failure when it was recorded.
  if (r.taskId !== undefined) {
    const at = r.succeededAt ?? r.finishedAt;
    if (at !== undefined) out.push([String(r.taskId), at]);
  }
  // Earlier tasks (retried failures): when their attempt ended.
  for (const a of r.attemptLog ?? [])
    if (a.taskId !== undefined && a.endedAt !== undefined && String(a.taskId) !== String(r.taskId))
      out.push([String(a.taskId), a.endedAt]);
  return out;
}

export function clockOffset(sim: Clock, daemon: Clock): number {
  const samples: number[] = [];
  for (let i = 0; i < 9; i++) samples.push(sim.now() - daemon.now());
  samples.sort((a, b) => a - b);
  return samples[4] as number;
}

export async function runFleetUpgrade(o: FleetUpgradeRunOptions): Promise<FleetUpgradeRun> {
  const policy = Policy.parse({ name: 'bench', target: 'latest', maxInFlight: o.inFlight, ...o.policy });
  const keyPrefix = `bench-${randomBytes(4).toString('hex')}:`;
  const started = Date.now();
  const daemon = await startDaemon({
    role: 'run',
    logger: o.logger,
    policies: () => [policy],
    config: rehearsalConfig({
      redisUrl: o.redisUrl,
      keyPrefix,
      dataDir: o.dataDir,
      timeScale: o.timeScale,
      logLevel: 'error',
      ...(o.tickMs === undefined ? {} : { tickMs: o.tickMs }),
      api: { baseUrl: o.baseUrl, accessId: o.accessId, accessKey: o.accessKey },
    }),
  });
  try {
    const clockOffsetMs = clockOffset(o.simClock, daemon.clock);
    const done = await watchRollouts({
      daemon,
      policies: () => [policy],
      intervalMs: 500,
      stopped: () => Date.now() - started > o.maxRealMs,
    });
    const realMs = Date.now() - started;
    const rolloutId = (await daemon.rollouts.currentIds()).get(policy.name);
    const noticed = new Map<string, number>();
    const timings = new Map<string, TaskTimings>();
    const counts: Record<string, number> = {};
    const sim = (at: number | undefined) => (at === undefined ? undefined : at + clockOffsetMs);
    if (rolloutId) {
      for await (const r of daemon.store.all(rolloutId)) {
        counts[r.state] = (counts[r.state] ?? 0) + 1;
        for (const [task, at] of noticedTimes(r))
          if (!noticed.has(task)) noticed.set(task, at + clockOffsetMs);
        // The current attempt's admission and pick-up (earlier attempts keep no such times).
        if (r.taskId !== undefined) {
          const t: TaskTimings = {};
          const admittedAt = sim(r.admittedAt);
          const pickedAt = sim(r.pickedAt);
          if (admittedAt !== undefined) t.admittedAt = admittedAt;
          if (pickedAt !== undefined) t.pickedAt = pickedAt;
          timings.set(String(r.taskId), t);
        }
      }
      for (const [task, at] of noticed) timings.set(task, { ...timings.get(task), noticedAt: at });
    }
    const status = done?.find((r) => r.id === rolloutId);
    const recorded = Object.values(counts).reduce((a, b) => a + b, 0);
    const footprint = await redisFootprint(daemon.redis, keyPrefix);
    return {
      rolloutId,
      finished: done !== undefined,
      phase: status?.phase,
      counts,
      noticed,
      timings,
      clockOffsetMs,
      realMs,
      redisBytesPerCollector: recorded ? Math.round(footprint.bytes / recorded) : undefined,
      redisBytesPerCollectorByGroup: Object.fromEntries(
        Object.entries(footprint.byGroup).map(([g, v]) => [g, recorded ? Math.round(v.bytes / recorded) : 0]),
      ),
    };
  } finally {
    await daemon.stop();
  }
}
