/**
 * Many organizations, one control plane, through the built CLI: three simulator processes (three
 * deployments of the service, each with its own credentials, fleet and latest build) and one
 * `run` driving them all from one settings file.
 * - One policy whose first wave is one organization: that organization finishes its bake before
 *   any Collector of another starts; every eligible Collector of each organization ends on its
 *   organization's latest build; none has a second task; each simulator saw no 429.
 * - One organization's credentials refused and another's service down for a while: the third
 *   converges at its own pace; status (the snapshot and `status --json`), /readyz and the
 *   metrics name the two others and why; both go on by themselves once their service answers.
 */
import { type AddressInfo, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import { stopLineChildren } from '../../support/line-child.js';
import { type OrgsHarness, orgFleet, startOrgsHarness } from '../../support/orgs-harness.js';
import { exitOf } from '../../support/rollout-harness.js';

const TIME_SCALE = 120;

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

let harness: OrgsHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await stopLineChildren();
});

const only = (s: FleetStatus): RolloutStatus | undefined => s.rollouts[0];

describe('several organizations', () => {
  it('a first wave of one organization bakes before the others start; each ends on its own latest, one task each', async () => {
    harness = await startOrgsHarness({
      timeScale: TIME_SCALE,
      orgs: [
        // Collector ids repeat across organizations: each is its organization's.
        {
          name: 'staging',
          fleet: orgFleet('stg', {
            builds: ['19.400-5', '19.470-4', '19.480-2'],
            count: 6,
            from: '19.400-5',
          }),
        },
        {
          name: 'emea',
          fleet: orgFleet('emea', { builds: ['19.400-5', '19.470-4'], count: 10, from: '19.400-5' }),
        },
        {
          name: 'apac',
          fleet: orgFleet('apac', {
            builds: ['19.400-5', '19.450-12', '19.470-4'],
            count: 8,
            from: '19.450-12',
          }),
        },
      ],
      policy: {
        name: 'everywhere',
        maxInFlight: 5,
        waves: [{ select: { org: 'staging' }, bake: '10m' }, '100%'],
        verify: false,
        poll: { initial: '20s', max: '1m' },
      },
    });
    const h = harness;
    const run = h.spawnRun();
    const done = await h.waitFor((s) => only(s)?.phase === 'converged', 90_000);
    const r = only(done) as RolloutStatus;
    expect(r.id).toBe('everywhere@19.480-2');
    expect(r.builds).toEqual({ staging: '19.480-2', emea: '19.470-4', apac: '19.470-4' });
    expect(r.byOrg.map((p) => [p.org, p.build, p.done, p.total])).toEqual([
      ['staging', '19.480-2', 6, 6],
      ['emea', '19.470-4', 10, 10],
      ['apac', '19.470-4', 8, 8],
    ]);
    expect(r.counts).toEqual({ succeeded: 24 });

    // The first wave (staging) finished and baked before any Collector of another organization started.
    const history = await h.state.events.history(r.id);
    const second = history.find((e) => e.type === 'wave.started' && e.detail?.wave === 2);
    const baking = history.find((e) => e.type === 'rollout.baking');
    expect(baking?.detail).toMatchObject({ wave: 1 });
    expect(second?.at).toBeGreaterThanOrEqual(Number(baking?.detail?.until));
    const records = await h.records(r.id);
    const staging = records.filter((c) => c.org === 'staging');
    const others = records.filter((c) => c.org !== 'staging');
    expect(staging).toHaveLength(6);
    expect(others).toHaveLength(18);
    const lastStaging = Math.max(...staging.map((c) => c.finishedAt ?? Number.POSITIVE_INFINITY));
    const firstOther = Math.min(...others.map((c) => c.createSentAt ?? Number.POSITIVE_INFINITY));
    expect(firstOther).toBeGreaterThanOrEqual(lastStaging + 10 * 60_000);
    expect(firstOther).toBeGreaterThanOrEqual(second?.at ?? Number.POSITIVE_INFINITY);

    // The simulators' truth: each Collector on its organization's latest, with one task; no 429.
    for (const [org, latest] of [
      ['staging', '19.480-2'],
      ['emea', '19.470-4'],
      ['apac', '19.470-4'],
    ] as const) {
      const sim = h.orgs.get(org);
      if (!sim) throw new Error(org);
      for (const c of await sim.collectors()) {
        expect(c.version, `${org} ${c.id}`).toBe(latest);
        expect(c.tasks, `${org} ${c.id}`).toHaveLength(1);
      }
      const stats = await sim.stats();
      expect(stats.rateLimited, org).toBe(0);
    }
    run.kill('SIGTERM');
    expect(await exitOf(run, 15_000)).toBe(0);
  }, 150_000);

  it('credentials refused in one organization and a service down in another: the third converges; both are named and go on by themselves', async () => {
    harness = await startOrgsHarness({
      timeScale: TIME_SCALE,
      orgs: [
        {
          name: 'good',
          fleet: orgFleet('good', { builds: ['19.400-5', '19.470-4'], count: 8, from: '19.400-5' }),
        },
        {
          name: 'locked',
          fleet: orgFleet('locked', { builds: ['19.400-5', '19.470-4'], count: 6, from: '19.400-5' }),
        },
        {
          name: 'down',
          fleet: orgFleet('down', { builds: ['19.400-5', '19.470-4'], count: 6, from: '19.400-5' }),
        },
      ],
      policy: { name: 'fleet', maxInFlight: 6, verify: false, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    const locked = h.orgs.get('locked');
    const down = h.orgs.get('down');
    if (!locked || !down) throw new Error('orgs');
    // The vendor refuses the locked organization's credentials; the other's service is down.
    expect(await locked.send('POST', '/_sim/faults', { kind: 'unauthorized' })).toBe(201);
    expect(await down.send('POST', '/_sim/faults', { kind: 'outage' })).toBe(201);
    const port = await freePort();
    const run = h.spawnRun(`127.0.0.1:${port}`);
    const part = (s: FleetStatus, org: string) => only(s)?.byOrg.find((p) => p.org === org);
    const waiting = await h.waitFor((s) => part(s, 'good')?.done === 8 && s.orgProblems.length === 2, 90_000);
    expect(part(waiting, 'good')).toMatchObject({ done: 8, total: 8, counts: { succeeded: 8 } });
    expect(waiting.orgProblems.map((p) => [p.org, p.kind])).toEqual(
      expect.arrayContaining([
        ['locked', 'credentials'],
        ['down', 'unavailable'],
      ]),
    );
    expect(waiting.orgProblems.find((p) => p.org === 'locked')?.text).toMatch(
      /^org locked: credentials refused \(401\) since \d{4}-\d\d-\d\d \d\d:\d\d UTC$/,
    );
    expect(waiting.orgProblems.find((p) => p.org === 'down')?.text).toMatch(
      /^org down: service unavailable \(503\)/,
    );
    // No task anywhere in the two organizations while they wait; the good one's all done.
    expect((await locked.stats()).tasksCreated).toBe(0);
    expect((await down.stats()).tasksCreated).toBe(0);

    // The same through the CLI (status --json) and the daemon's /readyz.
    const status = h.spawnCli(['status', '--json']);
    expect(await exitOf(status, 20_000)).toBe(0);
    const json = JSON.parse(status.output()) as FleetStatus;
    expect(json.orgProblems.map((p) => p.org).sort()).toEqual(['down', 'locked']);
    const listen = `http://127.0.0.1:${port}`;
    const ready = await fetch(`${listen}/readyz`);
    const readyBody = (await ready.json()) as { status: string; checks: Record<string, string> };
    expect(ready.status).toBe(200);
    expect(readyBody.status).toBe('degraded');
    expect(readyBody.checks.orgs).toMatch(/org locked: .*401/);
    expect(readyBody.checks.orgs).toMatch(/org down: .*503/);
    const metrics = await (await fetch(`${listen}/metrics`)).text();
    expect(metrics).toMatch(/fleet_upgrade_api_requests_total\{org="locked",endpoint="[a-z]+",code="401"\}/);
    expect(metrics).toMatch(/fleet_upgrade_api_requests_total\{org="down",endpoint="[a-z]+",code="503"\}/);

    // Both services answer again: both parts go on by themselves and the rollout converges.
    expect(await locked.send('DELETE', '/_sim/faults')).toBe(200);
    expect(await down.send('DELETE', '/_sim/faults')).toBe(200);
    const done = await h.waitFor((s) => only(s)?.phase === 'converged', 120_000);
    expect(done.orgProblems).toEqual([]);
    expect(only(done)?.counts).toEqual({ succeeded: 20 });
    const history = (await h.state.events.history(only(done)?.id ?? '')).map((e) => [e.type, e.detail?.org]);
    expect(history).toEqual(
      expect.arrayContaining([
        ['org.waiting', 'locked'],
        ['org.waiting', 'down'],
        ['org.recovered', 'locked'],
        ['org.recovered', 'down'],
      ]),
    );
    for (const sim of [locked, down])
      for (const c of await sim.collectors()) {
        expect(c.version).toBe('19.470-4');
        expect(c.tasks).toHaveLength(1);
      }
    run.kill('SIGTERM');
    expect(await exitOf(run, 15_000)).toBe(0);
  }, 240_000);
});
