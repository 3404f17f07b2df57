// Installs the project's dependencies when node_modules is missing or older than the lock file,
// so that `npm test` and `npm run demo` work on a fresh clone with nothing else done first.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export function ensureDeps() {
  const marker = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
  if (stale) {
    // npm ci, not npm install: it installs exactly the committed lock and never rewrites it, so a
    // fresh clone stays clean after `npm test` or `npm run demo` whatever npm the user has (npm
    // install of another npm version rewrote the lock). The lock holds the optional packages of
    // every platform, so npm ci accepts it (npm/cli#8805 was a lock without them).
    // npm's warnings (install scripts of dependencies, deprecations) are for the maintainers, not
    // for the first screen of someone trying the demo: errors only.
    process.stderr.write('fleet-upgrade: installing dependencies (npm ci, about a minute)\n');
    run('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error']);
  }
}

/**
 * Builds dist/ unless it is newer than every source (src/ and its folders, the tsconfigs, the
 * lock): `npm ci` already built it through `prepare`, and a second tsc cost a fresh clone's demo
 * over a minute of silence.
 */
export function build() {
  if (builtAfterSources()) return;
  process.stderr.write('fleet-upgrade: building (tsc, under a minute)\n');
  run('npm', ['run', '--silent', 'build']);
}

/** Whether `dir`'s dist/cli/main.js is newer than every source (a deleted file changes its folder). */
export function builtAfterSources(dir = root) {
  const main = join(dir, 'dist', 'cli', 'main.js');
  if (!existsSync(main)) return false;
  const built = statSync(main).mtimeMs;
  const sources = ['tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'src'].map((p) =>
    join(dir, p),
  );
  for (const path of [
    ...sources,
    ...readdirSync(join(dir, 'src'), { recursive: true }).map((p) => join(dir, 'src', String(p))),
  ])
    if (existsSync(path) && statSync(path).mtimeMs > built) return false;
  return true;
}

export function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}
