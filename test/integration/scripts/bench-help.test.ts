/**
 * `npm run bench -- NAME --help` (scripts/bench.mjs): what a benchmark measures and its options,
 * from the opening comment of bench/NAME.ts, with nothing started; the list of benchmarks; an
 * unknown name refused with the list. Before, `--help` was passed to the benchmark, which ignored
 * it and ran (minutes of a rollout).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..', '..', '..');
const bench = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'scripts', 'bench.mjs'), ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 20_000,
  });
const benchmarks = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));

describe('npm run bench -- --help', () => {
  it.each(benchmarks)('%s --help prints its options and starts nothing', (name) => {
    const r = bench(name, '--help');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^npm run bench -- /);
    // Its usage line, and no figure of a run.
    expect(r.stdout).toContain(`npm run bench -- ${name}`);
    expect(r.stdout).toMatch(/Run: .*npm run bench -- /);
    expect(r.stdout).not.toMatch(/^\{/m);
    expect(r.stdout).not.toMatch(/^ \*/m);
  });

  it('lists every benchmark with its first line', () => {
    const r = bench('--help');
    expect(r.status).toBe(0);
    for (const name of benchmarks) expect(r.stdout).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  });

  it('refuses an unknown benchmark with the list, exit 64', () => {
    const r = bench('no-such-bench');
    expect(r.status).toBe(64);
    expect(r.stderr).toContain('benchmarks: audit, chaos');
  });
});
