/**
 * One rehearsal, one clock, and every named screen within 80 columns with three organizations of
 * long names (issue #26), through the built CLI (run `npm run build` first) against one simulator
 * that plays them and a real Redis:
 * - the daemon starts well after the simulator, yet the report's `requestTime` of each task
 *   agrees with the simulator's own record of it within one poll interval (the daemon sets its
 *   clock by the simulator's, told on its answers); `fleet --live` is on the simulator's clock and
 *   says so;
 * - `plan` of a policy that selects one organization names only the build its Collectors go to
 *   (not another organization's latest); `fleet` lists that policy only where it selects some;
 * - `report --worklist`, `rollback --wait`, `fleet --live` and `status --watch` within 80
 *   columns, `status --watch` never parting a count from its state;
 * - the README's worklist example, run as printed, reads a message with commas whole.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { InventoryStore } from '../../../src/inventory/index.js';
import type { OrgFleetInput } from '../../../src/simulator/schema.js';
import { CLI } from '../../support/cli-child.js';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';

const US = 'us-east-production-frontend';
const EU = 'eu-west-production-backend';
const STAGING = 'staging-canary-ring-one';
const TIME_SCALE = 120;
const POLL_MS = 60_000;
const COMMAS = 'Upgrade failed: not enough disk space on /opt, /var and /tmp to unpack the new build.';

let harness: SharedSimOrgs | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** `name`'s Collectors 1..count on 19.400-5; `failing` ones fail for lack of disk space. */
function org(
  name: string,
  builds: string[],
  count: number,
  failing: number[],
): OrgFleetInput & { name: string } {
  return {
    name,
    builds,
    users: [{ accessId: `${name}-ops`, accessKey: `${name}-secret` }],
    collectors: Array.from({ length: count }, (_, i) => ({
      id: 100000000 + i + 1,
      name: `${name}-collector-with-a-long-name-${i + 1}`,
      version: '19.400-5',
      outcome: failing.includes(i + 1) ? ('fail' as const) : ('succeed' as const),
      failureCause: 'disk_space' as const,
      ...(failing.includes(i + 1) ? { failureMessage: COMMAS } : {}),
      upgradeSeconds: 120,
    })),
    behaviour: { incrementalAbove: 0, stopAfterUpgrade: { ratio: 0 } },
    faults: { rateLimit: { perSecond: 0, concurrent: 0 } },
  };
}

function tooWide(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => [...l].length > 80)
    .map((l) => `${[...l].length}: ${l}`);
}

describe('one clock, three organizations, 80 columns', () => {
  it('report times agree with the simulator; plan and fleet scoped; every named screen fits', async () => {
    const ALL = ['19.400-5', '19.450-12', '19.470-4'];
    harness = await startSharedSimOrgs({
      timeScale: TIME_SCALE,
      orgs: [
        { fleet: org(US, ALL, 4, [2]) },
        // EU's service offers nothing newer than 19.450-12: its latest.
        { fleet: org(EU, ['19.400-5', '19.450-12'], 4, [3]) },
        { fleet: org(STAGING, ALL, 3, [1]) },
      ],
      policy: {
        name: 'everywhere',
        target: 'latest',
        select: { org: [US, EU] },
        maxInFlight: 8,
        verify: false,
        poll: { initial: '1m', max: '1m' },
        failureGate: { failed: { max: 100 } },
      },
    });
    const h = harness;
    const canaryFile = join(dirname(h.policyFile), 'canary.yaml');
    writeFileSync(
      canaryFile,
      stringify({
        name: 'canary',
        target: 'latest',
        select: { org: STAGING },
        maxInFlight: 3,
        verify: false,
        poll: { initial: '1m', max: '1m' },
        failureGate: { failed: { max: 100 } },
      }),
    );

    // plan of the canary: only the build staging's Collectors go to.
    const plan = await h.cli(['plan', '--policy', canaryFile]);
    expect(plan.code, plan.out).toBe(0);
    expect(tooWide(plan.out), plan.out).toEqual([]);
    const said = plan.out.replace(/\s+/g, ' ');
    expect(said).toMatch(/policy canary: 3 of \d+ offered Collectors would move to 19\.470-4;/);
    expect(said).not.toMatch(/19\.450-12/);

    // The daemon starts a while after the simulator: 2 s here, 4 simulated minutes.
    await new Promise((r) => setTimeout(r, 2000));
    h.spawnCli(['run', '--policy', h.policyFile, '--policy', canaryFile, '--listen', '127.0.0.1:0']);
    const done = await h.waitFor(
      (s) => s.rollouts.length === 2 && s.rollouts.every((r) => r.phase === 'converged'),
      90_000,
    );
    const main = done.rollouts.find((r) => r.policy === 'everywhere')?.id as string;

    // One clock: each task's request time as the report has it, and as the simulator recorded it.
    const report = JSON.parse((await h.cli(['report', main])).out) as {
      collectors: { id: number; org: string; taskId?: number | string; requestTime?: number }[];
    };
    let compared = 0;
    for (const name of [US, EU]) {
      const tasks = new Map(
        (await h.simCollectors(name)).flatMap((c) => c.tasks.map((t) => [String(t.id), t] as const)),
      );
      for (const row of report.collectors.filter((c) => c.org === name && c.taskId !== undefined)) {
        const task = tasks.get(String(row.taskId)) as { requestTime: number } | undefined;
        expect(task, `${name}/${row.id}`).toBeDefined();
        expect(
          Math.abs((row.requestTime as number) - (task?.requestTime as number)),
          `${name}/${row.id}`,
        ).toBeLessThanOrEqual(POLL_MS);
        compared++;
      }
    }
    expect(compared).toBe(8);

    // fleet: the canary only where it selects some (staging).
    const store = new InventoryStore(h.redis, h.state.keys);
    const deadline = Date.now() + 60_000;
    while (!(await store.read([STAGING]))[0]?.compliance?.policies.canary?.target) {
      if (Date.now() > deadline) throw new Error('no inventory pass in time');
      await new Promise((r) => setTimeout(r, 100));
    }
    const fleet = JSON.parse((await h.cli(['fleet', '--format', 'json'])).out) as {
      policies: { policy: string; org: string }[];
    };
    expect(fleet.policies.filter((p) => p.policy === 'canary').map((p) => p.org)).toEqual([STAGING]);
    const fleetTable = await h.cli(['fleet']);
    expect(tooWide(fleetTable.out), fleetTable.out).toEqual([]);

    // fleet --live: on the simulator's clock, and saying so.
    const live = await h.cli(['fleet', '--live'], 60_000);
    expect(live.code, live.out).toBe(0);
    expect(tooWide(live.out), live.out).toEqual([]);
    const liveNow =
      /^Simulated clock \(×120\): now (\d{4}-\d\d-\d\d \d\d:\d\d) UTC; every time below is on it\.$/m.exec(
        live.out,
      );
    expect(liveNow, live.out).not.toBeNull();
    const shown = Date.parse(`${String(liveNow?.[1]).replace(' ', 'T')}:00Z`);
    expect(Math.abs(h.sim.clock.now() - shown)).toBeLessThan(5 * 60_000);

    // The worklist of three organizations' Collectors, on a terminal's 80 columns.
    const worklist = await h.cli(['report', main, '--worklist', '--format', 'table']);
    expect(worklist.code, worklist.out).toBe(0);
    expect(tooWide(worklist.out), worklist.out).toEqual([]);
    expect(worklist.out).toMatch(new RegExp(`^org ${US}$`, 'm'));
    expect(worklist.out).toMatch(new RegExp(`^org ${EU}$`, 'm'));

    // The README's worklist example as printed: the message with commas comes out whole.
    const readme = readFileSync(join(import.meta.dirname, '..', '..', '..', 'README.md'), 'utf8');
    const example = /^\$ (\.\/bin\/fleet-upgrade\.js report --worklist --format \S+ \| .*)$/m.exec(
      readme,
    )?.[1];
    expect(example).toBeDefined();
    const command = (example as string)
      .replace('./bin/fleet-upgrade.js', `'${process.execPath}' '${CLI}'`)
      .replace('report --worklist', `report ${main} --worklist`);
    const rows = execFileSync('sh', ['-c', command], { env: h.env, encoding: 'utf8' }).trim().split('\n');
    expect(rows).toContain(`100000002,"${US}-collector-with-a-long-name-2","disk_space","${COMMAS}"`);

    // rollback --wait: its request and its account, within 80 columns.
    const rollback = await h.cli(
      ['rollback', main, '--only', 'succeeded', '--org', US, '--wait', '60'],
      90_000,
    );
    expect(rollback.code, rollback.out).toBe(0);
    expect(tooWide(rollback.out), rollback.out).toEqual([]);
    expect(rollback.out.replace(/\s+/g, ' ')).toMatch(/rolled back/);

    // A fault the simulator dates is shown in status at that time, on the same clock.
    const faults = `${h.sim.url}/_sim/faults?org=${encodeURIComponent(EU)}`;
    const on = await fetch(faults, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ kind: 'unauthorized' }),
    });
    expect(on.status, await on.text()).toBeLessThan(300);
    const listed = (await (await fetch(faults)).json()) as { faults: { since: number }[] };
    const faultSince = listed.faults[0]?.since as number;
    const seen = await h.waitFor((s) => s.orgProblems.some((p) => p.org === EU), 60_000);
    const problem = seen.orgProblems.find((p) => p.org === EU) as { since: number };
    // Seen at the daemon's next request to EU's service: after the simulator dated the fault, and
    // before the simulator's now (on a clock of its own, the daemon put it 14 minutes earlier).
    expect(problem.since - faultSince).toBeGreaterThanOrEqual(-5_000);
    expect(problem.since).toBeLessThanOrEqual(h.sim.clock.now() + 5_000);
    const faulty = await h.cli(['status']);
    expect(tooWide(faulty.out), faulty.out).toEqual([]);
    const hhmm = new Date(problem.since).toISOString().slice(11, 16);
    expect(faulty.out.replace(/\s+/g, ' ')).toContain(`org ${EU}: credentials refused (401) since ${hhmm}`);
    expect(faulty.out).toMatch(/^Simulated clock \(×120\): now /m);

    // status --watch: two frames, within 80 columns, each count beside its state.
    const watch = h.spawnCli(['status', '--watch', '--interval', '0.2']);
    const until = Date.now() + 15_000;
    while (watch.output().split('ROLLOUT ').length < 3 && Date.now() < until)
      await new Promise((r) => setTimeout(r, 100));
    watch.kill('SIGINT');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the watch's clear-screen codes
    const frames = watch.output().replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    expect(frames).toMatch(/^ROLLOUT\s+PHASE/m);
    expect(tooWide(frames), frames).toEqual([]);
    for (const line of frames.split('\n'))
      if (/^ {2}also /.test(line) || /^ {4}\d/.test(line))
        expect(line.trim(), line).toMatch(/^(also )?(\d+ [a-z_]+ ?)+$/);
  }, 240_000);
});
