/**
 * A rollout through failovers of a real replicated Redis (redis-topology.ts), driven as in
 * production: the simulator over HTTP, `run` and one `worker` of the built CLI (each reaching
 * Redis through the sentinels or the Cluster's nodes, the password from a file), and the
 * operator commands (`status`, `pause`, `resume`, `report`) as separate processes.
 *
 * Sentinel: a primary and a replica, three sentinels. Once a quarter of the Collectors have an
 * outcome, replication is held back (the replica can no longer authenticate to its primary) for
 * `holdMs`, then the primary is SIGKILLed: the sentinels promote the replica, which lacks every
 * write of the hold. The killed one comes back as the new primary's replica. Later the new
 * primary is SIGKILLed too, and the first one promoted again. With WAIT (the default behind
 * Sentinel) no create goes out during the hold; with `minReplicasForCreate: 0` creates go out,
 * their pre-writes are lost with the primary, and the new primary sends some of them again.
 *
 * Cluster: three primaries with a replica each; the primary of the deployment's slot is
 * SIGKILLed mid-rollout, its replica takes over, and the killed node comes back as a replica.
 *
 * It returns what a test asserts and a benchmark prints: the judgement of every record against
 * the simulator (test/support/chaos/judge-outcomes.ts), the Collectors with a second task,
 * creates sent during the hold, how long each failover took, the operator commands' exit codes
 * and output, and per process whether it was still running and reconnected by itself.
 */
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import type { CollectorRecord } from '../../src/rollout/collector/index.js';
import { type Judgement, judgeOutcomes, type SimView } from './chaos/judge-outcomes.js';
import {
  type ClusterTopology,
  type SentinelTopology,
  startClusterTopology,
  startSentinelTopology,
} from './redis-topology.js';
import { rehearsalFleet } from './rehearsal-fleet.js';
import { CLI, converged, exitOf, type Harness, startHarness } from './rollout-harness.js';

export interface FailoverRolloutOptions {
  topology: 'sentinel' | 'cluster';
  collectors?: number;
  seed?: number;
  timeScale?: number;
  maxInFlight?: number;
  /** Sentinel: real ms replication is held back before the first kill (default 2500). */
  holdMs?: number;
  /** `FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE` of the processes; undefined: the default. */
  minReplicasForCreate?: number;
  /** Real ms the rollout may take to converge after the last failover (default 90 s). */
  convergeMs?: number;
  /** Sentinel: a password on every node (default true; false: none, as a new user sets up loopback Redis). */
  password?: boolean;
  /** Sentinel: the sentinels' failover-timeout (default 10000 ms). */
  failoverTimeoutMs?: number;
  /** `run --once` instead of `run`: it must end by itself, 0 or 2. */
  once?: boolean;
  /** `worker` processes beside `run` (default 1). */
  workers?: number;
  /** Sentinel: hold replication back before the first kill (default true; needs a password). */
  hold?: boolean;
  /** How a killed primary comes back: a replica from the start (default), or as it was configured (`plain`). */
  rejoin?: 'replica' | 'plain';
  /** The first kill once the service made this many tasks (default a quarter of the Collectors). */
  firstKillAt?: number;
  /**
   * Sentinel: faults besides the two failovers, from the start until the second one: `clientKills`
   * times `CLIENT KILL TYPE normal` on the primary, 1 to 3 s apart, and with `restart` one
   * restart of the primary in place (SHUTDOWN, started again) between the two failovers.
   */
  faults?: { clientKills: number; restart: boolean };
  /** The simulator's faults (rate limit, 5xx ratio ...). */
  simFaults?: NonNullable<ReturnType<typeof rehearsalFleet>['faults']>;
  /** The operator commands after the last failover (default true). */
  commands?: boolean;
  /** More environment for the processes. */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface ProcessReport {
  role: string;
  pid: number;
  /** Still running when the rollout converged (it never exited on Redis trouble). */
  running: boolean;
  /** How it ended, when it did (`run --once`: by itself once the rollout converged). */
  exitCode: number | null;
  /** Lines of its output that tell of an error nobody handled (guard-daemon.ts, or Node's own). */
  unhandled: string[];
  /** Lines `redis connection restored` in its log: it reconnected by itself. */
  restored: number;
  /** Tasks it created after the last failover. */
  createdAfterLastFailover: number;
  output: string;
}

export interface CommandRun {
  args: string[];
  code: number | null;
  output: string;
}

export interface FailoverRolloutResult {
  judgement: Judgement;
  records: CollectorRecord[];
  /** Tasks the simulator made while replication was held back (Sentinel; from 300 ms after the replica's link went down). */
  createdDuringHold: number;
  /** Creates the processes held back for want of a replica's acknowledgement (from their logs). */
  heldBack: number;
  failoverMs: number[];
  /**
   * Sentinel: failovers the sentinels made that the scenario did not ask for (on a busy machine
   * a primary sometimes misses the 1 s down-after, and the sentinels fail over once more).
   */
  unplannedFailovers: number;
  processes: ProcessReport[];
  commands: CommandRun[];
  /**
   * Actions sent again: their command had warned that a failover could undo them (no replica
   * acknowledged the write), and one did.
   */
  resent: CommandRun[];
  tasksCreated: number;
  maxConcurrentTasks: number;
  /** `CLIENT KILL TYPE normal` done, and connections they dropped; restarts of the primary in place. */
  faults: { clientKills: number; connectionsKilled: number; restarts: number };
  realMs: number;
  counts: Record<string, number>;
}

async function cli(harness: Harness, args: string[], limitMs = 30_000): Promise<CommandRun> {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: harness.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const code = await exitOf(child, limitMs);
  return { args, code, output };
}

function createdBy(records: readonly CollectorRecord[], pid: number): Set<number> {
  return new Set(records.filter((r) => r.createdBy?.endsWith(`:${pid}`)).map((r) => r.id));
}

export async function runFailoverRollout(options: FailoverRolloutOptions): Promise<FailoverRolloutResult> {
  const log = options.log ?? (() => {});
  const n = options.collectors ?? 150;
  const started = performance.now();
  const sentinel: SentinelTopology | undefined =
    options.topology === 'sentinel'
      ? await startSentinelTopology({
          ...(options.password === undefined ? {} : { password: options.password }),
          ...(options.failoverTimeoutMs === undefined
            ? {}
            : { failoverTimeoutMs: options.failoverTimeoutMs }),
        })
      : undefined;
  const cluster: ClusterTopology | undefined =
    options.topology === 'cluster' ? await startClusterTopology() : undefined;
  const topology = (sentinel ?? cluster) as SentinelTopology | ClusterTopology;
  log(`${options.topology} up after ${Math.round(performance.now() - started)} ms`);
  let harness: Harness | undefined;
  let procs: { role: string; child: ReturnType<Harness['spawnCli']> }[] = [];
  try {
    const fleet = rehearsalFleet(n, options.seed ?? 19);
    harness = await startHarness({
      fleet: options.simFaults ? { ...fleet, faults: options.simFaults } : fleet,
      timeScale: options.timeScale ?? 300,
      policy: {
        name: 'failover',
        maxInFlight: options.maxInFlight ?? 30,
        poll: { initial: '30s', max: '2m' },
      },
      redis: { target: topology.target(), env: topology.env() },
      env: {
        LOG_LEVEL: process.env.DEBUG_HARNESS ? 'debug' : 'info',
        ...(options.minReplicasForCreate === undefined
          ? {}
          : { FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE: String(options.minReplicasForCreate) }),
        ...options.env,
      },
    });
    const h = harness;
    procs = [
      {
        role: 'run',
        child: h.spawnCli([
          'run',
          ...(options.once ? ['--once'] : []),
          '--policy',
          h.policyFile,
          '--listen',
          '127.0.0.1:0',
        ]),
      },
      ...Array.from({ length: options.workers ?? 1 }, (_, i) => ({
        role: `worker${i + 1}`,
        child: h.spawnCli(['worker', '--listen', '127.0.0.1:0']),
      })),
    ];
    const faults = { clientKills: 0, connectionsKilled: 0, restarts: 0 };
    let faultsEnd = false;
    const faulting = (async () => {
      if (!sentinel || !options.faults) return;
      for (let i = 0; i < options.faults.clientKills && !faultsEnd; i++) {
        await new Promise((r) => setTimeout(r, 1000 + Math.random() * 2000));
        if (faultsEnd) break;
        const killed = await sentinel.killClients().catch(() => undefined);
        if (killed === undefined) continue; // the primary is away (a failover): the next one
        faults.clientKills++;
        faults.connectionsKilled += killed;
        log(`CLIENT KILL TYPE normal: ${killed} connections`);
      }
    })();
    // Progress is told by the tasks the service made (a Collector under verification is not done).
    const createdAtLeast = async (k: number) => {
      const deadline = Date.now() + 60_000;
      while ((await h.simStats()).tasksCreated < k) {
        if (Date.now() > deadline) throw new Error(`the service made fewer than ${k} tasks within 60 s`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const counts = async () =>
      JSON.stringify((await h.status().catch(() => undefined))?.rollouts[0]?.counts ?? {});
    const failoverMs: number[] = [];
    let createdDuringHold = 0;
    const commands: CommandRun[] = [];
    const resent: CommandRun[] = [];

    let beforeLast = new Map<number, Set<number>>();
    await createdAtLeast(options.firstKillAt ?? Math.ceil(n / 4));
    const rolloutId = (await h.waitFor((s) => s.rollouts.length > 0, 30_000)).rollouts[0]?.id as string;
    const rejoin = (node: Parameters<SentinelTopology['rejoin']>[0]) =>
      options.rejoin === 'plain' ? sentinel?.restartPlain(node) : sentinel?.rejoin(node);
    if (sentinel) {
      if (options.hold !== false) {
        const first = await sentinel.primary();
        const replica = sentinel.replicaOf(first);
        await sentinel.holdReplication(replica);
        // A create whose pre-write the replica acknowledged just before its link went down may
        // still be on its way: the hold is counted from a moment later.
        await new Promise((r) => setTimeout(r, 300));
        const before = (await h.simStats()).tasksCreated;
        log(`replication held back: ${before} tasks made, ${await counts()}`);
        await new Promise((r) => setTimeout(r, options.holdMs ?? 2500));
        createdDuringHold = (await h.simStats()).tasksCreated - before;
        log(`end of the hold: ${await counts()}`);
      }
      const t = performance.now();
      const [killed, promoted] = await sentinel.failover();
      failoverMs.push(performance.now() - t);
      await sentinel.releaseReplication(promoted);
      await rejoin(killed);
      if (options.faults?.restart) {
        await sentinel.restartPrimary();
        faults.restarts++;
        log(`primary restarted in place: ${await counts()}`);
      }
      log(
        `failover 1: ${killed.port} → ${promoted.port} in ${Math.round(failoverMs[0] ?? 0)} ms; ${createdDuringHold} creates during the hold`,
      );
    } else if (cluster) {
      // Its one failover is the last: what each process made before it.
      const records = await h.records();
      beforeLast = new Map(
        procs.map((p) => [p.child.pid as number, createdBy(records, p.child.pid as number)]),
      );
      const t = performance.now();
      const [killed, promoted] = await cluster.failover(h.keys.clock);
      failoverMs.push(performance.now() - t);
      await cluster.rejoin(killed);
      log(`cluster failover: ${killed.port} → ${promoted.port} in ${Math.round(failoverMs[0] ?? 0)} ms`);
    }

    // The second kill as soon as the first killed node is back as a replica (the operator commands
    // come after it: they take seconds, and the rollout must not have ended by the second kill).
    if (sentinel) {
      await createdAtLeast(Math.ceil(n / 2));
      log(`second failover: ${await counts()}`);
      const records = await h.records();
      beforeLast = new Map(
        procs.map((p) => [p.child.pid as number, createdBy(records, p.child.pid as number)]),
      );
      const t = performance.now();
      const [killed, promoted] = await sentinel.failover();
      failoverMs.push(performance.now() - t);
      await rejoin(killed);
      faultsEnd = true;
      await faulting;
      log(`failover 2: ${killed.port} → ${promoted.port} in ${Math.round(failoverMs[1] ?? 0)} ms`);
    }

    // The operator commands through the new primary (after the last failover): status, pause (nothing new starts), resume.
    // An action whose command warned that its write was not on a replica yet (a failover under
    // way: here one the sentinels made unasked, the machine being busy) is looked at again once
    // the topology is whole, as the warning asks, and sent again when the failover undid it.
    const act = async (args: string[], done: (phase: string | undefined) => boolean) => {
      const first = await cli(h, args);
      commands.push(first);
      if (!/could undo it/.test(first.output)) return;
      if (sentinel) await sentinel.whole(30_000, 'after a warned action: ');
      else await new Promise((r) => setTimeout(r, 3000));
      const now = await h.waitFor(() => true, 10_000);
      if (done(now.rollouts[0]?.phase)) return;
      log(`${args.join(' ')} was undone by a failover after it warned: sent again`);
      resent.push(await cli(h, args));
    };
    if (options.commands !== false) {
      commands.push(await cli(h, ['status']));
      await act(['pause', rolloutId], (phase) => phase === 'paused');
      const paused = await h.waitFor((s) => s.rollouts[0]?.phase === 'paused', 10_000).catch(() => undefined);
      commands.push({
        args: ['(phase after pause)'],
        code: paused ? 0 : 1,
        output: paused?.rollouts[0]?.phase ?? '?',
      });
      await act(['resume', rolloutId], (phase) => phase !== 'paused');
    }

    const final = await h.waitFor(converged, options.convergeMs ?? 90_000);
    if (options.commands !== false) {
      commands.push(await cli(h, ['report', '--format', 'csv']));
      commands.push(await cli(h, ['status']));
    }
    const run = procs[0]?.child;
    // `run --once` ends by itself once the rollout converged: 0 (all succeeded) or 2.
    if (options.once && run) await exitOf(run, 30_000);
    const records = await h.records();
    const simAll = (await (await fetch(`${h.sim.url}/_sim/collectors`)).json()) as { collectors: SimView[] };
    const sim = new Map(simAll.collectors.map((c) => [c.id, c]));
    const expected = new Set(simAll.collectors.filter((c) => c.type === 'Installable').map((c) => c.id));
    const judgement = judgeOutcomes(records, sim, expected);
    const stats = await h.simStats();
    const processes: ProcessReport[] = procs.map((p) => {
      const pid = p.child.pid as number;
      const output = p.child.output();
      const after = createdBy(records, pid);
      const was = beforeLast.get(pid) ?? new Set<number>();
      return {
        role: p.role,
        pid,
        running: p.child.exitCode === null && p.child.signalCode === null,
        exitCode: p.child.exitCode,
        unhandled: output
          .split('\n')
          .filter((l) => /unhandled error|Unhandled|uncaught|UnhandledPromiseRejection/i.test(l)),
        restored: output.split('\n').filter((l) => l.includes('redis connection restored')).length,
        createdAfterLastFailover: [...after].filter((id) => !was.has(id)).length,
        output,
      };
    });
    const heldBack = processes.reduce(
      (sum, p) => sum + p.output.split('\n').filter((l) => l.includes('create held back')).length,
      0,
    );
    const unplannedFailovers = sentinel ? (await sentinel.failovers()) - failoverMs.length : 0;
    return {
      judgement,
      records,
      createdDuringHold,
      unplannedFailovers,
      heldBack,
      failoverMs,
      processes,
      commands,
      resent,
      tasksCreated: stats.tasksCreated,
      maxConcurrentTasks: stats.maxConcurrentTasks,
      faults,
      realMs: performance.now() - started,
      counts: Object.fromEntries(
        Object.entries(final.rollouts[0]?.counts ?? {}).map(([k, v]) => [k, v ?? 0]),
      ),
    };
  } catch (err) {
    // What the processes said last, for the one who reads the failure.
    const tail = procs
      .map((p) => {
        const lines = p.child.output().trim().split('\n');
        const told = process.env.DEBUG_HARNESS
          ? lines.slice(-60)
          : lines.filter((l) => !/"level":30/.test(l) || /redis|leads|follows/.test(l)).slice(-25);
        return `--- ${p.role} (pid ${p.child.pid}, exit ${p.child.exitCode ?? p.child.signalCode ?? 'running'}):\n${told.join('\n')}`;
      })
      .join('\n');
    if (err instanceof Error) err.message = `${err.message}\n${tail}`;
    throw err;
  } finally {
    await harness?.close().catch(() => undefined);
    await topology.stop();
  }
}
