/**
 * The daemon's problems reach the operator, through the built CLI (run `npm run build` first)
 * against the simulator over HTTP and a real Redis: a policy file that turns invalid, a target the
 * service does not offer, credentials the service refuses and a time scale that is not the
 * simulator's are each shown by `status` (text and `--json`), `status --watch`, `/status` and the
 * metrics, with what ends them; an unoffered target makes `/readyz` not ready, naming the policy,
 * and is logged once, not every tick. Each disappears once fixed (the file corrected, the build
 * released at the simulator, the key corrected, a restart at the right scale), and a daemon killed
 * with SIGKILL takes its problems with it within the expiry (15 s).
 */
import { writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import type { FleetStatus } from '../../../src/rollout/index.js';
import { PROBLEM_TTL_MS } from '../../../src/rollout/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const fleet: FleetFileInput = {
  builds: ['19.400-5', '19.470-4'],
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  collectors: [1, 2, 3].map((id) => ({
    id,
    version: '19.400-5',
    outcome: 'succeed' as const,
    upgradeSeconds: 60,
  })),
  behaviour: { incrementalAbove: 0 },
};

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 60_000);
  return { code, out: child.output() };
}

async function until<T>(
  what: string,
  look: () => Promise<T | undefined>,
  limitMs: number,
  show: () => string,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const found = await look();
    if (found !== undefined) return found;
    if (Date.now() > deadline)
      throw new Error(`${what} not seen within ${limitMs} ms:\n${show().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** `status` as JSON, then as text (a problem found in the first is in the second). */
async function status(h: Harness): Promise<{ text: string; json: FleetStatus }> {
  const json = await cli(h, ['status', '--json']);
  expect(json.code, json.out).toBe(0);
  const text = await cli(h, ['status']);
  expect(text.code, text.out).toBe(0);
  for (const line of text.out.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(80);
  return { text: text.out, json: JSON.parse(json.out) as FleetStatus };
}

/** `status` (text and JSON) once it shows a problem of the daemon. */
function problemShown(h: Harness, what: string, output: () => string) {
  return until(
    what,
    async () => {
      const s = await status(h);
      return s.json.daemonProblems.length ? s : undefined;
    },
    20_000,
    output,
  );
}

const flat = (text: string) => text.replace(/\s+/g, ' ');

/** `status --watch` until `pattern` shows (twice: it redraws), then Ctrl-C. */
async function watchShows(h: Harness, pattern: RegExp): Promise<string> {
  const watch = h.spawnCli(['status', '--watch', '--interval', '0.3']);
  await until(
    'the problem in status --watch',
    async () => ((flat(watch.output()).match(new RegExp(pattern, 'g')) ?? []).length >= 2 ? true : undefined),
    20_000,
    watch.output,
  );
  watch.kill('SIGINT');
  expect(await exitOf(watch, 20_000)).toBe(0);
  return watch.output();
}

async function get(url: string): Promise<{ status: number; text: string }> {
  const res = await fetch(url);
  return { status: res.status, text: await res.text() };
}

describe('the daemon’s problems in status, /status, /readyz and the metrics', () => {
  it('a policy file that turns invalid, then is corrected', async () => {
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'web', target: '19.470-4' } });
    const h = harness;
    const port = await freeLoopbackPort();
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', `127.0.0.1:${port}`]);
    await h.waitFor((s) => s.rollouts.length === 1, 30_000);

    writeFileSync(h.policyFile, stringify({ name: 'web', target: '19.470-4', waves: [{ size: 'abc' }] }));
    const seen = await problemShown(h, 'the invalid file in status', run.output);
    expect(seen.json.daemonProblems).toEqual([
      expect.objectContaining({
        kind: 'policy_invalid',
        file: h.policyFile,
        line: 4,
        keeping: 'web',
        reason: expect.stringMatching(/^waves\[0\]\.size: /),
        fix: expect.stringMatching(/correct the file/),
        process: expect.stringMatching(/^run on .*, pid \d+$/),
      }),
    ]);
    expect(flat(seen.text)).toContain(`policy file ${h.policyFile}:4 is invalid (since `);
    expect(flat(seen.text)).toMatch(
      /waves\[0\]\.size: .*; the daemon keeps the last valid version of policy web — correct the file: the daemon reads it again every 2 s/,
    );
    await watchShows(h, /policy file \S+:4 is invalid/);
    const sim = await get(`http://127.0.0.1:${port}/status`);
    expect(JSON.parse(sim.text).daemonProblems).toEqual([
      expect.objectContaining({ kind: 'policy_invalid' }),
    ]);
    const metrics = await get(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.text).toContain(
      `fleet_upgrade_daemon_problem{kind="policy_invalid",subject="${h.policyFile}"} 1`,
    );
    expect(metrics.text).toContain('fleet_upgrade_daemon_problems{kind="policy_invalid"} 1');
    const ready = await get(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);

    // Corrected: gone from status, the metrics and /readyz.
    writeFileSync(h.policyFile, stringify({ name: 'web', target: '19.470-4' }));
    await until(
      'the problem gone',
      async () => ((await status(h)).json.daemonProblems.length === 0 ? true : undefined),
      20_000,
      run.output,
    );
    expect((await status(h)).text).not.toMatch(/invalid/);
    expect((await get(`http://127.0.0.1:${port}/metrics`)).text).toContain(
      'fleet_upgrade_daemon_problems{kind="policy_invalid"} 0',
    );
    expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);
  }, 120_000);

  it('a policy that follows a ring no policy file defines: shown with its fix, gone once corrected', async () => {
    harness = await startHarness({
      fleet,
      timeScale: 60,
      policy: { name: 'prod', target: '19.470-4', after: { policy: 'stagng', soak: '1d' } },
    });
    const h = harness;
    const port = await freeLoopbackPort();
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', `127.0.0.1:${port}`]);
    const seen = await problemShown(h, 'the undefined ring in status', run.output);
    expect(seen.json.daemonProblems).toEqual([
      expect.objectContaining({
        kind: 'ring_undefined',
        policy: 'prod',
        after: 'stagng',
        file: h.policyFile,
        reason: expect.stringMatching(/follows ring stagng .*no build starts in it/),
        fix: `add the policy file of stagng to the daemon, or correct after.policy in ${h.policyFile}`,
      }),
    ]);
    expect(flat(seen.text)).toMatch(/policy prod \(since .*\): follows ring stagng/);
    expect(seen.json.rollouts).toEqual([]);
    const metrics = await get(`http://127.0.0.1:${port}/metrics`);
    expect(metrics.text).toContain('fleet_upgrade_daemon_problem{kind="ring_undefined",subject="prod"} 1');

    // Corrected: the problem goes, and the build starts.
    writeFileSync(h.policyFile, stringify({ name: 'prod', target: '19.470-4' }));
    await until(
      'the problem gone and the rollout started',
      async () => {
        const s = await status(h);
        return s.json.daemonProblems.length === 0 && s.json.rollouts.length === 1 ? true : undefined;
      },
      20_000,
      run.output,
    );
    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);
  }, 120_000);

  it('a target the service does not offer: /readyz names the policy, one log line, gone once released', async () => {
    harness = await startHarness({
      fleet,
      timeScale: 60,
      tickMs: 100,
      policy: { name: 'edge', target: '19.480-1' },
      env: { LOG_LEVEL: 'info' },
    });
    const h = harness;
    const port = await freeLoopbackPort();
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', `127.0.0.1:${port}`]);
    const seen = await until(
      'the unoffered target in status',
      async () => {
        const s = await status(h);
        return s.json.daemonProblems.length ? s : undefined;
      },
      30_000,
      run.output,
    );
    expect(seen.json.rollouts).toEqual([]);
    expect(seen.json.daemonProblems).toEqual([
      expect.objectContaining({
        kind: 'target_not_offered',
        policy: 'edge',
        target: '19.480-1',
        offers: ['19.400-5', '19.470-4'],
        nextCheckAt: expect.any(Number),
      }),
    ]);
    expect(flat(seen.text)).toMatch(
      /policy edge \(since [\d:]+ UTC\): its target 19\.480-1 is not offered by the service \(it offers 19\.400-5, 19\.470-4\); no rollout of it starts — set `target:` in its policy file to a build the service offers \(or `latest`\), or release 19\.480-1 at the service; the daemon looks again/,
    );
    expect(seen.text).toMatch(
      /^Simulated clock \(×60\): now \d{4}-\d\d-\d\d \d\d:\d\d UTC; every time below is on it\.$/m,
    );
    await watchShows(h, /policy edge \(since [\d:]+ UTC\): its target 19\.480-1 is not offered/);
    const ready = await get(`http://127.0.0.1:${port}/readyz`);
    expect(ready.status).toBe(503);
    expect(JSON.parse(ready.text).checks.targets).toMatch(
      /^policy edge: its target 19\.480-1 is not offered/,
    );
    expect((await get(`http://127.0.0.1:${port}/metrics`)).text).toContain(
      'fleet_upgrade_daemon_problem{kind="target_not_offered",subject="edge"} 1',
    );
    // Many ticks later (100 ms each), still one line in the log.
    await new Promise((r) => setTimeout(r, 3000));
    const said = run
      .output()
      .split('\n')
      .filter((l) => /target build is not offered/.test(l));
    expect(said, run.output()).toHaveLength(1);

    // Released at the service: the rollout starts, the problem goes, /readyz is ready.
    const released = await fetch(`${h.sim.url}/_sim/builds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: '19.480-1' }),
    });
    expect(released.status).toBe(201);
    const after = await until(
      'the rollout of the released build',
      async () => {
        const s = await status(h);
        return s.json.daemonProblems.length === 0 && s.json.rollouts.length === 1 ? s : undefined;
      },
      30_000,
      run.output,
    );
    expect(after.json.rollouts[0]?.id).toBe('edge@19.480-1');
    expect(after.text).not.toMatch(/not offered/);
    expect((await get(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect(
      run
        .output()
        .split('\n')
        .filter((l) => /target build is offered now/.test(l)),
    ).toHaveLength(1);
    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);
  }, 120_000);

  it('credentials refused: shown with what ends it; a killed daemon’s expire; a corrected key ends it', async () => {
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'all' } });
    const h = harness;
    const port = await freeLoopbackPort();
    h.env.SUMOLOGIC_ACCESSKEY = 'not-the-key';
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', `127.0.0.1:${port}`]);
    const seen = await until(
      'refused credentials in status',
      async () => {
        const s = await status(h);
        return s.json.orgProblems.length ? s : undefined;
      },
      30_000,
      run.output,
    );
    expect(seen.json.orgProblems).toEqual([
      expect.objectContaining({ org: 'default', kind: 'credentials', reason: 'credentials refused (401)' }),
    ]);
    expect(flat(seen.text)).toMatch(
      /the service: credentials refused \(401\) since [\d:]+ UTC; nothing moves until it answers — fix the access key \(SUMOLOGIC_ACCESSKEY or SUMOLOGIC_ACCESSKEY_FILE/,
    );
    expect(seen.text).not.toMatch(/other organizations/);
    expect(seen.text).not.toContain('not-the-key');
    await watchShows(h, /the service: credentials refused \(401\)/);
    const metrics = (await get(`http://127.0.0.1:${port}/metrics`)).text;
    expect(metrics).toContain('fleet_upgrade_daemon_problem{kind="credentials",subject="org default"} 1');
    expect(metrics).not.toContain('not-the-key');

    // Killed without a word: its problems go within the expiry.
    run.kill('SIGKILL');
    await exitOf(run, 10_000);
    const killedAt = Date.now();
    await until(
      'the killed daemon’s problem expired',
      async () => ((await status(h)).json.orgProblems.length === 0 ? true : undefined),
      PROBLEM_TTL_MS + 10_000,
      () => '',
    );
    expect(Date.now() - killedAt).toBeLessThan(PROBLEM_TTL_MS + 10_000);

    // The key corrected, run again: the rollout goes, nothing is said of credentials.
    h.env.SUMOLOGIC_ACCESSKEY = 'ops-secret';
    const again = h.spawnCli(['run', '--once', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    expect(await exitOf(again, 60_000), again.output()).toBe(0);
    const done = await status(h);
    expect(done.json.orgProblems).toEqual([]);
    expect(done.text).not.toMatch(/credentials/);
  }, 120_000);

  it('a time scale that is not the simulator’s: shown until the daemon stops; gone at the right scale', async () => {
    harness = await startHarness({ fleet, timeScale: 60, policy: { name: 'all' } });
    const h = harness;
    h.env.FLEET_UPGRADE_TIME_SCALE = '1';
    const run = h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    const seen = await until(
      'the time scale in status',
      async () => {
        const s = await status(h);
        return s.json.daemonProblems.length ? s : undefined;
      },
      30_000,
      run.output,
    );
    expect(seen.json.daemonProblems).toEqual([
      expect.objectContaining({ kind: 'time_scale', timeScale: 1, simulatorTimeScale: 60 }),
    ]);
    expect(flat(seen.text)).toMatch(
      /run on .*, pid \d+ \(since [\d:]+ UTC\): runs at time scale 1, the simulator at 60: every duration and the API budget are off — stop it, then start it again with FLEET_UPGRADE_TIME_SCALE=60 \(or --time-scale 60\) under a new FLEET_UPGRADE_KEY_PREFIX/,
    );
    await watchShows(h, /runs at time scale 1, the simulator at 60/);
    // Stopped: withdrawn at once.
    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);
    expect((await status(h)).json.daemonProblems).toEqual([]);

    // Started again as it says: nothing to say.
    h.env.FLEET_UPGRADE_TIME_SCALE = '60';
    h.env.FLEET_UPGRADE_KEY_PREFIX = `${h.env.FLEET_UPGRADE_KEY_PREFIX}again:`;
    const again = h.spawnCli(['run', '--policy', h.policyFile, '--listen', '127.0.0.1:0']);
    await until(
      'the rollout at the right scale',
      async () => {
        const s = await status(h);
        return s.json.rollouts.length === 1 ? s : undefined;
      },
      30_000,
      again.output,
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect((await status(h)).json.daemonProblems).toEqual([]);
    again.kill('SIGTERM');
    expect(await exitOf(again, 20_000)).toBe(0);
  }, 120_000);
});
