/**
 * First contact (issue #26): `npm run demo` and `npm test` build only when dist/ is older than a
 * source, so that a fresh clone, whose `npm ci` built it through `prepare`, does not sit through a
 * second tsc in silence; and `npm ci` runs with npm's warnings left out of the first screen.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { builtAfterSources } from '../../../scripts/ensure-deps.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A project folder: a source and a build, the build `buildAge` seconds older (negative: newer). */
function project(buildAge: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-build-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cli', 'main.ts'), '');
  writeFileSync(join(dir, 'dist', 'cli', 'main.js'), '');
  const now = Date.now() / 1000;
  for (const p of ['src', 'src/cli', 'src/cli/main.ts']) utimesSync(join(dir, p), now - 100, now - 100);
  utimesSync(join(dir, 'dist', 'cli', 'main.js'), now - 100 - buildAge, now - 100 - buildAge);
  return dir;
}

describe('the build before a demo or the tests', () => {
  it('is skipped when dist/ is newer than every source, done when one is newer or dist/ is missing', () => {
    expect(builtAfterSources(project(-10))).toBe(true);
    expect(builtAfterSources(project(10))).toBe(false);
    const deleted = project(-10);
    // A source removed after the build: its folder changed.
    const now = Date.now() / 1000;
    utimesSync(join(deleted, 'src', 'cli'), now, now);
    expect(builtAfterSources(deleted)).toBe(false);
    const none = project(-10);
    rmSync(join(none, 'dist'), { recursive: true });
    expect(builtAfterSources(none)).toBe(false);
  });

  it('npm ci leaves its warnings out, and the demo says what it does before it installs anything', () => {
    const ensure = readFileSync(
      join(import.meta.dirname, '..', '..', '..', 'scripts', 'ensure-deps.mjs'),
      'utf8',
    );
    expect(ensure).toMatch(/'ci', '--no-audit', '--no-fund', '--loglevel=error'/);
    const demo = readFileSync(join(import.meta.dirname, '..', '..', '..', 'scripts', 'demo.mjs'), 'utf8');
    expect(demo.indexOf('setting up')).toBeGreaterThan(-1);
    expect(demo.indexOf('setting up')).toBeLessThan(demo.indexOf('ensureDeps();'));
  });
});
