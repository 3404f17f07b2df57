/**
 * The chaos scenario of issues 12 and 17, shared by test/e2e/rollout/chaos.test.ts (small) and
 * bench/chaos.ts (full): three organizations, each its own simulator process with every fault
 * (chaos-orgs.ts, chaos-fleet.ts), one of them with a 429 storm and a later outage of the whole
 * organization; a private redis-server with append-only persistence (aof-redis.ts), or a primary
 * and replica behind three sentinels (`redis: 'sentinel'`, chaos-redis.ts); `run` and
 * three `worker` processes of the built CLI (dist/) on that Redis, driving the three from one
 * settings file with `orgs` (keys from files and from a variable) and one policy covering all;
 * all on one clock; and while the rollout runs:
 * - a kill loop: `kills` SIGKILLs of random running processes, each started again after a random
 *   pause, one of them (the middle one) a SIGKILL of redis-server started again from its AOF;
 * - 429 bursts from a second client of the same API user, in each organization without the storm
 *   (noisy-neighbour.ts);
 * - /metrics (and /status of `run`) of every process read every few seconds for the secret scan.
 * When the rollout has converged (or the deadline passed), it judges every recorded outcome
 * against its organization's simulator (judge-outcomes.ts), lays every task of the three side by
 * side for the limit across organizations (peak-tasks.ts), and looks for every access key
 * everywhere (secret-scanner.ts). Every loop is bounded in rounds and in time; everything started
 * is stopped, also on failure.
 *
 * The clock: one scaled clock with an origin taken here, given to each simulator process and
 * written to the deployment's clock key before any process starts (lib/shared-clock.ts reads
 * it), so the deployment's time and every simulator's are the same number: a record's times can
 * be laid next to its simulator's, and one simulator's tasks next to another's.
 */
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
import {
  BURSTS,
  type ChaosFigures,
  type ChaosOptions,
  chaosViolations,
  faultPlan,
  resultsMetricViolations,
} from './chaos-figures.js';
import { chaosPolicy } from './chaos-fleet.js';
import { chaosOrgs } from './chaos-orgs.js';
import { startChaosRedis } from './chaos-redis.js';
import { CliProcess } from './cli-process.js';
import { judgeOrgs, type SimView } from './judge-outcomes.js';
import { startKillLoop } from './kill-loop.js';
import { type NoisyNeighbour, startNoisyNeighbour } from './noisy-neighbour.js';
import { orgFigures, type SimStats, sumCounts } from './org-figures.js';
import { OrgSimulator } from './org-simulator.js';
import { peakTasks } from './peak-tasks.js';
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
  const keyDir = join(dir, 'keys');
  for (const d of [logDir, redisDir, keyDir]) mkdirSync(d);
  const orgs = chaosOrgs({ collectors: o.collectors, seed: o.seed, faults: o.faults ?? faultPlan() });
  const scanner = new SecretScanner(orgs);
  const cleanups: (() => Promise<unknown>)[] = [];
  let keep = o.keepFiles ?? false;
  try {
    const redis = await startChaosRedis(o.redis ?? 'aof', redisDir);
    cleanups.push(() => redis.stop());
    const origin = Date.now();
    const clock = createScaledClock(o.timeScale, origin);
    const sims = await Promise.all(
      orgs.map((org) =>
        OrgSimulator.start({ name: org.name, fleet: org.fleet, timeScale: o.timeScale, origin }),
      ),
    );
    cleanups.push(() => Promise.all(sims.map((s) => s.stop())));
    const collectorsOf = async (sim: OrgSimulator) =>
      (await sim.get<{ collectors: SimView[] }>('/_sim/collectors')).collectors;
    const expected = new Map<string, Set<number>>();
    const windows = new Map<string, { kind: string; since: number; until: number | null }[]>();
    for (const [i, org] of orgs.entries()) {
      const sim = sims[i] as OrgSimulator;
      const atStart = await collectorsOf(sim);
      expected.set(
        org.name,
        new Set(atStart.filter((c) => c.type === 'Installable' && c.version !== org.target).map((c) => c.id)),
      );
      // The scheduled windows on the shared clock, as the simulator placed them.
      const faults = await sim.get<{ upcoming: { kind: string; since: number; until: number | null }[] }>(
        '/_sim/faults',
      );
      windows.set(org.name, faults.upcoming);
    }

    const prefix = 'chaos:';
    const admin = createRedis(redis.target, { name: 'chaos' });
    cleanups.push(() => closeRedis(admin));
    const state = createState(admin, prefix);
    await admin.set(state.keys.clock, JSON.stringify({ scale: o.timeScale, origin }));

    // One settings file for every process: the organizations, each key in a file or a variable.
    const settingsFile = join(dir, 'settings.yaml');
    const keyEnv: Record<string, string> = {};
    const entries = orgs.map((org, i) => {
      const entry = { name: org.name, baseUrl: (sims[i] as OrgSimulator).baseUrl, accessId: org.accessId };
      if (org.keyFrom === 'env') {
        keyEnv[org.keyVar] = org.accessKey;
        return { ...entry, accessKeyEnv: org.keyVar };
      }
      const keyFile = join(keyDir, `${org.name}.key`);
      writeFileSync(keyFile, `${org.accessKey}\n`, { mode: 0o600 });
      return { ...entry, accessKeyFile: keyFile };
    });
    writeFileSync(settingsFile, stringify({ orgs: entries }));
    const policyFile = join(dir, 'chaos.yaml');
    writeFileSync(policyFile, stringify(chaosPolicy(o.maxInFlight, o.maxInFlightPerOrg)));
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...redis.env,
      FLEET_UPGRADE_CONFIG: settingsFile,
      FLEET_UPGRADE_KEY_PREFIX: prefix,
      FLEET_UPGRADE_TICK: '100ms',
      FLEET_UPGRADE_STALLED_INTERVAL: '1s',
      FLEET_UPGRADE_TIME_SCALE: String(o.timeScale),
      FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
      ...keyEnv,
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
    const rolloutStartSim = clock.now();
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

    const neighbours = new Map<string, NoisyNeighbour>();
    for (const [i, org] of orgs.entries())
      if (org.neighbour)
        neighbours.set(
          org.name,
          startNoisyNeighbour({
            baseUrl: (sims[i] as OrgSimulator).baseUrl,
            accessId: org.accessId,
            accessKey: org.accessKey,
            everyMs: o.burstEveryMs ?? BURSTS.everyMs,
            burstMs: o.burstMs ?? BURSTS.burstMs,
          }),
        );
    cleanups.push(() => Promise.all([...neighbours.values()].map((n) => n.stop())));

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
        say(
          progressLine(
            status,
            Date.now() - rolloutStart,
            (clock.now() - rolloutStartSim) / 60_000,
            killer.kills.length,
          ),
        );
      }
      await sleep(500);
    }
    const rolloutMs = Date.now() - rolloutStart;
    const simulatedMinutes = (clock.now() - rolloutStartSim) / 60_000;
    const isConverged = converged();
    await killer.stop();
    for (const n of neighbours.values()) await n.stop();
    // Every process is up again: the last word of each on /metrics.
    for (const p of processes) await p.start();
    await sleep(1500);
    await scrape();

    const rolloutId = (await state.rollouts.list())[0]?.id;
    const records: CollectorRecord[] = [];
    if (rolloutId) for await (const r of state.store.all(rolloutId)) records.push(r);
    const outcomes: Record<string, number> = {};
    for (const r of records) outcomes[r.state] = (outcomes[r.state] ?? 0) + 1;
    // fleet_upgrade_results_total over every process, once a `run` leads again (a killed leader's
    // lock lives out its time first): bounded, the last reading kept.
    let resultsMetric: Record<string, number> = {};
    for (let look = 0; look < 30; look++) {
      resultsMetric = await resultsOf(processes);
      if (resultsMetricViolations(resultsMetric, outcomes).length === 0) break;
      await sleep(500);
    }
    const history = rolloutId ? await state.events.history(rolloutId) : [];
    const simNow = new Map<string, SimView[]>();
    const stats = new Map<string, SimStats>();
    for (const [i, org] of orgs.entries()) {
      const sim = sims[i] as OrgSimulator;
      simNow.set(org.name, await collectorsOf(sim));
      stats.set(org.name, await sim.get<SimStats>('/_sim/stats'));
    }
    const judged = judgeOrgs(
      records,
      orgs.map((org) => ({
        org: org.name,
        sim: new Map((simNow.get(org.name) ?? []).map((c) => [c.id, c])),
        expected: expected.get(org.name) ?? new Set(),
      })),
    );

    const report = await runCli(CLI, ['report', '--format', 'json'], env);
    scanner.report(report.stdout);
    scanner.report(report.stderr);
    const reportRows = countReportRows(report.stdout);

    for (const p of processes) await p.stop();
    for (const p of processes) for (const file of p.logFiles) scanner.logFile(file);
    await scanner.redis(admin);
    for (const d of redis.aofDirs()) scanner.aof(d);

    const perOrg = orgs.map((org) =>
      orgFigures({
        org,
        options: o,
        records: records.filter((r) => r.org === org.name),
        collectors: simNow.get(org.name) ?? [],
        expected: expected.get(org.name)?.size ?? 0,
        judgement: judged.byOrg.get(org.name),
        stats: stats.get(org.name) as SimStats,
        neighbour: neighbours.get(org.name),
        windows: windows.get(org.name) ?? [],
        history,
        rolloutStartSim,
      }),
    );
    const sumOf = (pick: (n: NoisyNeighbour) => number) =>
      [...neighbours.values()].reduce((sum, n) => sum + pick(n), 0);
    const figures: ChaosFigures = {
      options: { ...o, onProgress: undefined } as Omit<ChaosOptions, 'onProgress'>,
      appendFsync: redis.describe,
      ...(redis.failoverMs.length ? { failoverMs: redis.failoverMs.map(Math.round) } : {}),
      converged: isConverged,
      fleet: perOrg.reduce((sum, x) => sum + x.fleet, 0),
      expected: perOrg.reduce((sum, x) => sum + x.expected, 0),
      records: records.length,
      outcomes,
      resultsMetric,
      reconciled: perOrg.reduce((sum, x) => sum + x.reconciled, 0),
      judgement: judged.all,
      peakTasks: peakTasks([...simNow.values()].flat()).peak,
      simulator: sumCounts(perOrg.map((x) => x.simulator)),
      rateLimitedDeployment: perOrg.reduce((sum, x) => sum + x.rateLimitedDeployment, 0),
      neighbour: {
        bursts: sumOf((n) => n.bursts),
        requests: sumOf((n) => n.requests),
        rateLimited: sumOf((n) => n.rateLimited),
      },
      orgs: perOrg,
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

/** `  40.2 s (27 min) rolling_out 120/184 done, 25 in flight, 4 kills; amer 60/74 emea 40/55 apac 20/55 (unreachable)` */
function progressLine(status: FleetStatus | undefined, ms: number, minutes: number, kills: number): string {
  const r = status?.rollouts[0];
  const parts = (r?.byOrg ?? [])
    .map((p) => `${p.org} ${p.done}/${p.total}${p.problem ? ` (${p.problem})` : ''}`)
    .join(' ');
  return `${(ms / 1000).toFixed(1).padStart(6)} s (${minutes.toFixed(0)} min) ${r?.phase ?? 'no rollout yet'} ${r?.done ?? 0}/${r?.total ?? 0} done, ${r?.inflight ?? 0} in flight, ${kills} kills; ${parts}`;
}

/** fleet_upgrade_results_total by outcome, summed over the processes' /metrics. */
async function resultsOf(
  processes: readonly { url?: string | undefined }[],
): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const p of processes) {
    const text = p.url ? await readText(`${p.url}/metrics`) : undefined;
    for (const m of (text ?? '').matchAll(
      /^fleet_upgrade_results_total\{[^}]*\boutcome="([^"]+)"[^}]*\} (\S+)$/gm,
    ))
      out[m[1] as string] = (out[m[1] as string] ?? 0) + Number(m[2]);
  }
  return out;
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
