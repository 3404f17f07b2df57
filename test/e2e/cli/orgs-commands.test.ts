/**
 * The operator's view of several organizations, through the built CLI (run `npm run build`
 * first) against one simulator that plays them (`orgs:`: the credentials decide which answers;
 * Collector ids repeat across them) and a real Redis:
 * - `status` breaks a rollout down by organization (a line per organization not done, why one
 *   waits) and says above the table which organization's service has a problem and what ends it;
 *   `status --org`, `--watch`, `--json`, `report` (org column and field) and `history` (org of
 *   its events);
 * - `pause`/`resume`/`retry`/`rollback --org` act on one organization's part, and the service
 *   sees it: no create in that organization while it is paused, a retry's and a rollback's tasks
 *   only there; an organization the rollout does not cover exits 64 naming those it covers;
 * - `upgrade --collector 7 --org b` upgrades b's Collector 7 and not a's; without `--org` (the
 *   settings name several) it exits 64 naming them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import type { OrgFleetInput } from '../../../src/simulator/schema.js';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
const TIME_SCALE = 300;

let harness: SharedSimOrgs | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Organization `name` with Collectors 1..count on 19.400-5 (`failing` ids fail their first task). */
function org(
  name: string,
  count: number,
  patch: { failing?: number[]; upgradeSeconds?: number } = {},
): OrgFleetInput & { name: string } {
  return {
    name,
    builds: BUILDS,
    users: [{ accessId: `${name}-ops`, accessKey: `${name}-secret` }],
    collectors: Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      name: `${name}-${i + 1}`,
      version: '19.400-5',
      outcome: patch.failing?.includes(i + 1) ? ('fail' as const) : ('succeed' as const),
      failureCause: 'unknown' as const,
      upgradeSeconds: patch.upgradeSeconds ?? 60,
    })),
    behaviour: { incrementalAbove: 0 },
    faults: { rateLimit: { perSecond: 0, concurrent: 0 } },
  };
}

const main = (s: FleetStatus): RolloutStatus | undefined =>
  s.rollouts.find((r) => !r.id.startsWith('upgrade-') && !r.id.startsWith('rollback-'));
const part = (r: RolloutStatus | undefined, name: string) => r?.byOrg.find((p) => p.org === name);

describe('status, report and history across organizations', () => {
  it('break a rollout down by organization and name the one whose credentials are refused', async () => {
    harness = await startSharedSimOrgs({
      timeScale: TIME_SCALE,
      orgs: [
        { fleet: org('a', 4) },
        { fleet: org('b', 3) },
        { fleet: org('c', 2), accessKey: 'not-its-key' },
      ],
      policy: { name: 'spread', maxInFlight: 4, verify: false, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    h.startRun();
    const seen = await h.waitFor((s) => {
      const r = main(s);
      return part(r, 'a')?.done === 4 && part(r, 'b')?.done === 3 && part(r, 'c')?.waiting !== undefined;
    }, 60_000);
    const r = main(seen) as RolloutStatus;
    expect(r.id).toBe('spread@19.470-4');

    const status = await h.cli(['status']);
    expect(status.code, status.out).toBe(0);
    const lines = status.out.trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    // Above the table: c's problem, and what ends it.
    expect(status.out.replace(/\s+/g, ' ')).toMatch(
      /org c: credentials refused \(401\) since \d\d:\d\d(:\d\d)? UTC; its part of every rollout waits, the other organizations go on — fix its access key/,
    );
    const row = lines.findIndex((l) => l.startsWith('spread@19.470-4'));
    // c's Collectors were never found: the combined progress is a's and b's.
    expect(lines[row]).toMatch(/running\s+\[#{8}\] 7\/7/);
    // a and b are done: no line of their own; c waits, none of its Collectors found.
    expect(lines.slice(row + 1).join('\n')).toMatch(
      /^ {2}org c {2}19\.470-4 {2}\[\.{8}\] 0\/0 {2}credentials refused \(401\) since \d\d:\d\d(:\d\d)? UTC$/m,
    );
    expect(status.out).not.toMatch(/^ {2}org [ab] /m);

    const onlyB = await h.cli(['status', '--org', 'b']);
    expect(onlyB.code, onlyB.out).toBe(0);
    expect(onlyB.out).toMatch(/^ {2}org b {2}19\.470-4 {2}\[#{8}\] 3\/3$/m);
    expect(onlyB.out).not.toMatch(/org [ac]\b/);
    const unknown = await h.cli(['status', '--org', 'zz']);
    expect(unknown.code).toBe(64);
    expect(unknown.out).toMatch(/no organization 'zz' \(known: a, b, c\)/);

    // --watch draws the same, again and again.
    const watch = h.spawnCli(['status', '--watch', '--interval', '0.2', '--org', 'c']);
    const deadline = Date.now() + 15_000;
    while ((watch.output().match(/^ {2}org c /gm) ?? []).length < 2 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    watch.kill('SIGINT');
    expect(watch.output()).toMatch(/^org c: credentials refused/m);
    expect(
      (watch.output().match(/^ {2}org c {2}19\.470-4 {2}\[\.{8}\] 0\/0 /gm) ?? []).length,
    ).toBeGreaterThanOrEqual(2);

    const json = JSON.parse((await h.cli(['status', '--json'])).out) as FleetStatus;
    expect(json.rollouts[0]?.byOrg.map((p) => [p.org, p.done, p.total, p.problem ?? null])).toEqual([
      ['a', 4, 4, null],
      ['b', 3, 3, null],
      ['c', 0, 0, 'credentials'],
    ]);
    expect(json.orgProblems).toEqual([
      expect.objectContaining({ org: 'c', kind: 'credentials', reason: 'credentials refused (401)' }),
    ]);
    const focused = JSON.parse((await h.cli(['status', '--json', '--org', 'c'])).out) as FleetStatus;
    expect(focused.rollouts[0]?.byOrg.map((p) => p.org)).toEqual(['c']);

    // report: ids repeat across organizations; each row names its organization, last.
    const csv = await h.cli(['report', r.id, '--format', 'csv']);
    expect(csv.code, csv.out).toBe(0);
    const [header, ...rows] = csv.out.trimEnd().split('\n');
    expect(header?.split(',').at(-1)).toBe('org');
    expect(rows.map((l) => `${l.split(',').at(-1)}:${l.split(',')[0]}`)).toEqual([
      'a:1',
      'a:2',
      'a:3',
      'a:4',
      'b:1',
      'b:2',
      'b:3',
    ]);
    const report = JSON.parse((await h.cli(['report', r.id])).out) as {
      collectors: { id: number; org: string; state: string }[];
    };
    expect(report.collectors.filter((c) => c.org === 'b').map((c) => [c.id, c.state])).toEqual([
      [1, 'succeeded'],
      [2, 'succeeded'],
      [3, 'succeeded'],
    ]);

    // history: the event that says c waits names c in a column of its own.
    const history = await h.cli(['history', r.id]);
    expect(history.code, history.out).toBe(0);
    expect(history.out).toMatch(/org\.waiting\s+scheduler\s+org c\s+spread@19\.470-4: org c waits/);
  }, 120_000);
});

describe('operator actions scoped to one organization', () => {
  it('pause --org holds only that organization (the service sees no create there); resume --org lets it go on', async () => {
    harness = await startSharedSimOrgs({
      timeScale: TIME_SCALE,
      orgs: [
        // 10 simulated minutes each (2 s real): the pause lands while a still has Collectors to
        // start (at 120 s, 0.4 s real, a was done before the CLI had started on a busy machine).
        { fleet: org('a', 12, { upgradeSeconds: 600 }) },
        { fleet: org('b', 12, { upgradeSeconds: 600 }) },
      ],
      policy: { name: 'held', maxInFlight: 4, verify: false, poll: { initial: '30s', max: '1m' } },
    });
    const h = harness;
    h.startRun();
    const started = await h.waitFor((s) => (part(main(s), 'a')?.counts.succeeded ?? 0) >= 1, 60_000);
    const id = main(started)?.id as string;
    const paused = await h.cli(['pause', id, '--org', 'a']);
    expect(paused.code, paused.out).toBe(0);
    expect(paused.out).toMatch(/org a paused by .*@.*the other organizations go on/);
    expect((await h.cli(['pause', id, '--org', 'a'])).code).toBe(3);
    const wrong = await h.cli(['pause', id, '--org', 'zz']);
    expect(wrong.code).toBe(64);
    expect(wrong.out).toMatch(/covers no organization 'zz' \(it covers a, b\)/);

    // a's tasks under way end; then a sees no create while b goes on to its end.
    await h.waitFor((s) => part(main(s), 'a')?.inflight === 0, 30_000);
    const createdInA = (await h.simStats('a')).tasksCreated;
    await h.waitFor((s) => part(main(s), 'b')?.done === 12, 60_000);
    expect((await h.simStats('a')).tasksCreated).toBe(createdInA);
    expect(createdInA).toBeLessThan(12);
    const status = await h.cli(['status']);
    expect(status.out.replace(/\n +/g, ' ')).toMatch(
      /org a {2}19\.470-4 {2}\[[#.]{8}\] \d+\/12 paused by .* — `fleet-upgrade resume held@19\.470-4 --org a` lets it go on/,
    );

    const resumed = await h.cli(['resume', id, '--org', 'a']);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toMatch(/org a resumed by/);
    await h.waitFor((s) => main(s)?.phase === 'converged', 60_000);
    expect(main(await h.status())?.counts).toEqual({ succeeded: 24 });
    for (const name of ['a', 'b'])
      for (const c of await h.simCollectors(name)) expect(c.tasks, `${name}/${c.id}`).toHaveLength(1);
  }, 150_000);

  it('retry --org and rollback --org: new tasks only in that organization', async () => {
    harness = await startSharedSimOrgs({
      timeScale: TIME_SCALE,
      orgs: [{ fleet: org('a', 3, { failing: [3] }) }, { fleet: org('b', 3, { failing: [3] }) }],
      policy: { name: 'again', maxInFlight: 6, verify: false, poll: { initial: '20s', max: '1m' } },
    });
    const h = harness;
    h.startRun();
    const done = await h.waitFor((s) => main(s)?.phase === 'converged', 60_000);
    const id = main(done)?.id as string;
    expect(main(done)?.counts).toEqual({ succeeded: 4, failed: 2 });
    // Both Collectors 3 would succeed now; only a's is retried.
    for (const name of ['a', 'b']) expect(await h.patchCollector(name, 3, { outcome: 'succeed' })).toBe(200);
    const retried = await h.cli(['retry', id, '--only', 'failed', '--org', 'a']);
    expect(retried.code, retried.out).toBe(0);
    expect(retried.out).toMatch(/1 Collector of org a gets one new attempt \(failed\)/);
    await h.waitFor(
      (s) => part(main(s), 'a')?.counts.succeeded === 3 && main(s)?.phase === 'converged',
      60_000,
    );
    expect((await h.simCollectors('a')).find((c) => c.id === 3)?.tasks).toHaveLength(2);
    expect((await h.simCollectors('b')).find((c) => c.id === 3)?.tasks).toHaveLength(1);
    expect(part(main(await h.status()), 'b')?.counts).toEqual({ succeeded: 2, failed: 1 });
    expect((await h.cli(['retry', id, '--only', 'failed', '--org', 'zz'])).code).toBe(64);

    // b's upgraded Collectors go back to their previous build; a's stay.
    const rollback = await h.cli(['rollback', id, '--only', 'succeeded', '--org', 'b']);
    expect(rollback.code, rollback.out).toBe(0);
    expect(rollback.out).toMatch(/rollback of 2 Collectors of org b \(succeeded\)/);
    await h.waitFor(
      (s) => s.rollouts.some((r) => r.id.startsWith('rollback-') && r.phase === 'converged'),
      60_000,
    );
    const b = new Map((await h.simCollectors('b')).map((c) => [c.id, c]));
    expect([b.get(1)?.version, b.get(2)?.version]).toEqual(['19.400-5', '19.400-5']);
    const a = await h.simCollectors('a');
    expect(a.map((c) => c.version)).toEqual(['19.470-4', '19.470-4', '19.470-4']);
    expect(a.map((c) => c.tasks.length)).toEqual([1, 1, 2]);
    expect((await h.cli(['rollback', id, '--org', 'zz'])).code).toBe(64);
  }, 150_000);
});

describe('upgrade --collector of one organization', () => {
  it('upgrades b’s Collector 7 and not a’s; --org is required with several organizations', async () => {
    harness = await startSharedSimOrgs({
      timeScale: TIME_SCALE,
      orgs: [{ fleet: org('a', 8) }, { fleet: org('b', 8) }],
      // A policy that selects nothing: only the one-off moves anything.
      policy: { name: 'idle', select: { ids: [999] } },
    });
    const h = harness;
    h.startRun();
    const missing = await h.cli(['upgrade', '--collector', '7', '--to', '19.450-12']);
    expect(missing.code).toBe(64);
    expect(missing.out).toMatch(/--org is required: .*\(a, b\)/);
    const unknown = await h.cli(['upgrade', '--collector', '7', '--to', '19.450-12', '--org', 'zz']);
    expect(unknown.code).toBe(64);
    expect(unknown.out).toMatch(/no organization 'zz' \(they name a, b\)/);

    const started = await h.cli(['upgrade', '--collector', '7', '--to', '19.450-12', '--org', 'b']);
    expect(started.code, started.out).toBe(0);
    expect(started.out.replace(/\s+/g, ' ')).toMatch(/1 Collector of org b to 19\.450-12/);
    const name = /one-off rollout (upgrade-[a-z0-9-]+)/.exec(started.out)?.[1] as string;
    const id = `${name}@19.450-12`;
    const done = await h.waitFor(
      (s) => s.rollouts.some((r) => r.id === id && r.phase === 'converged'),
      60_000,
    );
    const one = done.rollouts.find((r) => r.id === id) as RolloutStatus;
    expect(one.orgs).toEqual(['b']);
    expect((await h.records(id)).map((r) => [r.org, r.id, r.state])).toEqual([['b', 7, 'succeeded']]);
    const b7 = (await h.simCollectors('b')).find((c) => c.id === 7);
    const a7 = (await h.simCollectors('a')).find((c) => c.id === 7);
    expect([b7?.version, b7?.tasks.length]).toEqual(['19.450-12', 1]);
    expect([a7?.version, a7?.tasks.length]).toEqual(['19.400-5', 0]);
    expect((await h.simStats('a')).tasksCreated).toBe(0);
  }, 90_000);
});
