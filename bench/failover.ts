/**
 * Benchmark: what WAIT buys and costs behind Redis Sentinel (issue 19).
 *
 * 1. The cost of WAIT per create, on the real Sentinel topology of the tests (a primary, a
 *    replica, three sentinels of Debian's redis-server on loopback): a pre-write like the
 *    worker's (`HSET` of a record) then `confirm` of lib/redis/replica-wait.ts, timed against the
 *    same write without WAIT; one writer at a time, and `--concurrency` writers at once (the
 *    worker's steps share WAITs, a group commit per connection).
 * 2. The failover scenario of test/e2e/redis/sentinel-failover.test.ts (test/support/
 *    failover-rollout.ts) `--runs` times with `minReplicasForCreate: 0` (no WAIT), and as many
 *    with the default (WAIT): replication held back for a while, the primary SIGKILLed, the
 *    replica promoted (it lacks every write of the hold), later the new primary killed too.
 *    For each run: creates sent during the hold, Collectors with a second task, mismatches with
 *    the simulator, failover times.
 *
 * 3. With `--task-ids` (issue 25), instead of 2: the same scenario `--runs` times with WAIT on the
 *    pre-write only (`FLEET_UPGRADE_CONFIRM_TASK_IDS=0`, as before issue 25) and as many with WAIT
 *    on the task id too (the default): Collectors ending `unknown` (a task id lost with the
 *    killed primary leaves only the listings to tell), second tasks, mismatches.
 *
 * Run: npm run build && npm run bench -- failover [--runs 3] [--collectors 300] [--hold 2500]
 *        [--writes 500] [--concurrency 20] [--skip-scenario] [--task-ids] [--no-hold]
 * `--no-hold`: the primary is killed without holding replication back first (creates go on up to
 * the kill, so task ids written just before it are at risk: what `--task-ids` compares).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { closeRedis, createRedis } from '../src/lib/redis/create-redis.js';
import { startReplicaWait } from '../src/lib/redis/replica-wait.js';
import { runFailoverRollout } from '../test/support/failover-rollout.js';
import { startSentinelTopology } from '../test/support/redis-topology.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i > 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value < 0) {
    process.stderr.write(`--${name} must be a number ≥ 0\n`);
    process.exit(64);
  }
  return value;
}

const say = (line: string) => process.stderr.write(`${line}\n`);
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? Number.NaN;
};
const ms = (x: number) => x.toFixed(2);

interface Timing {
  mode: string;
  writers: number;
  writes: number;
  p50: number;
  p99: number;
  mean: number;
  waits: number;
}

/** `writes` pre-writes by `writers` concurrent writers, each confirmed (or not) before the next. */
async function measureWait(writes: number, writers: number): Promise<Timing[]> {
  const topology = await startSentinelTopology();
  const redis = createRedis(topology.target(), { name: 'bench-steps' });
  try {
    await redis.ping();
    const out: Timing[] = [];
    for (const needed of [0, 1]) {
      const wait = await startReplicaWait({
        redis,
        key: '{bench}:clock',
        flagKey: '{bench}:replicated',
        topology: 'sentinel',
        minReplicas: needed,
        refreshMs: 0,
      });
      for (const w of [1, writers]) {
        const times: number[] = [];
        let next = 0;
        const writer = async () => {
          while (next < writes) {
            const i = next++;
            const t = performance.now();
            const mark = wait.mark();
            await redis.hset(`{bench}:record:${i % 1000}`, {
              state: 'creating',
              sentAt: String(Date.now()),
              admissions: '1',
            });
            const c = await wait.confirm(mark);
            if (!c.ok) throw new Error(`WAIT did not confirm: ${c.reason}`);
            times.push(performance.now() - t);
          }
        };
        const before = wait.stats().waits;
        await Promise.all(Array.from({ length: w }, writer));
        out.push({
          mode: needed ? 'WAIT 1' : 'no WAIT',
          writers: w,
          writes,
          p50: quantile(times, 0.5),
          p99: quantile(times, 0.99),
          mean: times.reduce((a, b) => a + b, 0) / times.length,
          waits: wait.stats().waits - before,
        });
      }
      wait.close();
    }
    return out;
  } finally {
    await closeRedis(redis);
    await topology.stop();
  }
}

const runs = arg('runs', 3);
const collectors = arg('collectors', 300);
const holdMs = arg('hold', 2500);
const writes = arg('writes', 500);
const concurrency = arg('concurrency', 20);

const results: Record<string, unknown> = { options: { runs, collectors, holdMs, writes, concurrency } };
say(`WAIT cost: ${writes} pre-writes, 1 and ${concurrency} writers, on Sentinel (primary + replica)`);
const timings = await measureWait(writes, concurrency);
results.waitCost = timings;
const lines = [
  '| pre-write then | writers | p50 ms | p99 ms | mean ms | WAITs sent |',
  '|---|---:|---:|---:|---:|---:|',
  ...timings.map(
    (t) => `| ${t.mode} | ${t.writers} | ${ms(t.p50)} | ${ms(t.p99)} | ${ms(t.mean)} | ${t.waits} |`,
  ),
];
process.stdout.write(`${lines.join('\n')}\n\n`);

if (!process.argv.includes('--skip-scenario')) {
  const rows: string[] = [
    '| run | WAIT | creates during the hold | held back | second tasks | mismatches | unknowable | failovers (ms) | unasked failovers | real s |',
    '|---|---|---:|---:|---:|---:|---:|---|---:|---:|',
  ];
  const scenario: unknown[] = [];
  const taskIds = process.argv.includes('--task-ids');
  if (taskIds) rows[0] += ' unknown |';
  if (taskIds) rows[1] += '---:|';
  const modes = taskIds ? (['pre-write only', 'pre-write and task id'] as const) : ([0, undefined] as const);
  for (const mode of modes) {
    const minReplicas = typeof mode === 'string' ? undefined : mode;
    for (let i = 1; i <= runs; i++) {
      const label =
        typeof mode === 'string' ? mode : minReplicas === 0 ? 'no (minReplicasForCreate 0)' : 'yes (default)';
      say(`scenario ${i}/${runs}, WAIT ${label}`);
      try {
        const r = await runFailoverRollout({
          topology: 'sentinel',
          collectors,
          holdMs,
          seed: 19 + i,
          ...(minReplicas === undefined ? {} : { minReplicasForCreate: minReplicas }),
          ...(mode === 'pre-write only' ? { env: { FLEET_UPGRADE_CONFIRM_TASK_IDS: '0' } } : {}),
          ...(process.argv.includes('--no-hold') ? { hold: false } : {}),
          log: (line) => say(`  ${line}`),
        });
        const row = {
          run: i,
          wait: minReplicas === undefined,
          createdDuringHold: r.createdDuringHold,
          heldBack: r.heldBack,
          doubleTasks: r.judgement.doubleTasks,
          mismatches: r.judgement.mismatches,
          unknowable: r.judgement.unknowable.length,
          notSettled: r.judgement.notSettled.length,
          failoverMs: r.failoverMs.map(Math.round),
          unplannedFailovers: r.unplannedFailovers,
          resent: r.resent.length,
          realMs: Math.round(r.realMs),
          counts: r.counts,
          unknown: r.counts.unknown ?? 0,
        };
        scenario.push(row);
        rows.push(
          `| ${i} | ${label} | ${row.createdDuringHold} | ${row.heldBack} | ${row.doubleTasks.length} | ${row.mismatches.length} | ${row.unknowable} | ${row.failoverMs.join(', ')} | ${row.unplannedFailovers} | ${(row.realMs / 1000).toFixed(0)} |${taskIds ? ` ${row.unknown} |` : ''}`,
        );
        say(`  → ${JSON.stringify({ ...row, mismatches: row.mismatches.slice(0, 5) })}`);
      } catch (err) {
        scenario.push({
          run: i,
          wait: minReplicas === undefined,
          error: (err as Error).message.slice(0, 2000),
        });
        rows.push(`| ${i} | ${label} | failed: ${(err as Error).message.split('\n')[0]} |`);
      }
    }
  }
  results.scenario = scenario;
  process.stdout.write(`${rows.join('\n')}\n`);
}

const dir = join(import.meta.dirname, 'results');
mkdirSync(dir, { recursive: true });
const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
const file = join(dir, `failover-${stamp}.json`);
writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write(`All figures: ${file}\n`);
