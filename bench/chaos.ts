/**
 * Benchmark: the chaos test of issue 12 at full size (test/support/chaos/run-chaos.ts): about
 * 1,000 Collectors on the simulator with every fault, `run` + 3 `worker` processes of the built
 * CLI on one Redis with append-only persistence, tens of SIGKILLs of random processes and one of
 * redis-server; then every invariant checked and the figures printed as a table. Exit code 1
 * when an invariant does not hold. Every figure also goes to bench/results/chaos-<time>.json.
 *
 * Run: npm run build && npm run bench -- chaos [--collectors 1000] [--kills 30] [--time-scale 30]
 *        [--seed 12] [--in-flight 60] [--kill-gap 4] [--deadline 480] [--keep]
 * (--kill-gap and --deadline in real seconds.) Needs redis-server on PATH: the scenario kills its
 * own.
 */

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chaosViolations } from '../test/support/chaos/chaos-figures.js';
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

const figures = await runChaos({
  collectors: arg('collectors', 1000),
  kills: arg('kills', 30),
  timeScale: arg('time-scale', 30),
  seed: arg('seed', 12),
  maxInFlight: arg('in-flight', 60),
  meanKillGapMs: arg('kill-gap', 4) * 1000,
  deadlineMs: arg('deadline', 480) * 1000,
  keepFiles: process.argv.includes('--keep'),
  onProgress: (line) => process.stderr.write(`${line}\n`),
});
const violations = chaosViolations(figures);
process.stdout.write(`${formatChaos(figures, violations)}\n`);
// Every figure, kills and lists included, for a later look (bench/results is not committed).
const results = join(import.meta.dirname, 'results');
mkdirSync(results, { recursive: true });
const stamp = new Date().toISOString().replace(/[-:]/g, '').slice(0, 15);
const file = join(results, `chaos-${stamp}.json`);
writeFileSync(file, `${JSON.stringify({ ...figures, violations }, null, 2)}\n`);
process.stdout.write(`All figures: ${file}\n`);
process.exitCode = violations.length ? 1 : 0;
