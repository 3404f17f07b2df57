/**
 * A command-line tool from Debian's packages for the deploy tests (docker-compose, kubectl): found
 * on PATH (or in /usr/bin), or, as root with apt-get, installed, serialized with flock on the lock
 * that test/support/prometheus.ts uses (several test files may ask at once), and looked for again
 * inside the lock. `ensureDebianTool` answers the path, or one sentence saying why the tool cannot
 * be had here, for a test to fail or skip with.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable } from '../../src/lib/redis/redis-server.js';
import { run } from './prometheus.js';

export type DebianTool = { ok: true; path: string } | { ok: false; reason: string };

const APT_LOCK = join(tmpdir(), 'fleet-upgrade-apt.lock');

function find(binary: string, env: NodeJS.ProcessEnv): string | undefined {
  return findExecutable(binary, env) ?? (existsSync(`/usr/bin/${binary}`) ? `/usr/bin/${binary}` : undefined);
}

const ensured = new Map<string, Promise<DebianTool>>();

/** Finds `binary`, or installs Debian's `aptPackage` for it (as root); once per test process. */
export function ensureDebianTool(
  binary: string,
  aptPackage: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<DebianTool> {
  let pending = ensured.get(binary);
  if (!pending) {
    pending = install(binary, aptPackage, env);
    ensured.set(binary, pending);
  }
  return pending;
}

async function install(binary: string, aptPackage: string, env: NodeJS.ProcessEnv): Promise<DebianTool> {
  const found = find(binary, env);
  if (found) return { ok: true, path: found };
  const howTo = `run \`apt-get install ${aptPackage}\` as root (the tests do it themselves when run as root with apt-get), or put ${binary} on PATH`;
  if (process.getuid?.() !== 0 || !findExecutable('apt-get', env) || !findExecutable('flock', env)) {
    return {
      ok: false,
      reason: `${binary} is not installed and cannot be installed here (not root, or no apt-get): ${howTo}.`,
    };
  }
  const script = [
    `command -v ${binary} >/dev/null 2>&1 && exit 0`,
    `apt-get update -q && apt-get install -y -q --no-install-recommends ${aptPackage}`,
  ].join('\n');
  const result = await run('flock', [APT_LOCK, 'sh', '-c', script], {
    env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
    timeoutMs: 600_000,
  });
  const installed = find(binary, env);
  if (installed) return { ok: true, path: installed };
  const output = result.output.trim().split('\n').slice(-3).join(' ');
  return {
    ok: false,
    reason: `apt-get install ${aptPackage} failed (exit ${result.code}: ${output}): ${howTo}.`,
  };
}
