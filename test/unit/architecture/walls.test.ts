/**
 * The walls between the rooms of src/, checked on every import (static, dynamic and type-only)
 * of every source file:
 * - the simulator is the vendor's service: it imports nothing of the orchestrator (lib/ only);
 * - api/ is the client of that service: it knows nothing of rollouts, workers or BullMQ;
 * - rollout/ is driven from outside: it imports nothing of worker/, cli/, http/, notify/ or metrics/;
 * - outside rollout/, a module imports rollout/ only through its door, rollout/index.ts;
 * - inside rollout/, a room imports another room only through that room's door (its index.ts);
 * - the tests and benchmarks (test/, bench/) enter rollout/ through its door, a room's door, or
 *   the test door rollout/testing.ts, which alone may reach into a room's files and which nothing
 *   in src/ imports.
 * Import cycles, type imports counted, are Biome's (`noImportCycles` with `ignoreTypes: false`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const SRC = join(ROOT, 'src');

interface Edge {
  /** The importing file, relative to src/. */
  from: string;
  /** The imported module: a file relative to src/, or a package name. */
  to: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') ? [path] : [];
  });
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])([^'"]+)\1/g;

/**
 * Every import of every file under `dir`, with relative ones resolved to paths relative to `root`
 * (src/: a file of src/ is `rollout/index.ts`, of test/ `../test/support/redis.ts`); `from` is
 * relative to `fromRoot`.
 */
function importsOf(dir: string, root = dir, fromRoot = dir): Edge[] {
  const edges: Edge[] = [];
  for (const file of sourceFiles(dir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[2] as string;
      const to = spec.startsWith('.')
        ? relative(root, resolve(dirname(file), spec))
            .replace(/\.js$/, '.ts')
            .split(sep)
            .join('/')
        : spec;
      edges.push({ from: relative(fromRoot, file).split(sep).join('/'), to });
    }
  }
  return edges;
}

const top = (path: string) => path.split('/')[0] ?? '';
const isPackage = (to: string) => !to.includes('/') || to.startsWith('@') || !/\.ts$/.test(to);
const ROLLOUT_ROOMS = [
  'collector',
  'life',
  'orgs',
  'problems',
  'tick',
  'admit',
  'gates',
  'listings',
  'operator',
  'one-off',
];
const roomOf = (path: string) => {
  const [folder, room] = path.split('/');
  return folder === 'rollout' && room && ROLLOUT_ROOMS.includes(room) ? room : undefined;
};

/** The imports that cross a wall, each as `from -> to: which wall`. */
function wallsCrossed(edges: readonly Edge[]): string[] {
  const crossed: string[] = [];
  const cross = (e: Edge, wall: string) => crossed.push(`${e.from} -> ${e.to}: ${wall}`);
  for (const e of edges) {
    const from = top(e.from);
    const pkg = isPackage(e.to);
    const to = pkg ? undefined : top(e.to);
    if (from === 'simulator' && to && to !== 'simulator' && to !== 'lib')
      cross(e, 'the simulator imports nothing of the orchestrator');
    if (from === 'api' && (e.to === 'bullmq' || (to && !['api', 'lib'].includes(to))))
      cross(e, 'api/ knows nothing of rollouts, workers or BullMQ');
    if (from === 'rollout' && to && ['worker', 'cli', 'http', 'notify', 'metrics'].includes(to))
      cross(e, 'rollout/ imports nothing of worker/, cli/, http/, notify/ or metrics/');
    if (from !== 'rollout' && to === 'rollout' && e.to !== 'rollout/index.ts')
      cross(e, 'outside rollout/, only its door rollout/index.ts');
    const a = roomOf(e.from);
    const b = pkg ? undefined : roomOf(e.to);
    if (from === 'rollout' && b && a !== b && e.to !== `rollout/${b}/index.ts` && e.from !== TEST_DOOR)
      cross(e, `another room of rollout/ only through its door rollout/${b}/index.ts`);
    if (from === 'rollout' && e.to === TEST_DOOR)
      cross(e, `nothing in src/ imports the test door ${TEST_DOOR}`);
  }
  return crossed;
}

/** The test door of rollout/: what tests alone use (it may reach into a room's files). */
const TEST_DOOR = 'rollout/testing.ts';

/** The imports of tests and benchmarks (`to` relative to src/) that cross a wall. */
function testWallsCrossed(edges: readonly Edge[]): string[] {
  const doors = new Set([
    'rollout/index.ts',
    TEST_DOOR,
    ...ROLLOUT_ROOMS.map((r) => `rollout/${r}/index.ts`),
  ]);
  return edges
    .filter((e) => e.to.startsWith('rollout/') && !doors.has(e.to))
    .map(
      (e) =>
        `${e.from} -> ${e.to}: a test enters rollout/ through its door, a room's door (rollout/<room>/index.ts) or ${TEST_DOOR}`,
    );
}

describe('the walls seen from test/ and bench/', () => {
  const edges = ['test', 'bench'].flatMap((d) => importsOf(join(ROOT, d), SRC, ROOT));

  it('reads the imports of every test (type-only and dynamic ones too)', () => {
    expect(edges.length).toBeGreaterThan(1000);
    expect(edges).toContainEqual({ from: 'test/support/redis.ts', to: 'lib/redis/create-redis.ts' });
    expect(edges.some((e) => e.from.startsWith('test/') && e.to === 'rollout/index.ts')).toBe(true);
  });

  it('no test enters rollout/ but through a door', () => {
    expect(testWallsCrossed(edges)).toEqual([]);
  });

  it('sees a test reaching into a room (the check is not a no-op)', () => {
    const into = [
      { from: 'test/unit/rollout/scheduler.test.ts', to: 'rollout/tick/scheduler.ts' },
      { from: 'test/support/rollout-harness.ts', to: 'rollout/keys.ts' },
    ];
    expect(testWallsCrossed(into)).toHaveLength(into.length);
    expect(
      testWallsCrossed([
        { from: 'test/unit/rollout/scheduler.test.ts', to: 'rollout/tick/index.ts' },
        { from: 'test/unit/rollout/ring-gate.test.ts', to: TEST_DOOR },
        { from: 'test/support/rollout-harness.ts', to: 'rollout/index.ts' },
        { from: 'test/support/redis.ts', to: 'lib/redis/create-redis.ts' },
      ]),
    ).toEqual([]);
  });
});

describe('the walls of src/', () => {
  const edges = importsOf(SRC);

  it('reads the imports of every module (type-only and dynamic ones too)', () => {
    expect(edges.length).toBeGreaterThan(500);
    expect(edges).toContainEqual({ from: 'cli/main.ts', to: 'commander' });
    expect(edges.some((e) => e.from.startsWith('rollout/') && e.to === 'rollout/life/index.ts')).toBe(true);
  });

  it('no import crosses a wall', () => {
    expect(wallsCrossed(edges)).toEqual([]);
  });

  it('sees a crossing of each wall (the check is not a no-op)', () => {
    const crossings: Edge[] = [
      { from: 'simulator/fleet-model.ts', to: 'rollout/index.ts' },
      { from: 'api/api-caller.ts', to: 'bullmq' },
      { from: 'rollout/tick/scheduler.ts', to: 'worker/poll-schedule.ts' },
      { from: 'rollout/admit/admit.ts', to: 'cli/boot/exit-codes.ts' },
      { from: 'http/create-rollout-api.ts', to: 'rollout/operator/control.ts' },
      { from: 'rollout/tick/advance-rollout.ts', to: 'rollout/gates/failure-gate.ts' },
      { from: 'worker/upgrade-processor.ts', to: TEST_DOOR },
      { from: 'rollout/tick/scheduler.ts', to: TEST_DOOR },
    ];
    expect(wallsCrossed(crossings)).toHaveLength(crossings.length);
    // Within a room, and through a door, nothing is crossed.
    expect(
      wallsCrossed([
        { from: 'rollout/tick/advance-rollout.ts', to: 'rollout/tick/move-waves.ts' },
        { from: 'rollout/tick/advance-rollout.ts', to: 'rollout/gates/index.ts' },
        { from: 'rollout/tick/scheduler.ts', to: 'rollout/keys.ts' },
        { from: TEST_DOOR, to: 'rollout/tick/ring-gate.ts' },
        { from: 'worker/upgrade-processor.ts', to: 'rollout/index.ts' },
        { from: 'simulator/fleet-model.ts', to: 'lib/random.ts' },
      ]),
    ).toEqual([]);
  });
});
