/**
 * What a newcomer's first `run` does with the policy folder the project ships (config/policies),
 * through the built CLI (run `npm run build` first) from the project folder, against the
 * simulator over HTTP: nothing. The example policy ships `enabled: false`: with real credentials
 * it would start upgrading at once. The same file enabled does start (so the fleet here is one
 * it selects, and the quiet run says something).
 */

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { CLI, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const SHIPPED = join(ROOT, 'config', 'policies', 'linux-fleet.yaml');

let harness: Harness | undefined;
const cleanups: (() => void)[] = [];

afterEach(async () => {
  for (const undo of cleanups.splice(0)) undo();
  await harness?.close();
  harness = undefined;
});

/** Linux web hosts, a canary among them: the example policy's first wave. */
const fleet: FleetFileInput = {
  builds: ['19.400-5', '19.470-4'],
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  collectors: ['web-canary-1', 'web-2', 'api-3'].map((hostName, i) => ({
    id: i + 1,
    name: hostName,
    hostName,
    osName: 'Linux',
    version: '19.400-5',
    outcome: 'succeed' as const,
    upgradeSeconds: 30,
  })),
  behaviour: { incrementalAbove: 0 },
};

/** `run` from the project folder (the default policy folder), until `done()`; then SIGTERM. */
async function runFromRoot(h: Harness, args: string[], done: (output: string) => Promise<boolean>) {
  const child = spawn(process.execPath, [CLI, 'run', '--listen', '127.0.0.1:0', ...args], {
    cwd: ROOT,
    env: { ...h.env, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const deadline = Date.now() + 20_000;
  while (!(await done(out))) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`not seen within 20 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  expect(await exitOf(child, 20_000), out).toBe(0);
  return out;
}

describe('the policy folder the project ships', () => {
  it('config/policies/linux-fleet.yaml ships disabled: run from the project folder upgrades nothing', async () => {
    expect(readFileSync(SHIPPED, 'utf8')).toMatch(/^enabled: false$/m);
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'unused' } });
    const h = harness;

    // The shipped folder: the policy is read, and for 2 s of scheduler rounds nothing is created.
    let leadSince = 0;
    const log = await runFromRoot(h, [], async (output) => {
      if (!leadSince && /"scheduler leads"/.test(output)) leadSince = Date.now();
      return leadSince > 0 && Date.now() - leadSince > 2000;
    });
    expect(log).toMatch(/"policy":"linux-fleet","msg":"policy added"/);
    expect((await h.simStats()).requests.byEndpoint.create ?? 0).toBe(0);
    expect((await h.simStats()).tasksCreated).toBe(0);

    // The same file enabled, in a folder of its own: the canary's task is created at once.
    const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-shipped-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      join(dir, 'linux-fleet.yaml'),
      readFileSync(SHIPPED, 'utf8').replace(/^enabled: false$/m, 'enabled: true'),
    );
    await runFromRoot(h, ['--policies', dir], async () => (await h.simStats()).tasksCreated >= 1);
    const canary = (await h.simCollectors()).find((c) => c.id === 1);
    expect(canary?.tasks).toHaveLength(1);
  }, 90_000);
});
