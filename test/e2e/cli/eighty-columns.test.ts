/**
 * Every human output stays within 80 columns (issue #20), through the built CLI (run `npm run
 * build` first) against the simulator and the test Redis: `status`, `plan`, `history`, `report`
 * as a table (times in ISO 8601, not epoch milliseconds) and its worklist, for a rollout with long
 * names, failures with the service's long messages and a quarantined cohort; and the demo's
 * progress and summary. `--wide` and `--json` keep the long forms.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { testRedisUrl } from '../../support/redis.js';
import { CLI, converged, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
let harness: Harness | undefined;
const cleanups: (() => void)[] = [];

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  for (const undo of cleanups.splice(0)) undo();
});

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 60_000);
  return { code, out: child.output() };
}

/** The lines of `text` longer than 80 columns, with their length (none expected). */
function tooWide(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => [...l].length > 80)
    .map((l) => `${[...l].length}: ${l}`);
}

const LONG = 'frontend-production-eu-west-1-availability-zone-b';

function fleet() {
  return {
    builds: BUILDS,
    users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
    collectors: Array.from({ length: 12 }, (_, i) => ({
      id: 100000000 + i,
      name: `${LONG}-collector-${i}`,
      hostName: `${LONG}-node-${i}.internal.example.com`,
      osName: i % 3 === 0 ? 'Windows Server 2019 Datacenter' : 'Linux',
      version: i % 2 ? '19.400-5' : '19.450-12',
      outcome: i % 4 === 3 ? ('fail' as const) : ('succeed' as const),
      failureCause: 'disk_space' as const,
      upgradeSeconds: 30,
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

describe('every human output within 80 columns', () => {
  it('status, plan, history, report (a table with ISO 8601 times) and its worklist', async () => {
    harness = await startHarness({
      fleet: fleet(),
      timeScale: 300,
      policy: {
        name: `policy-${LONG}`,
        maxInFlight: 3,
        poll: { initial: '20s', max: '1m' },
        failureGate: { failed: { max: 100 } },
      },
    });
    const h = harness;
    const plan = await cli(h, ['plan', '--policy', h.policyFile]);
    expect(plan.code, plan.out).toBe(0);
    expect(tooWide(plan.out), plan.out).toEqual([]);
    expect(plan.out).toMatch(/^ID\s+NAME\s+HOST\s+OS\s+FROM\s+MOVE\s+ALIVE$/m);
    expect(plan.out.replace(/\s+/g, ' ')).toMatch(/12 of 12 offered Collectors would move to 19\.470-4/);
    const widePlan = await cli(h, ['plan', '--policy', h.policyFile, '--wide']);
    expect(widePlan.out).toContain(`${LONG}-node-0.internal.example.com`);
    expect(widePlan.out).toMatch(/^ID\s+NAME\s+HOST\s+OS\s+FROM\s+TO\s+MOVE\s+ALIVE$/m);

    await h.startRun();
    await h.waitFor(converged, 90_000);
    const id = (await h.status()).rollouts[0]?.id as string;

    const outputs: Record<string, string> = {};
    for (const args of [
      ['status'],
      ['history', id],
      ['report', id, '--format', 'table'],
      ['report', id, '--worklist', '--format', 'table'],
    ]) {
      const r = await cli(h, args);
      expect(r.code, `${args.join(' ')}: ${r.out}`).toBe(0);
      expect(tooWide(r.out), `${args.join(' ')}:\n${r.out}`).toEqual([]);
      outputs[args.join(' ')] = r.out;
    }
    const report = outputs[`report ${id} --format table`] as string;
    expect(report).toMatch(/^ID\s+NAME\s+FROM\s+STATE\s+FINISHED$/m);
    expect(report).toMatch(
      /^100000000\s+frontend-\S*…\s+19\.450-12\s+succeeded\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/m,
    );
    expect(report).not.toMatch(/\b1\d{12}\b/);
    // Which clock: the rehearsal's simulated one (the harness runs at ×300), in the header.
    expect(report.replace(/\s+/g, ' ')).toMatch(
      /12 Collectors in the rollout to 19\.470-4; times in UTC \(ISO 8601\) on the simulated clock, ×300/,
    );
    const worklist = outputs[`report ${id} --worklist --format table`] as string;
    expect(worklist).toMatch(/^100000003\s+\S+\s+19\.400-5\s+manual\s+\S+Z\s+disk_space/m);
    // Its messages whole below each row; the command that resolves them, over lines a shell joins.
    expect(worklist).toMatch(/^100000003 .*\n {4}\S/m);
    expect(worklist.replace(/ \\\n\s+/g, ' ')).toContain(`fleet-upgrade retry ${id} --only manual`);
    const history = outputs[`history ${id}`] as string;
    expect(history.split('\n')[0]).toMatch(
      /^Simulated clock \(×300\): now .* UTC; every time below is on it\.$/,
    );
    expect(history).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}rollout\.started {2}scheduler$/m);

    // promote on the converged rollout says so, not that a wave is under way (exit 3: refused).
    const promote = await cli(h, ['promote', id]);
    expect(promote.code, promote.out).toBe(3);
    expect(promote.out).toMatch(/is converged: nothing waits to be promoted: its one wave has run/);
    expect(promote.out).not.toMatch(/under way/);

    // The long forms are still there: one line per event, every column of the report.
    const wide = await cli(h, ['history', id, '--wide']);
    expect(wide.out.split('\n').some((l) => l.length > 80)).toBe(true);
    const json = await cli(h, ['report', id]);
    expect(JSON.parse(json.out).collectors).toHaveLength(12);
  }, 180_000);

  it("the demo's progress lines, table, findings, summary and next steps", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-80-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      join(dir, 'fleet.yaml'),
      stringify({
        builds: ['19.400-5', '19.470-4'],
        users: [{ accessId: 'rehearsal', accessKey: 'rehearsal-secret' }],
        generate: { count: 40, seed: 5, hostedRatio: 0, offlineRatio: 0.1, upToDateRatio: 0 },
        behaviour: { upgradeSeconds: { median: 60, p95: 120 }, failureRatio: 0.2, stuckRatio: 0.05 },
        seed: 5,
      }),
    );
    writeFileSync(
      join(dir, 'policy.yaml'),
      stringify({
        name: 'eighty',
        target: 'latest',
        select: {},
        maxInFlight: 8,
        failureGate: { failed: { max: 100 } },
      }),
    );
    const child = spawn(
      process.execPath,
      [CLI, 'demo', '--fleet', 'fleet.yaml', '--policy', 'policy.yaml', '--time-scale', '600'],
      {
        cwd: dir,
        env: {
          PATH: process.env.PATH,
          HOME: process.env.HOME,
          REDIS_URL: testRedisUrl(),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr?.on('data', (d: Buffer) => {
      out += d.toString();
    });
    expect(await exitOf(child, 120_000), out).toBe(0);
    expect(out).toMatch(/^eighty@19\.470-4 \[[#.]{20}\] +\d+% \d+\/\d+ {2}in flight \d+\/8$/m);
    expect(out).toMatch(/^ROLLOUT\s+PHASE\s+PROGRESS\s+IN-FLIGHT\s+STATES$/m);
    expect(out).toMatch(/^Done in [\d.]+ s/m);
    expect(out).toMatch(/Next steps, from this folder:/);
    expect(tooWide(out), out).toEqual([]);
  }, 180_000);
});
