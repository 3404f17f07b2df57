/**
 * Benchmark: the chaos test of issues 12 and 17 at full size (test/support/chaos/run-chaos.ts):
 * about 1,000 Collectors in three organizations (three simulator processes) with every fault,
 * one organization with a 429 storm and a 10-minute outage, `run` + 3 `worker` processes of the
 * built CLI driving the three from one settings file, on one Redis with append-only persistence,
 * tens of SIGKILLs of random processes and one of redis-server; then every invariant checked and
 * the figures printed as tables, in all and per organization. Exit code 1 when an invariant does
 * not hold. Every figure also goes to bench/results/chaos-<time>.json.
 *
 * Run: npm run build && npm run bench -- chaos [--collectors 1000] [--kills 30] [--time-scale 30]
 *        [--seed 12] [--in-flight 60] [--in-flight-per-org 25] [--storm-at 10] [--storm-for 10]
 *        [--outage-at 30] [--outage-for 10] [--kill-gap 4] [--deadline 600] [--keep]
 *        [--redis aof|sentinel]
 * (--storm-*, --outage-* in simulated minutes from the simulators' start; --kill-gap and
 * --deadline in real seconds.) Needs redis-server on PATH: the scenario kills its own.
 * `--redis sentinel` runs it on a primary and a replica behind three sentinels on loopback
 * (test/support/chaos/chaos-redis.ts): the one Redis kill is then a SIGKILL of the primary, the
 * replica promoted, and the killed one back as a replica; creates wait for the replica (WAIT).
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chaosViolations, faultPlan } from '../test/support/chaos/chaos-figures.js';
import { formatChaos } from '../test/support/chaos/format-chaos.js';
import { runChaos } from '../test/support/chaos/run-chaos.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const value = i > 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) {
    process.stderr.write(`--${name} must be a positive number\n`);
    process.exit(64);
  }
  return value;
}

function redisKind(): 'aof' | 'sentinel' {
  const i = process.argv.indexOf('--redis');
  const value = i > 0 ? process.argv[i + 1] : 'aof';
  if (value !== 'aof' && value !== 'sentinel') {
    process.stderr.write('--redis must be aof or sentinel\n');
    process.exit(64);
  }
  return value;
}

const plan = faultPlan();
const redis = redisKind();
const figures = await runChaos({
  collectors: arg('collectors', 1000),
  kills: arg('kills', 30),
  timeScale: arg('time-scale', 30),
  seed: arg('seed', 12),
  maxInFlight: arg('in-flight', 60),
  maxInFlightPerOrg: arg('in-flight-per-org', 25),
  faults: {
    storm: { ...plan.storm, fromMinutes: arg('storm-at', 10), forMinutes: arg('storm-for', 10) },
    outage: { ...plan.outage, fromMinutes: arg('outage-at', 30), forMinutes: arg('outage-for', 10) },
  },
  meanKillGapMs: arg('kill-gap', 4) * 1000,
  deadlineMs: arg('deadline', 600) * 1000,
  keepFiles: process.argv.includes('--keep'),
  redis,
  onProgress: (line) => process.stderr.write(`${line}\n`),
});
const violations = chaosViolations(figures);
process.stdout.write(`${formatChaos(figures, violations)}\n`);
// Every figure, kills and lists included, for a later look (bench/results is not committed).
const results = join(import.meta.dirname, 'results');
mkdirSync(results, { recursive: true });
const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
const file = join(results, `chaos-${redis === 'aof' ? '' : `${redis}-`}${stamp}.json`);
writeFileSync(file, `${JSON.stringify({ ...figures, violations }, null, 2)}\n`);
process.stdout.write(`All figures: ${file}\n`);
process.exitCode = violations.length ? 1 : 0;
