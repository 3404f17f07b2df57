/**
 * The chaos scenario of issue 12, shared by test/e2e/rollout/chaos.test.ts (small) and
 * bench/chaos.ts (full): the simulator with every fault (chaos-fleet.ts), a private redis-server
 * with append-only persistence (aof-redis.ts), `run` and three `worker` processes of the built CLI
 * (dist/) on that Redis, all on one clock, and while the rollout runs:
 * - a kill loop: `kills` SIGKILLs of random running processes, each started again after a random
 *   pause, one of them (the middle one) a SIGKILL of redis-server started again from its AOF;
 * - 429 bursts from a second client of the same API user (noisy-neighbour.ts);
 * - /metrics (and /status of `run`) of every process read every few seconds for the secret scan.
 * When the rollout has converged (or the deadline passed), it judges every recorded outcome
 * against the simulator (judge-outcomes.ts) and looks for the access key everywhere
 * (secret-scanner.ts). Every loop is bounded in rounds and in time; everything started is
 * stopped, also on failure.
 *
 * The clock: the simulator's scaled clock is created here, and its origin written to the
 * deployment's clock key before any process starts (lib/shared-clock.ts reads it), so the
 * deployment's time and the service's time are the same number: a record's times can be laid
 * next to the simulator's.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createScaledClock } from '../../../src/lib/clock.js';
import { createRandom } from '../../../src/lib/random.js';
import { closeRedis, createRedis } from '../../../src/lib/redis/create-redis.js';
import type { CollectorRecord } from '../../../src/rollout/collector/index.js';
import { type FleetStatus, readFleetStatus } from '../../../src/rollout/life/index.js';
import { startSimulator } from '../../../src/simulator/start-simulator.js';
import { AofRedis, APPEND_FSYNC } from './aof-redis.js';
import { type ChaosFigures, type ChaosOptions, chaosViolations } from './chaos-figures.js';
import { CHAOS_TARGET, chaosFleet, chaosPolicy } from './chaos-fleet.js';
import { CliProcess } from './cli-process.js';
import { judgeOutcomes, type SimView } from './judge-outcomes.js';
import { startKillLoop } from './kill-loop.js';
import { startNoisyNeighbour } from './noisy-neighbour.js';
import { runCli } from './run-cli.js';
import { SecretScanner } from './secret-scanner.js';
import { sleep } from './sleep.js';

const CLI = join(import.meta.dirname, '..', '..', '..', 'bin', 'fleet-upgrade.js');

export async function runChaos(o: ChaosOptions): Promise<ChaosFigures> {
  const wallStart = Date.now();
  const say = o.onProgress ?? (() => {});
  const rng = createRandom(o.seed ^ 0x0c4a05);
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-chaos-'));
  const logDir = join(dir, 'logs');
  const redisDir = join(dir, 'redis');
  mkdirSync(logDir);
  mkdirSync(redisDir);
  const accessId = 'chaos-ops';
  const accessKey = `chaoskey${randomBytes(16).toString('hex')}`;
  const scanner = new SecretScanner(accessId, accessKey);
  const cleanups: (() => Promise<unknown>)[] = [];
  let keep = o.keepFiles ?? false;
  try {
    const redis = await AofRedis.start(redisDir);
    cleanups.push(() => redis.stop());
    const origin = Date.now();
    const clock = createScaledClock(o.timeScale, origin);
    const sim = await startSimulator({
      fleet: chaosFleet({ collectors: o.collectors, seed: o.seed, accessId, accessKey }),
      clock,
    });
    cleanups.push(() => sim.close());
    const simGet = async <T>(path: string): Promise<T> =>
      (await (await fetch(`${sim.url}${path}`)).json()) as T;
    const atStart = (await simGet<{ collectors: SimView[] }>('/_sim/collectors')).collectors;
    const expected = new Set(
      atStart.filter((c) => c.type === 'Installable' && c.version !== CHAOS_TARGET).map((c) => c.id),
    );

    const prefix = 'chaos:';
    const admin = createRedis(redis.url, { name: 'chaos' });
    cleanups.push(() => closeRedis(admin));
    const state = createState(admin, prefix);
    await admin.set(state.keys.clock, JSON.stringify({ scale: o.timeScale, origin }));

    const policyFile = join(dir, 'chaos.yaml');
    writeFileSync(policyFile, stringify(chaosPolicy(o.maxInFlight)));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      REDIS_URL: redis.url,
      FLEET_UPGRADE_KEY_PREFIX: prefix,
      FLEET_UPGRADE_TICK: '100ms',
      FLEET_UPGRADE_STALLED_INTERVAL: '1s',
      FLEET_UPGRADE_TIME_SCALE: String(o.timeScale),
      FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
      SUMOLOGIC_BASE_URL: sim.baseUrl,
      SUMOLOGIC_ACCESSID: accessId,
      SUMOLOGIC_ACCESSKEY: accessKey,
      // Every line the product can write, for the secret scan.
      LOG_LEVEL: 'debug',
    };
    const processes = [
      new CliProcess({ name: 'run', cli: CLI, args: ['run', '--policy', policyFile], env, logDir }),
      ...Array.from(
        { length: o.workers ?? 3 },
        (_, i) => new CliProcess({ name: `worker-${i + 1}`, cli: CLI, args: ['worker'], env, logDir }),
      ),
    ];
    cleanups.push(() => Promise.all(processes.map((p) => p.stop())));
    const rolloutStart = Date.now();
    for (const p of processes) await p.start();

    let status: FleetStatus | undefined;
    const readStatus = async () => {
      try {
        status = await readFleetStatus(state);
      } catch {
        // Redis is down (killed on purpose): keep the last status.
      }
      return status;
    };
    const converged = () => status?.rollouts[0]?.phase === 'converged';
    const progress = () => ({ done: status?.rollouts[0]?.done ?? 0, total: status?.rollouts[0]?.total ?? 0 });

    const neighbour = startNoisyNeighbour({
      baseUrl: sim.baseUrl,
      accessId,
      accessKey,
      everyMs: o.burstEveryMs ?? 7000,
      burstMs: o.burstMs ?? 400,
    });
    cleanups.push(() => neighbour.stop());

    const scrape = async () => {
      for (const p of processes) {
        const url = p.url;
        if (!url) continue;
        const where = `${p.name}#${p.starts}`;
        const text = await readText(`${url}/metrics`);
        if (text !== undefined) scanner.metrics(`${where} /metrics`, text);
        if (p.name === 'run') {
          const body = await readText(`${url}/status`);
          if (body !== undefined) scanner.status(`${where} /status`, body);
        }
      }
    };

    const killer = startKillLoop({
      processes,
      redis,
      rng,
      kills: o.kills,
      meanGapMs: o.meanKillGapMs,
      maxPauseMs: o.maxRestartDelayMs ?? 3000,
      since: rolloutStart,
      progress,
      say,
    });

    // Watch until converged or the deadline: status every 500 ms, metrics every 3 s.
    const deadline = rolloutStart + o.deadlineMs;
    let lastSay = 0;
    let lastScrape = 0;
    for (let round = 0; round < 1_000_000 && Date.now() < deadline; round++) {
      await readStatus();
      if (converged()) break;
      if (Date.now() - lastScrape > 3000) {
        lastScrape = Date.now();
        await scrape();
      }
      if (Date.now() - lastSay > 10_000) {
        lastSay = Date.now();
        const r = status?.rollouts[0];
        say(
          `${seconds(Date.now() - rolloutStart)} ${r?.phase ?? 'no rollout yet'} ${r?.done ?? 0}/${r?.total ?? 0} done, ${r?.inflight ?? 0} in flight, ${killer.kills.length} kills`,
        );
      }
      await sleep(500);
    }
    const rolloutMs = Date.now() - rolloutStart;
    const simulatedMinutes = (clock.now() - origin) / 60_000;
    const isConverged = converged();
    await killer.stop();
    await neighbour.stop();
    // Every process is up again: the last word of each on /metrics.
    for (const p of processes) await p.start();
    await sleep(1500);
    await scrape();

    const rolloutId = (await state.rollouts.list())[0]?.id;
    const records: CollectorRecord[] = [];
    if (rolloutId) for await (const r of state.store.all(rolloutId)) records.push(r);
    const simNow = (await simGet<{ collectors: SimView[] }>('/_sim/collectors')).collectors;
    const stats = await simGet<{
      requests: { total: number };
      tasksCreated: number;
      rateLimited: number;
      injectedErrors: number;
      dropped: number;
      maxConcurrentTasks: number;
      tasksByOutcome: Record<string, number>;
    }>('/_sim/stats');
    const judgement = judgeOutcomes(records, new Map(simNow.map((c) => [c.id, c])), expected);

    const report = await runCli(CLI, ['report', '--format', 'json'], env);
    scanner.report(report.stdout);
    scanner.report(report.stderr);
    const reportRows = countReportRows(report.stdout);

    for (const p of processes) await p.stop();
    for (const p of processes) for (const file of p.logFiles) scanner.logFile(file);
    await scanner.redis(admin);
    scanner.aof(redisDir);

    const outcomes: Record<string, number> = {};
    for (const r of records) outcomes[r.state] = (outcomes[r.state] ?? 0) + 1;
    const figures: ChaosFigures = {
      options: { ...o, onProgress: undefined } as Omit<ChaosOptions, 'onProgress'>,
      appendFsync: APPEND_FSYNC,
      converged: isConverged,
      fleet: simNow.length,
      expected: expected.size,
      records: records.length,
      outcomes,
      reconciled: records.filter((r) => r.attemptLog?.some((a) => a.answer === 'unknown')).length,
      judgement,
      maxConcurrentTasks: stats.maxConcurrentTasks,
      simulator: {
        requests: stats.requests.total,
        tasksCreated: stats.tasksCreated,
        rateLimited: stats.rateLimited,
        injectedErrors: stats.injectedErrors,
        dropped: stats.dropped,
        tasksByOutcome: stats.tasksByOutcome,
      },
      rateLimitedDeployment: stats.rateLimited - neighbour.rateLimited,
      neighbour: {
        bursts: neighbour.bursts,
        requests: neighbour.requests,
        rateLimited: neighbour.rateLimited,
      },
      kills: [...killer.kills],
      processKills: killer.kills.filter((k) => k.target !== 'redis-server').length,
      redisKills: killer.kills.filter((k) => k.target === 'redis-server').length,
      unaskedExits: processes.flatMap((p) => p.unaskedExits),
      starts: Object.fromEntries([
        ...processes.map((p) => [p.name, p.starts]),
        ['redis-server', redis.starts],
      ]),
      reportRows,
      secret: scanner.figures,
      rolloutMs,
      wallMs: Date.now() - wallStart,
      simulatedMinutes,
    };
    if (chaosViolations(figures).length) keep = true;
    if (keep) figures.files = dir;
    return figures;
  } catch (err) {
    keep = true;
    throw Object.assign(err as Error, { files: dir });
  } finally {
    for (const c of cleanups.reverse()) await c().catch(() => undefined);
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

async function readText(url: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    return await res.text();
  } catch {
    return undefined; // the process is being killed or starting
  }
}

function countReportRows(out: string): number {
  try {
    const parsed = JSON.parse(out) as { collectors?: unknown[] };
    return parsed.collectors?.length ?? -1;
  } catch {
    return -1;
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1).padStart(6)} s`;
}
