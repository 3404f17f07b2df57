/**
 * The demo's last words, through the built CLI (run `npm run build` first): it ends with next
 * steps whose commands work as printed. Each printed command is run here as a user would from
 * the folder (only the two TCP ports are swapped for free ones): the simulator, `run` with the
 * environment the step names and its metrics URL, `status --watch` reading that run; and the
 * last step names the demo again with the files it was given.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { findExecutable, freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import { serversGone } from '../../support/redis-processes.js';
import { CLI, exitOf } from '../../support/rollout-harness.js';

const cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const undo of cleanups.splice(0).reverse()) await undo();
});

/** `fleet-upgrade <args>` in `cwd` with exactly `env` (and PATH, HOME), as a user's shell runs it. */
function fleetUpgrade(cwd: string, env: NodeJS.ProcessEnv, args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  cleanups.push(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    await exitOf(child, 15_000).catch(() => child.kill('SIGKILL'));
  });
  return Object.assign(child, { output: () => out });
}

async function until(
  what: string,
  check: () => boolean | Promise<boolean>,
  limitMs: number,
  show: () => string,
) {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline)
      throw new Error(`${what} not seen within ${limitMs} ms:\n${show().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A printed command split as a shell would (the demo quotes nothing here: no spaces in the paths). */
function words(line: string, cwd: string): { env: Record<string, string>; args: string[] } {
  const all = line.trim().split(/\s+/);
  const env: Record<string, string> = {};
  while (all[0] && /^[A-Z_]+=/.test(all[0])) {
    const [name, ...value] = (all.shift() as string).split('=');
    env[name as string] = value.join('=');
  }
  // The command is this CLI's own entry as a path from the folder the demo ran in (issue #26: a
  // local path starts at once, where a first `npx fleet-upgrade` took half a minute).
  expect(resolve(cwd, all[0] as string)).toBe(resolve(CLI));
  return { env, args: all.slice(1) };
}

const hasRedisServer = findExecutable('redis-server') !== undefined;

describe.skipIf(!hasRedisServer)('npm run demo ends with next steps that work as printed', () => {
  it('simulate, run with its environment, the metrics URL, status --watch, and the demo again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-demo-steps-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const fleetFile = join(dir, 'fleet.yaml');
    const policyFile = join(dir, 'policy.yaml');
    writeFileSync(
      fleetFile,
      stringify({
        builds: ['19.400-5', '19.470-4'],
        users: [{ accessId: 'rehearsal', accessKey: 'rehearsal-secret' }],
        generate: { count: 12, seed: 3, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
        behaviour: { upgradeSeconds: { median: 60, p95: 120 }, failureRatio: 0, stuckRatio: 0 },
        seed: 3,
      }),
    );
    writeFileSync(policyFile, stringify({ name: 'steps', target: 'latest', select: {}, maxInFlight: 4 }));

    const demo = fleetUpgrade(dir, {}, ['demo', '--fleet', fleetFile, '--policy', policyFile]);
    expect(await exitOf(demo, 90_000), demo.output()).toBe(0);
    const text = demo.output();
    const steps = text.slice(text.indexOf('Next steps'));
    expect(steps, text).toMatch(/^Next steps, from this folder:\n {2}1\. /);
    const lines = steps.split('\n');
    // A command printed over several lines (each but the last ending in ` \`) read back as one.
    const line = (pattern: RegExp) => {
      const at = lines.findIndex((l) => pattern.test(l));
      expect(at, steps).toBeGreaterThanOrEqual(0);
      let from = at;
      while (from > 0 && lines[from - 1]?.endsWith(' \\')) from--;
      let to = at;
      while (lines[to]?.endsWith(' \\')) to++;
      return lines
        .slice(from, to + 1)
        .map((l) => l.replace(/ \\$/, '').trim())
        .join(' ');
    };

    // 1. The simulator as printed, on a free port instead of 8080.
    const simPort = await freeLoopbackPort();
    const simulate = words(line(/fleet-upgrade(\.js)? simulate /), dir);
    expect(simulate.args).toEqual([
      'simulate',
      '--fleet',
      fleetFile,
      '--time-scale',
      '120',
      '--port',
      '8080',
    ]);
    const sim = fleetUpgrade(
      dir,
      simulate.env,
      simulate.args.map((a) => (a === '8080' ? String(simPort) : a)),
    );
    await until('the simulator', () => /simulator listening/.test(sim.output()), 20_000, sim.output);

    // `run` with the environment the step names (the simulator's port swapped, its metrics too).
    const metricsPort = await freeLoopbackPort();
    const run = words(line(/fleet-upgrade(\.js)? run /), dir);
    expect(run.env).toEqual({
      SUMOLOGIC_BASE_URL: 'http://127.0.0.1:8080/api/v1',
      SUMOLOGIC_ACCESSID: 'rehearsal',
      SUMOLOGIC_ACCESSKEY: 'rehearsal-secret',
      FLEET_UPGRADE_TIME_SCALE: '120',
    });
    expect(run.args).toEqual(['run', '--policy', policyFile]);
    const daemon = fleetUpgrade(
      dir,
      {
        ...run.env,
        SUMOLOGIC_BASE_URL: `http://127.0.0.1:${simPort}/api/v1`,
        FLEET_UPGRADE_LISTEN: `127.0.0.1:${metricsPort}`,
      },
      run.args,
    );

    // 2. The metrics URL it names (port 9464 is run's default), and status --watch.
    expect(line(/Open its metrics at/)).toContain('http://127.0.0.1:9464/metrics');
    await until(
      'the metrics of the rollout',
      async () => {
        const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`).catch(() => undefined);
        return (
          res?.status === 200 &&
          /fleet_upgrade_collectors\{[^}]*rollout="steps@19\.470-4"/.test(await res.text())
        );
      },
      30_000,
      daemon.output,
    );
    const status = words(line(/fleet-upgrade(\.js)? status /), dir);
    expect(status).toEqual({ env: {}, args: ['status', '--watch'] });
    const watch = fleetUpgrade(dir, status.env, status.args);
    await until(
      'the rollout in status',
      () => /steps@19\.470-4\s+(running|converged)/.test(watch.output()),
      30_000,
      watch.output,
    );
    expect(watch.output()).not.toMatch(/No daemon is running/);
    watch.kill('SIGINT');
    expect(await exitOf(watch, 20_000)).toBe(0);
    daemon.kill('SIGTERM');
    expect(await exitOf(daemon, 20_000), daemon.output()).toBe(0);
    expect(daemon.output()).not.toMatch(/time scale differs/);
    expect(await serversGone(join(dir, '.data', 'redis'), 5000)).toEqual([]);

    // 3. The demo again, with the files it was given (its time scale is the default).
    expect(line(/npm run demo/).trim()).toBe(`npm run demo -- --fleet ${fleetFile} --policy ${policyFile}`);
    expect(line(/^ {2}3\. Edit /)).toContain(`Edit ${policyFile} `);
  }, 180_000);
});
