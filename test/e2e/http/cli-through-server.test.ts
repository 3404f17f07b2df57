/**
 * The CLI through a daemon (issue #28, the rest of "every control command and every read takes
 * `--server`"): `run` of the built CLI with `access:`, two simulator organizations (emea, apac)
 * and the test Redis. `upgrade --server` prints what `upgrade` prints on Redis and exits the same
 * (0, 2, 3, 64), 77 when refused; `status --watch --server` draws what the local `status --watch`
 * draws, says so in one sentence when the daemon goes away and draws again when it is back, and
 * ends on Ctrl-C as the local one does; a viewer and an operator of emea read only emea's rollouts
 * and parts.
 */

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import type { CliChild } from '../../support/cli-child.js';
import { type OrgsHarness, orgFleet, startOrgsHarness } from '../../support/orgs-harness.js';
import { freePort } from '../../support/redis-topology.js';
import { exitOf } from '../../support/rollout-harness.js';
import { waitUntil } from '../../support/wait-until.js';

const TOKENS = {
  vic: 'vic-token-0123456789abcdef0',
  olga: 'olga-token-0123456789abcdef',
  ada: 'ada-token-0123456789abcdef0',
} as const;
const ID = 'fleet@19.470-4';

let h: OrgsHarness;
let run: CliChild;
let url: string;
let listen: string;

/** The built CLI as `who` through `--server` (FLEET_UPGRADE_SERVER), or on Redis (`who` undefined). */
async function cli(
  who: keyof typeof TOKENS | undefined,
  args: string[],
): Promise<{ code: number | null; out: string }> {
  const child = spawnAs(who, args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

function spawnAs(who: keyof typeof TOKENS | undefined, args: string[]): CliChild {
  if (who) {
    h.env.FLEET_UPGRADE_TOKEN = TOKENS[who];
    h.env.FLEET_UPGRADE_SERVER = url;
  }
  const child = who ? h.spawnCli(args) : h.spawnCli([...args, '--config', h.settingsFile]);
  delete h.env.FLEET_UPGRADE_TOKEN;
  delete h.env.FLEET_UPGRADE_SERVER;
  return child;
}

const rolloutOf = (s: FleetStatus): RolloutStatus | undefined => s.rollouts.find((r) => r.id === ID);

/** Ids of `org` still on the first build (the rollout's second wave waits for an approval). */
async function untouched(org: string): Promise<number[]> {
  const all = await h.orgs.get(org)?.collectors();
  return (all ?? []).filter((c) => c.version === '19.400-5').map((c) => c.id);
}

/** The one-off's generated name (`upgrade-<time>-<tag>`) is the one part that differs. */
const named = (out: string) => out.replace(/upgrade-[0-9a-z-]+/g, 'upgrade-NAME');

beforeAll(async () => {
  h = await startOrgsHarness({
    orgs: [
      { name: 'emea', fleet: orgFleet('emea', { count: 6, upgradeSeconds: 60 }) },
      { name: 'apac', fleet: orgFleet('apac', { count: 4, upgradeSeconds: 60 }) },
    ],
    policy: {
      name: 'fleet',
      maxInFlight: 8,
      verify: false,
      poll: { initial: '20s', max: '1m' },
      waves: [{ size: 2, approval: 'manual' }, '100%'],
    },
    timeScale: 300,
  });
  const dir = dirname(h.settingsFile);
  const settings = parse(readFileSync(h.settingsFile, 'utf8')) as Record<string, unknown>;
  const file = (name: keyof typeof TOKENS) => {
    const path = join(dir, `${name}.token`);
    writeFileSync(path, `${TOKENS[name]}\n`, { mode: 0o600 });
    return path;
  };
  settings.access = {
    users: [
      { name: 'vic', tokenFile: file('vic'), role: 'viewer', orgs: ['emea'] },
      { name: 'olga', tokenFile: file('olga'), role: 'operator', orgs: ['emea'] },
      { name: 'ada', tokenFile: file('ada'), role: 'admin' },
    ],
  };
  writeFileSync(h.settingsFile, stringify(settings));
  listen = `127.0.0.1:${await freePort()}`;
  url = `http://${listen}`;
  run = h.spawnRun(listen);
  // The first wave (2 Collectors) done, the second waits for a promote.
  await h.waitFor((s) => rolloutOf(s)?.wave?.waitingFor === 'approval', 60_000);
}, 90_000);

afterAll(async () => {
  await h?.close();
});

describe('upgrade --server', () => {
  it('prints what upgrade prints on Redis, with the same exit codes', async () => {
    const [a, b, c, d] = await untouched('emea');
    expect(d, 'four emea Collectors on the first build').toBeDefined();
    // Written, one named Collector unknown there: 2, its sentence, the one-off's id.
    const remote = await cli('olga', [
      'upgrade',
      '--collector',
      `${a},999`,
      '--to',
      '19.470-4',
      '--org',
      'emea',
    ]);
    const local = await cli(undefined, [
      'upgrade',
      '--collector',
      `${b},999`,
      '--to',
      '19.470-4',
      '--org',
      'emea',
    ]);
    expect([remote.code, local.code], `${remote.out}\n${local.out}`).toEqual([2, 2]);
    expect(remote.out).toMatch(/999/);
    expect(remote.out).toMatch(
      /one-off rollout upgrade-\S+@19\.470-4: 1 Collector of org emea\s+to 19\.470-4/,
    );
    expect(named(remote.out)).toBe(named(local.out));
    // latest, pinned to the build the service names: 0.
    const latest = await cli('olga', [
      'upgrade',
      '--collector',
      String(c),
      '--to',
      'latest',
      '--org',
      'emea',
    ]);
    const latestHere = await cli(undefined, [
      'upgrade',
      '--collector',
      String(d),
      '--to',
      'latest',
      '--org',
      'emea',
    ]);
    expect([latest.code, latestHere.code], latest.out).toEqual([0, 0]);
    expect(latest.out).toMatch(/\(latest now\)/);
    expect(named(latest.out)).toBe(named(latestHere.out));
    // Nothing left to upgrade: nothing written, 3.
    const none = ['upgrade', '--collector', '998,997', '--to', '19.470-4', '--org', 'emea'];
    const [noneRemote, noneLocal] = [await cli('olga', none), await cli(undefined, none)];
    expect([noneRemote.code, noneLocal.code], noneRemote.out).toEqual([3, 3]);
    expect(noneRemote.out).toMatch(
      /no one-off started: none of the 2 Collectors of org emea can be upgraded/,
    );
    expect(noneRemote.out).toBe(noneLocal.out);
    // A build the service does not offer, an organization it does not know, none named: 64.
    for (const args of [
      ['--to', '19.999-9', '--org', 'emea'],
      ['--to', '19.470-4', '--org', 'nowhere'],
      ['--to', '19.470-4'],
    ]) {
      const ask = ['upgrade', '--collector', String(a), ...args];
      const [there, here] = [await cli('olga', ask), await cli(undefined, ask)];
      expect([there.code, here.code], `${there.out}\n${here.out}`).toEqual([64, 64]);
      expect(there.out).toBe(here.out);
    }
    // Refused: a viewer, an operator of another organization: 77, nothing written.
    const viewer = await cli('vic', [
      'upgrade',
      '--collector',
      String(a),
      '--to',
      '19.470-4',
      '--org',
      'emea',
    ]);
    expect(viewer.code).toBe(77);
    expect(viewer.out).toMatch(/vic is a viewer: upgrade needs the role operator/);
    const apac = await cli('olga', ['upgrade', '--collector', '100', '--to', '19.470-4', '--org', 'apac']);
    expect(apac.code).toBe(77);
    expect(apac.out).toMatch(/olga may upgrade only in emea: missing the organization apac/);
    // The one-offs through the daemon are olga's in the audit trail.
    const audit = await cli('ada', ['audit', '--user', 'olga', '--format', 'json']);
    const upgrades = audit.out
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { what: string; answer: string })
      .filter((e) => e.what === 'upgrade');
    expect(upgrades.filter((e) => e.answer === 'allowed')).toHaveLength(2);
  }, 90_000);
});

/** What a GET answered: its status, text and the parts of its JSON the assertions read. */
interface ReadAnswer {
  status: number;
  text: string;
  json?: { rollouts?: RolloutStatus[]; byOrg?: { org: string }[]; error?: { message: string } };
}

/** GET `path` as `who`. */
async function read(who: keyof typeof TOKENS, path: string): Promise<ReadAnswer> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${TOKENS[who]}` } });
  const text = await res.text();
  let json: ReadAnswer['json'];
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text };
}

const jsonLines = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { who: string; what: string; orgs?: string[] });

describe('reads scoped to the organizations of a person', () => {
  it('shows a viewer or an operator of emea only emea: its part of a rollout of both, none of apac', async () => {
    // An apac one-off, and a pause of apac's part (history): neither is emea's to see.
    const apacOnly = await cli('ada', ['upgrade', '--collector', '103', '--to', '19.470-4', '--org', 'apac']);
    expect(apacOnly.code, apacOnly.out).toBe(0);
    const apacId = /one-off rollout (\S+@19\.470-4)/.exec(apacOnly.out)?.[1] as string;
    expect((await cli('ada', ['pause', ID, '--org', 'apac'])).code).toBe(0);
    expect((await cli('ada', ['resume', ID, '--org', 'apac'])).code).toBe(0);

    // status: what the local `status --org emea` shows, for vic and olga alike.
    const local = await cli(undefined, ['status', '--json', '--org', 'emea']);
    for (const who of ['vic', 'olga'] as const) {
      const remote = await cli(who, ['status', '--json']);
      expect(remote.code, remote.out).toBe(0);
      const [a, b] = [JSON.parse(remote.out), JSON.parse(local.out)];
      // The scheduler's scans go on between the two reads: all else is the same.
      const still = (rs: RolloutStatus[]) => rs.map(({ lastScanAt: _, scans: __, ...r }) => r);
      expect(still(a.rollouts), who).toEqual(still(b.rollouts));
      expect(a.oneOffs).toEqual(b.oneOffs);
      expect(a.orgProblems).toEqual(b.orgProblems);
      const fleet = (a.rollouts as RolloutStatus[]).find((r) => r.id === ID);
      expect(fleet?.byOrg.map((p) => p.org)).toEqual(['emea']);
      expect(fleet?.total).toBe(6);
      expect((a.rollouts as RolloutStatus[]).some((r) => r.id === apacId)).toBe(false);
    }
    // ada (every organization) sees both parts and the apac one-off.
    const all = JSON.parse((await cli('ada', ['status', '--json'])).out) as FleetStatus;
    expect(rolloutOf(all)?.byOrg.map((p) => p.org)).toEqual(['emea', 'apac']);
    expect(all.rollouts.some((r) => r.id === apacId)).toBe(true);

    // GET /rollouts and /rollouts/{id}: the same; apac's rollout is a 403 that says why.
    const list = await read('vic', '/rollouts');
    expect(list.json?.rollouts?.map((r) => r.id)).not.toContain(apacId);
    const one = await read('vic', `/rollouts/${encodeURIComponent(ID)}`);
    expect(one.json?.byOrg?.map((p) => p.org)).toEqual(['emea']);
    const refused = await read('vic', `/rollouts/${encodeURIComponent(apacId)}`);
    expect(refused.status).toBe(403);
    expect(refused.json?.error?.message).toMatch(
      /has no Collectors in emea, the organizations this person may read/,
    );
    expect((await cli('vic', ['report', apacId, '--format', 'csv'])).code).toBe(77);

    // report: emea's Collectors only; history: without apac's pause; fleet: emea's inventory.
    const report = await cli('vic', ['report', ID, '--format', 'json']);
    const collectors = JSON.parse(report.out).collectors as { org?: string }[];
    expect(collectors).toHaveLength(6);
    expect(new Set(collectors.map((c) => c.org))).toEqual(new Set(['emea']));
    expect(JSON.parse((await cli('ada', ['report', ID, '--format', 'json'])).out).collectors).toHaveLength(
      10,
    );
    const history = await cli('vic', ['history', ID]);
    const adaHistory = await cli('ada', ['history', ID]);
    expect(adaHistory.out).toMatch(/org apac paused by ada/);
    expect(history.code).toBe(0);
    expect(history.out).not.toMatch(/apac/);
    const fleet = JSON.parse((await cli('vic', ['fleet', '--format', 'json'])).out);
    expect(JSON.stringify(fleet)).not.toMatch(/apac/);
    expect(JSON.stringify(fleet)).toMatch(/emea/);

    // audit: the records that name emea; ada's apac actions are not among them.
    const audit = jsonLines((await read('vic', '/audit?format=json')).text);
    expect(audit.length).toBeGreaterThan(0);
    expect(audit.every((e) => e.orgs?.includes('emea'))).toBe(true);
    const adaAudit = jsonLines((await read('ada', '/audit?format=json')).text);
    expect(adaAudit.some((e) => e.who === 'ada' && e.orgs?.includes('apac'))).toBe(true);
  }, 90_000);
});

/** waitUntil (test/support), failing with the watch's output so far. */
const until = (what: string, check: () => boolean, timeoutMs: number, show: () => string) =>
  waitUntil(check, timeoutMs, what, 100).catch((err: Error) => {
    throw new Error(`${err.message}:\n${show().slice(-3000)}`);
  });

/** The screens a watch drew: each without its header line (the clock's time) and the blank line after it. */
const screens = (child: CliChild) =>
  child
    .output()
    .split('\x1b[2J\x1b[H')
    .slice(1)
    .map((s) => s.slice(s.indexOf('\n') + 2));

// Last: it stops the daemon.
describe('status --watch --server', () => {
  it('draws what the local watch draws; says so while the daemon is away, draws again once it is back; ends on Ctrl-C', async () => {
    const remote = spawnAs('ada', ['status', '--watch', '--interval', '0.3']);
    const local = spawnAs(undefined, ['status', '--watch', '--interval', '0.3']);
    await until(
      'both watches drawing',
      () => screens(remote).length >= 2 && screens(local).length >= 2,
      20_000,
      () => remote.output() + local.output(),
    );
    const [there, here] = [screens(remote).at(-1), screens(local).at(-1)];
    expect(there).toMatch(/fleet@19\.470-4/);
    expect(there).toMatch(/org apac/);
    expect(there).toBe(here);
    // On the daemon's clock (a rehearsal at ×300), as the local watch.
    expect(remote.output()).toMatch(/\(simulated clock, ×300; Ctrl-C to stop\)/);

    // The daemon stops: one sentence, the last screen below it, no crash.
    run.kill('SIGTERM');
    expect(await exitOf(run, 20_000)).toBe(0);
    await until(
      'the watch saying the daemon is away',
      () => /does not answer/.test(screens(remote).at(-1) ?? ''),
      20_000,
      remote.output,
    );
    const away = screens(remote).at(-1) as string;
    expect(away).toMatch(
      new RegExp(
        `^The daemon at ${url.replace(/\./g, '\\.')} does not answer \\(ECONNREFUSED\\)\\. Trying again in 1 s \\(Ctrl-C to stop\\)\\.`,
      ),
    );
    expect(away).toMatch(/Last seen at \d\d:\d\d:\d\d UTC:\n/);
    expect(away).toContain(there as string);
    // Back: the table again.
    const drawn = screens(remote).length;
    run = h.spawnRun(listen);
    await until(
      'the watch drawing again',
      () =>
        screens(remote)
          .slice(drawn)
          .some((s) => /^\S+\s+\S+/.test(s) && !/does not answer/.test(s) && /fleet@19\.470-4/.test(s)),
      40_000,
      remote.output,
    );
    expect(remote.exitCode).toBeNull();
    remote.kill('SIGINT');
    local.kill('SIGINT');
    expect([await exitOf(remote, 20_000), await exitOf(local, 20_000)]).toEqual([0, 0]);
    expect(remote.output()).not.toMatch(/unhandled|TypeError|at async/);
    // Refused: the exit code of a refusal, at once.
    const refused = await cli(undefined, ['status', '--watch', '--server', url]);
    expect(refused.code).toBe(77);
  }, 120_000);
});
