// Installs the project's dependencies when node_modules is missing or older than the lock file,
// so that `npm test` and `npm run demo` work on a fresh clone with nothing else done first.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
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
    process.stderr.write('fleet-upgrade: installing dependencies (npm ci)\n');
    run('npm', ['ci', '--no-audit', '--no-fund']);
  }
}

export function build() {
  run('npm', ['run', '--silent', 'build']);
}

export function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...options });
  if (r.error) throw r.error;
  if (r.status !== 0) process.exit(r.status ?? 1);
}
