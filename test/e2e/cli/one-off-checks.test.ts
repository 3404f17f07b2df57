/**
 * One-offs that cannot do what they say (issue #19, E and F), through the built CLI against the
 * simulator over HTTP and real Redis:
 * - E: `upgrade --collector` of a hosted or unknown Collector is named per id and exits 2 when the
 *   command can ask the service; when it cannot (no key where it runs), the daemon finds out: the
 *   one-off's first scan names them in `status`, `report` and `history`.
 * - F: `upgrade --to BUILD` of a build the service does not offer is refused (exit 64, nothing
 *   written) when the command can ask; otherwise the daemon shows it in `status` with its reason,
 *   looks again only after a growing wait, and `abort` removes it.
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { CLI, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
let harness: Harness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** Collectors 1..5 installable on 19.400-5; 6 hosted. */
const fleet: FleetFileInput = {
  builds: BUILDS,
  users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
  collectors: [
    ...Array.from({ length: 5 }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 60,
    })),
    { id: 6, version: '19.400-5', type: 'Hosted' as const },
  ],
  behaviour: { incrementalAbove: 0 },
};

/** A command of the built CLI to its end; `keyless`: without the organization's key (it cannot ask the service). */
async function cli(
  h: Harness,
  args: string[],
  keyless = false,
): Promise<{ code: number | null; out: string }> {
  const env = { ...h.env };
  if (keyless) delete env.SUMOLOGIC_ACCESSKEY;
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const code = await exitOf(child, 30_000);
  return { code, out };
}

const policy = { name: 'only-one', select: { ids: [1] }, poll: { initial: '20s', max: '1m' } };

describe('one-offs that cannot be done as asked', () => {
  it('asked where the service answers: hosted and unknown ids named with exit 2, an unoffered build refused with exit 64', async () => {
    harness = await startHarness({ timeScale: 300, fleet, policy });
    const h = harness;
    const named = await cli(h, ['upgrade', '--collector', '2,6,99', '--to', '19.450-12']);
    expect(named.code, named.out).toBe(2);
    expect(named.out).toMatch(/\b6\b.*hosted/);
    expect(named.out).toMatch(/\b99\b.*(not found|unknown)/);
    expect(named.out).toMatch(/one-off rollout upgrade-[a-z0-9-]+@19\.450-12: 1 Collectors? /);
    const stored = Object.values(await h.redis.hgetall(h.keys.oneOffs));
    expect(stored).toHaveLength(1);
    expect(JSON.parse(stored[0] as string).policy.select).toEqual({ ids: [2] });

    const refused = await cli(h, ['upgrade', '--collector', '3', '--to', '19.999-1']);
    expect(refused.code, refused.out).toBe(64);
    expect(refused.out).toMatch(/19\.999-1/);
    expect(refused.out).toMatch(/19\.470-4/); // the builds it does offer
    expect(Object.keys(await h.redis.hgetall(h.keys.oneOffs))).toHaveLength(1);
  }, 60_000);

  it('asked where the service cannot be: the daemon names the hosted and unknown ids in status, report and history', async () => {
    harness = await startHarness({ timeScale: 300, fleet, policy });
    const h = harness;
    const started = await cli(h, ['upgrade', '--collector', '2,6,99', '--to', '19.450-12'], true);
    expect(started.code, started.out).toBe(0);
    expect(started.out).toMatch(/could not ask the service/);
    const name = /one-off rollout (upgrade-[a-z0-9-]+)/.exec(started.out)?.[1] as string;
    const id = `${name}@19.450-12`;
    await h.startRun();
    const done = await h.waitFor(
      (s) => s.rollouts.some((r) => r.id === id && r.phase === 'converged' && r.unmatched !== undefined),
      60_000,
    );
    const r = done.rollouts.find((x) => x.id === id);
    expect(r?.counts).toEqual({ succeeded: 1 });
    expect(r?.unmatched).toEqual([
      { id: 6, finding: 'hosted' },
      { id: 99, finding: 'not_found' },
    ]);
    const sim = new Map((await h.simCollectors()).map((c) => [c.id, c]));
    expect(sim.get(6)?.tasks).toEqual([]);
    const status = await cli(h, ['status', '--wide']);
    expect(status.out).toMatch(
      /named but not upgraded by it: hosted[^;]*: 6; not found in the organization: 99/,
    );
    const report = await cli(h, ['report', id, '--format', 'csv']);
    expect(report.out).toMatch(/^6,.*,unmatched,.*hosted/m);
    expect(report.out).toMatch(/^99,.*,unmatched,.*not found/m);
    const history = await cli(h, ['history', id]);
    // history wraps its lines within 80 columns: the sentence read back whole.
    expect(history.out.replace(/\s+/g, ' ')).toMatch(/2 named Collectors are not upgraded by it/);
  }, 90_000);

  it('an unoffered build the command could not check: shown in status with its reason, looked at with a growing wait, removed by abort', async () => {
    harness = await startHarness({ timeScale: 300, fleet, policy });
    const h = harness;
    const started = await cli(h, ['upgrade', '--collector', '3', '--to', '19.999-1'], true);
    expect(started.code, started.out).toBe(0);
    const name = /one-off rollout (upgrade-[a-z0-9-]+)/.exec(started.out)?.[1] as string;
    await h.startRun();
    // Two looks at least: the wait after the second is longer than after the first.
    const waited = await h.waitFor(
      (s) => (s.oneOffs.find((o) => o.name === name)?.notStarted?.looks ?? 0) >= 2,
      60_000,
    );
    const view = waited.oneOffs.find((o) => o.name === name);
    expect(view?.notStarted?.reason).toMatch(/does not offer build 19\.999-1/);
    const wait = view?.notStarted as { since: number; nextLookAt?: number; looks: number };
    expect(wait.nextLookAt).toBeDefined();
    const status = await cli(h, ['status']);
    expect(status.code).toBe(0);
    expect(status.out).toMatch(new RegExp(`one-off ${name}@19\\.999-1 \\(1 Collector\\): not started`));
    expect(status.out).toMatch(/looks again at/);
    const json = JSON.parse((await cli(h, ['status', '--json'])).out) as { oneOffs: { name: string }[] };
    expect(json.oneOffs.map((o) => o.name)).toContain(name);
    // No rollout, no task.
    expect((await h.status()).rollouts.map((r) => r.id)).toEqual(['only-one@19.470-4']);
    expect((await h.simCollectors()).find((c) => c.id === 3)?.tasks).toEqual([]);

    const aborted = await cli(h, ['abort', name]);
    expect(aborted.code, aborted.out).toBe(0);
    expect(await h.redis.hget(h.keys.oneOffs, name)).toBeNull();
    const after = await cli(h, ['status']);
    expect(after.out).not.toMatch(new RegExp(name));
  }, 90_000);
});
