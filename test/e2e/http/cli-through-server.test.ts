/**
 * The CLI through a daemon (issue #28, the rest of "every control command and every read takes
 * `--server`"): `run` of the built CLI with `access:`, two simulator organizations (emea, apac)
 * and the test Redis. `upgrade --server` prints what `upgrade` prints on Redis and exits the same
 * (0, 2, 3, 64), 77 when refused; `status --watch --server` draws what the local `status --watch`
 * draws, says so in one sentence when the daemon goes away and draws again when it is back, and
 * ends on Ctrl-C as the local one does; a viewer and an operator of emea read only emea's rollouts
 * and parts.
 */

import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import type { CliChild } from '../../support/cli-child.js';
import { type OrgsHarness, orgFleet, startOrgsHarness } from '../../support/orgs-harness.js';
import { freePort } from '../../support/redis-topology.js';
import { exitOf } from '../../support/rollout-harness.js';

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
  const { parse, stringify } = await import('yaml');
  const { readFileSync } = await import('node:fs');
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
    expect(remote.out).toMatch(/one-off rollout upgrade-\S+@19\.470-4: 1 Collector of org emea\s+to 19\.470-4/);
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
