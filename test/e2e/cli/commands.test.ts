/**
 * The orchestrator's commands as a user runs them (the built CLI as child processes) against
 * the simulator and the test Redis: plan creates nothing, run --once exits 0 when everything
 * succeeded, status and report read what it recorded, a bad policy refuses to start.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CLI, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 60_000);
  return { code, out: child.output() };
}

function fleet() {
  return {
    builds: BUILDS,
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: [
      {
        id: 1,
        name: 'web-1',
        hostName: 'web-1.example',
        osName: 'Linux',
        version: '19.400-5',
        outcome: 'succeed' as const,
        upgradeSeconds: 30,
      },
      {
        id: 2,
        name: 'web-2',
        hostName: 'web-2.example',
        osName: 'Linux',
        version: '19.450-12',
        outcome: 'succeed' as const,
        upgradeSeconds: 30,
      },
      {
        id: 3,
        name: 'win-1',
        hostName: 'win-1.example',
        osName: 'Windows Server 2019',
        version: '19.400-5',
        outcome: 'succeed' as const,
        upgradeSeconds: 30,
      },
      { id: 4, name: 'db-1', hostName: 'db-1.example', osName: 'Linux', version: '19.470-4' },
    ],
    behaviour: { incrementalAbove: 0 },
  };
}

describe('fleet-upgrade commands', () => {
  it('plan shows who would move where and creates nothing', async () => {
    harness = await startHarness({
      fleet: fleet(),
      timeScale: 60,
      policy: { name: 'linux', select: { osName: ['Linux'] } },
    });
    const json = await cli(harness, ['plan', '--policy', harness.policyFile, '--json']);
    expect(json.code, json.out).toBe(0);
    const plan = JSON.parse(json.out) as {
      build: string;
      collectors: { id: number; from: string; to: string; move: string }[];
    };
    expect(plan.build).toBe('19.470-4');
    expect(plan.collectors.map((c) => [c.id, c.from, c.to, c.move])).toEqual([
      [1, '19.400-5', '19.470-4', 'upgrade'],
      [2, '19.450-12', '19.470-4', 'upgrade'],
    ]);
    const table = await cli(harness, ['plan', '--policy', harness.policyFile]);
    // Within 80 columns the target is said once, below the table; --wide gives it a column.
    expect(table.out).toMatch(/web-1\.example\s+Linux\s+19\.400-5\s+upgrade/);
    const wide = await cli(harness, ['plan', '--policy', harness.policyFile, '--wide']);
    expect(wide.out).toMatch(/web-1\.example\s+Linux\s+19\.400-5\s+19\.470-4\s+upgrade/);
    expect(table.out.replace(/\s+/g, ' ')).toMatch(
      /2 of 3 offered Collectors would move to 19\.470-4; nothing was created/,
    );
    expect((await harness.simStats()).tasksCreated).toBe(0);

    // minAge: plan decides as the daemon would, from the ages seen here (in Redis).
    const aged = join(dirname(harness.policyFile), 'aged.yaml');
    writeFileSync(aged, stringify({ name: 'aged', select: { osName: ['Linux'] }, minAge: '14d' }));
    const young = await cli(harness, ['plan', '--policy', aged, '--json']);
    expect(young.code, young.out).toBe(0);
    const waits = JSON.parse(young.out) as { builds: object; collectors: unknown[]; notes: string[] };
    expect(waits.builds).toEqual({});
    expect(waits.collectors).toEqual([]);
    expect(waits.notes).toEqual([
      expect.stringMatching(
        /^policy aged: 19\.470-4 first seen here .*; it becomes a target once 14d old, at /,
      ),
      'policy aged: no build would start now (minAge)',
    ]);
    // Without the deployment's Redis it cannot tell: what the target names, and it says so.
    const url = harness.env.REDIS_URL;
    delete harness.env.REDIS_URL;
    try {
      const blind = await cli(harness, ['plan', '--policy', aged]);
      expect(blind.code, blind.out).toBe(0);
      expect(blind.out.replace(/\s+/g, ' ')).toMatch(
        /2 of 3 offered Collectors would move to 19\.470-4; nothing was created\. policy aged has minAge; deciding as the daemon would needs the deployment's Redis, and none answers \(.*\): shown is what the target names, which the daemon may not start yet/,
      );
    } finally {
      harness.env.REDIS_URL = url;
    }
  }, 90_000);

  it('run --once exits 0 when every selected Collector succeeded; status and report show it', async () => {
    harness = await startHarness({
      fleet: fleet(),
      timeScale: 300,
      policy: { name: 'all', poll: { initial: '20s', max: '1m' } },
    });
    const run = await cli(harness, [
      'run',
      '--once',
      '--policy',
      harness.policyFile,
      '--listen',
      '127.0.0.1:0',
    ]);
    expect(run.code, run.out).toBe(0);
    expect(run.out).toMatch(/all@19\.470-4\s+converged/);
    expect(run.out).toMatch(/every selected Collector succeeded/);

    const status = await cli(harness, ['status', '--json']);
    expect(status.code, status.out).toBe(0);
    const parsed = JSON.parse(status.out) as {
      rollouts: { id: string; phase: string; counts: Record<string, number> }[];
    };
    expect(parsed.rollouts[0]).toMatchObject({
      id: 'all@19.470-4',
      phase: 'converged',
      counts: { succeeded: 3 },
    });

    const report = await cli(harness, ['report', 'all@19.470-4', '--format', 'csv']);
    expect(report.code, report.out).toBe(0);
    const lines = report.out.trim().split('\n');
    expect(lines[0]).toBe(
      'id,name,hostName,from,to,state,taskId,attempts,admissions,statusReads,discoveredAt,requestTime,finishedAt,message,retries,attemptLog,failureClass,cohort,org',
    );
    expect(lines.slice(1).map((l) => l.split(',').slice(0, 6).join(','))).toEqual([
      '1,web-1,web-1.example,19.400-5,19.470-4,succeeded',
      '2,web-2,web-2.example,19.450-12,19.470-4,succeeded',
      '3,win-1,win-1.example,19.400-5,19.470-4,succeeded',
    ]);
    const unknown = await cli(harness, ['report', 'nope@1.0-1']);
    expect(unknown.code).toBe(64);
    expect(unknown.out).toMatch(/no rollout 'nope@1\.0-1' \(known: all@19\.470-4\)/);
  }, 90_000);

  it('exit codes scripts rely on: 64 for a bad flag, 78 for a bad setting, naming it', async () => {
    harness = await startHarness({ fleet: fleet(), timeScale: 60, policy: { name: 'ok' } });
    const h = harness;
    for (const args of [
      ['run', '--time-scale', '-1'],
      ['run', '--listen', 'garbage'],
      ['worker', '--listen', 'garbage'],
    ]) {
      const r = await cli(h, args);
      expect(r.code, `${args.join(' ')}: ${r.out}`).toBe(64);
    }
    for (const [name, value] of [
      ['FLEET_UPGRADE_TICK', '0s'],
      ['FLEET_UPGRADE_STALLED_INTERVAL', '0s'],
    ] as const) {
      // The harness's environment with one setting out of its bounds.
      const bad = spawn(process.execPath, [CLI, 'run', '--policy', h.policyFile, '--listen', '127.0.0.1:0'], {
        env: { ...h.env, [name]: value },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      bad.stderr?.on('data', (d: Buffer) => {
        out += d.toString();
      });
      expect(await exitOf(bad, 30_000), out).toBe(78);
      expect(out).toContain(name);
      expect(out).toContain(`got '${value}'`);
    }
  }, 90_000);

  it('run refuses to start on an invalid policy (exit 78, naming file, line and field)', async () => {
    harness = await startHarness({ fleet: fleet(), timeScale: 60, policy: { name: 'ok' } });
    const bad = join(harness.policyFile, '..', 'bad.yaml');
    writeFileSync(bad, 'name: bad\nmaxInFlight: lots\n');
    const run = await cli(harness, ['run', '--policy', bad, '--listen', '127.0.0.1:0']);
    expect(run.code).toBe(78);
    expect(run.out).toContain(`${bad}:2:1: maxInFlight:`);
    expect((await harness.simStats()).requests.total).toBe(0);
  }, 60_000);
});
