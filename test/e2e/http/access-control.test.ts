/**
 * A control plane for teams (issue #28) through the real path: `run` of the built CLI with
 * `access:` in its settings, two simulator organizations (emea, apac), the test Redis, requests
 * over HTTP and the CLI with `--server`. A viewer reads and is refused every action (403); an
 * operator of emea pauses emea and is refused apac and the whole rollout; an unknown token is a
 * 401; the proxy's headers are believed from its address (127.0.0.2) and ignored from another; a
 * wave with `approval: { approvers: 2 }` refuses the same person twice and opens after a second
 * person; an admin forgets. Each of these is in `audit` with its name and answer, and in the
 * history where it acted. No token is in any log line, metric, Redis key or audit record.
 */

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import type { CliChild } from '../../support/cli-child.js';
import { type OrgsHarness, orgFleet, startOrgsHarness } from '../../support/orgs-harness.js';
import { freePort } from '../../support/redis-topology.js';
import { exitOf } from '../../support/rollout-harness.js';
import { waitUntil } from '../../support/wait-until.js';

const TOKENS = {
  vera: 'vera-token-0123456789abcdef',
  olga: 'olga-token-0123456789abcdef',
  omar: 'omar-token-0123456789abcdef',
  otto: 'otto-token-0123456789abcdef',
  ada: 'ada-token-0123456789abcdef0',
} as const;
const UNKNOWN = 'nobody-token-0123456789abcdef';
/** FLEET_UPGRADE_CONTROL_TOKEN: with `access:`, the admin named `admin`. */
const CONTROL = 'control-token-0123456789abcdef';
/** vera's token after a rotation of her token file. */
const ROTATED = 'vera-rotated-0123456789abcdef';
const ID = 'fleet@19.470-4';

let h: OrgsHarness;
let run: CliChild;
let url: string;

interface Answer {
  status: number;
  json: { message?: string; error?: { code: string; message: string } } & Record<string, unknown>;
  text: string;
}

/** One request over HTTP, from `localAddress` (default 127.0.0.1), as `token` or with `headers`. */
function call(
  method: 'GET' | 'POST',
  path: string,
  o: { token?: string; body?: unknown; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${url}${path}`,
      {
        method,
        localAddress: o.localAddress ?? '127.0.0.1',
        headers: {
          ...(o.token ? { authorization: `Bearer ${o.token}` } : {}),
          ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
          ...o.headers,
        },
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d.toString();
        });
        res.on('end', () => {
          let json = {};
          try {
            json = JSON.parse(text);
          } catch {
            // NDJSON or CSV: the text says it
          }
          resolve({ status: res.statusCode ?? 0, json: json as Answer['json'], text });
        });
      },
    );
    req.on('error', reject);
    req.end(method === 'POST' ? JSON.stringify(o.body ?? {}) : undefined);
  });
}

const post = (action: string, token: string | undefined, body: unknown = {}) =>
  call('POST', `/rollouts/${encodeURIComponent(ID)}/${action}`, { ...(token ? { token } : {}), body });

/** The built CLI as `who` (FLEET_UPGRADE_TOKEN) through `--server`; its exit code and output. */
async function cliAs(
  who: keyof typeof TOKENS | undefined,
  args: string[],
): Promise<{ code: number | null; out: string }> {
  if (who) h.env.FLEET_UPGRADE_TOKEN = TOKENS[who];
  const child = h.spawnCli(args);
  delete h.env.FLEET_UPGRADE_TOKEN;
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

const rolloutOf = (s: FleetStatus): RolloutStatus | undefined => s.rollouts.find((r) => r.id === ID);

/** A key's whole value, whatever its type. */
async function readKey(key: string): Promise<unknown> {
  switch (await h.redis.type(key)) {
    case 'string':
      return h.redis.get(key);
    case 'hash':
      return h.redis.hgetall(key);
    case 'list':
      return h.redis.lrange(key, 0, -1);
    case 'set':
      return h.redis.smembers(key);
    case 'zset':
      return h.redis.zrange(key, '0', '-1');
    case 'stream':
      return h.redis.xrange(key, '-', '+');
    default:
      return undefined;
  }
}

async function audit(query = ''): Promise<AuditEntry[]> {
  const res = await call('GET', `/audit?format=json${query}`, { token: TOKENS.vera });
  expect(res.status).toBe(200);
  return res.text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as AuditEntry);
}

beforeAll(async () => {
  h = await startOrgsHarness({
    orgs: [
      { name: 'emea', fleet: orgFleet('emea', { count: 4, upgradeSeconds: 60 }) },
      { name: 'apac', fleet: orgFleet('apac', { count: 4, upgradeSeconds: 60 }) },
    ],
    policy: {
      name: 'fleet',
      maxInFlight: 8,
      verify: false,
      poll: { initial: '20s', max: '1m' },
      waves: [{ size: 2, approval: { approvers: 2 } }, '100%'],
    },
    timeScale: 300,
  });
  const dir = dirname(h.settingsFile);
  const files: Record<string, string> = {};
  for (const name of ['vera', 'olga', 'omar', 'otto'] as const) {
    files[name] = join(dir, `${name}.token`);
    writeFileSync(files[name], `${TOKENS[name]}\n`, { mode: 0o600 });
  }
  const { parse, stringify } = await import('yaml');
  const settings = parse(readFileSync(h.settingsFile, 'utf8')) as Record<string, unknown>;
  settings.access = {
    users: [
      { name: 'vera', tokenFile: files.vera, role: 'viewer' },
      { name: 'olga', tokenFile: files.olga, role: 'operator', orgs: ['emea'] },
      { name: 'omar', tokenFile: files.omar, role: 'operator' },
      { name: 'otto', tokenFile: files.otto, role: 'operator' },
      { name: 'ada', tokenEnv: 'ADA_TOKEN', role: 'admin' },
    ],
    proxy: {
      userHeader: 'X-Forwarded-User',
      groupsHeader: 'X-Forwarded-Groups',
      trustedAddresses: ['127.0.0.2/32'],
      groups: { 'emea-ops': { role: 'operator', orgs: ['emea'] }, auditors: 'viewer' },
    },
  };
  writeFileSync(h.settingsFile, stringify(settings));
  h.env.ADA_TOKEN = TOKENS.ada;
  h.env.FLEET_UPGRADE_CONTROL_TOKEN = CONTROL;
  h.env.LOG_LEVEL = 'info';
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  run = h.spawnRun(`127.0.0.1:${port}`);
  h.env.LOG_LEVEL = 'warn';
  delete h.env.FLEET_UPGRADE_CONTROL_TOKEN;
  h.env.FLEET_UPGRADE_SERVER = url;
  // The first wave (2 Collectors) done, the second waits for two approvals.
  await h.waitFor((s) => rolloutOf(s)?.wave?.waitingFor === 'approval', 60_000);
}, 90_000);

afterAll(async () => {
  await h?.close();
});

describe('access: who may do what', () => {
  it('answers 401 to an unknown token and to no identity, reads included', async () => {
    expect((await call('GET', '/rollouts', { token: UNKNOWN })).status).toBe(401);
    expect((await call('GET', '/rollouts')).status).toBe(401);
    expect((await call('GET', '/status')).status).toBe(401);
    const pause = await post('pause', UNKNOWN);
    expect(pause.status).toBe(401);
    expect(pause.json.error?.message).toBe('the bearer token is not the token of anyone in access.users');
    // Probes stay open.
    expect((await call('GET', '/healthz')).status).toBe(200);
  });

  it('lets a viewer read and refuses every action with 403 naming the role', async () => {
    expect((await call('GET', '/rollouts', { token: TOKENS.vera })).status).toBe(200);
    expect((await call('GET', `/rollouts/${encodeURIComponent(ID)}`, { token: TOKENS.vera })).status).toBe(
      200,
    );
    for (const action of ['pause', 'resume', 'abort', 'promote', 'approve', 'retry', 'rollback', 'forget']) {
      const body = action === 'retry' ? { only: ['failed'] } : action === 'rollback' ? { all: true } : {};
      const res = await post(action, TOKENS.vera, body);
      expect(res.status, `${action}: ${res.text}`).toBe(403);
      expect(res.json.error?.message).toBe(
        `vera is a viewer: ${action} needs the role ${action === 'forget' ? 'admin' : 'operator'}`,
      );
    }
    expect(rolloutOf(await h.status())?.phase).toBe('running');
  });

  it('lets an operator of emea pause emea, and refuses apac and the whole rollout', async () => {
    const apac = await post('pause', TOKENS.olga, { org: 'apac' });
    expect(apac.status).toBe(403);
    expect(apac.json.error?.message).toBe('olga may pause only in emea: missing the organization apac');
    const whole = await post('pause', TOKENS.olga);
    expect(whole.status).toBe(403);
    expect(whole.json.error?.message).toBe(
      'olga may pause only in emea: missing the organization apac (an action on a rollout of emea, apac without org needs all of them)',
    );
    const emea = await post('pause', TOKENS.olga, { org: 'emea' });
    expect(emea.status, emea.text).toBe(200);
    expect(emea.json.message).toMatch(/paused by olga/);
    const r = rolloutOf(await h.status());
    expect(r?.pausedOrgs).toEqual([expect.objectContaining({ org: 'emea', by: 'olga' })]);
    expect((await post('resume', TOKENS.olga, { org: 'emea' })).status).toBe(200);
    const history = await h.state.events.history(ID);
    expect(history.filter((e) => e.actor === 'olga').map((e) => e.type)).toEqual([
      'rollout.paused',
      'rollout.resumed',
    ]);
  });

  it('keeps FLEET_UPGRADE_CONTROL_TOKEN working as the admin named admin', async () => {
    const paused = await post('pause', CONTROL, { org: 'apac' });
    expect(paused.status, paused.text).toBe(200);
    expect(paused.json.message).toMatch(/org apac paused by admin/);
    expect((await post('resume', CONTROL, { org: 'apac' })).status).toBe(200);
    expect((await audit('&user=admin')).map((e) => [e.what, e.answer, e.orgs])).toEqual([
      ['pause', 'allowed', ['apac']],
      ['resume', 'allowed', ['apac']],
    ]);
  });

  it('believes the proxy only from its trusted address', async () => {
    const headers = { 'x-forwarded-user': 'pat', 'x-forwarded-groups': 'auditors, emea-ops' };
    const trusted = await call('POST', `/rollouts/${encodeURIComponent(ID)}/pause`, {
      headers,
      body: { org: 'emea' },
      localAddress: '127.0.0.2',
    });
    expect(trusted.status, trusted.text).toBe(200);
    expect(trusted.json.message).toMatch(/paused by pat/);
    const other = await call('POST', `/rollouts/${encodeURIComponent(ID)}/resume`, {
      headers,
      body: { org: 'emea' },
    });
    expect(other.status).toBe(401);
    // pat's groups give no right over apac.
    const apac = await call('POST', `/rollouts/${encodeURIComponent(ID)}/pause`, {
      headers,
      body: { org: 'apac' },
      localAddress: '127.0.0.2',
    });
    expect(apac.status).toBe(403);
    const resumed = await call('POST', `/rollouts/${encodeURIComponent(ID)}/resume`, {
      headers,
      body: { org: 'emea' },
      localAddress: '127.0.0.2',
    });
    expect(resumed.status).toBe(200);
    expect((await call('GET', '/rollouts', { headers, localAddress: '127.0.0.2' })).status).toBe(200);
  });

  it('gives the same exit codes with --server as without', async () => {
    // An unknown rollout: 64 either way.
    const remoteMissing = await cliAs('omar', ['pause', 'nope@1']);
    const localMissing = await cliAs(undefined, [
      'pause',
      'nope@1',
      '--config',
      h.settingsFile,
      '--server',
      '',
    ]);
    expect([remoteMissing.code, localMissing.code]).toEqual([64, 64]);
    // A conflict (resume a running rollout): 3 either way.
    const remoteConflict = await cliAs('omar', ['resume', ID]);
    expect(remoteConflict.out).toMatch(/only a halted or paused rollout can be resumed/);
    const localConflict = await cliAs(undefined, ['resume', ID, '--config', h.settingsFile, '--server', '']);
    expect([remoteConflict.code, localConflict.code]).toEqual([3, 3]);
    // Refused by access: 77, naming what is missing.
    const refused = await cliAs('olga', ['pause', ID, '--org', 'apac']);
    expect(refused.code).toBe(77);
    expect(refused.out).toMatch(/olga may pause only in emea: missing the organization apac/);
    // Done: 0, the same one line.
    const paused = await cliAs('olga', ['pause', ID, '--org', 'emea']);
    expect(paused.code, paused.out).toBe(0);
    expect(paused.out).toMatch(new RegExp(`^${ID.replace('.', '\\.')}: org emea paused by olga`));
    expect((await cliAs('olga', ['resume', ID, '--org', 'emea'])).code).toBe(0);
    // Acting on Redis directly is recorded as local:<user>@<host>.
    expect(localConflict.out).not.toMatch(/olga/);
    const local = (await audit('&rollout=fleet%4019.470-4')).filter((e) => e.via === 'local');
    expect(local.map((e) => [e.what, e.answer])).toEqual([['resume', 'refused']]);
    expect(local[0]?.who).toMatch(/^local:\S+@\S+$/);
  }, 60_000);

  it('prints the same report with --server as without, and refuses no identity with 77', async () => {
    const local = ['--config', h.settingsFile, '--server', ''];
    for (const form of [
      ['--format', 'json'],
      ['--format', 'csv'],
      ['--format', 'csv', '--worklist'],
      ['--format', 'json', '--worklist'],
    ]) {
      const remote = await cliAs('vera', ['report', ID, ...form]);
      const here = await cliAs(undefined, ['report', ID, ...form, ...local]);
      expect([remote.code, here.code], remote.out).toEqual([0, 0]);
      expect(remote.out.length).toBeGreaterThan(20);
      if (form[1] === 'csv' || form[2] === '--worklist') {
        expect(remote.out).toBe(here.out);
        continue;
      }
      // The rollout runs between the two reads (its scans move): the same layout and Collectors.
      const [a, b] = [JSON.parse(remote.out), JSON.parse(here.out)];
      expect(remote.out.split('\n')[1]).toBe(here.out.split('\n')[1]);
      expect(Object.keys(a.rollout).sort()).toEqual(Object.keys(b.rollout).sort());
      expect(a.collectors).toEqual(b.collectors);
    }
    // No identity: refused, 77; the table is local only: 64, saying so.
    expect((await cliAs(undefined, ['report', ID, '--format', 'json'])).code).toBe(77);
    const table = await cliAs('vera', ['report', ID, '--format', 'table']);
    expect(table.code).toBe(64);
    expect(table.out).toMatch(/with --server, --format csv or json/);
    expect((await cliAs('vera', ['report', 'nope@1', '--format', 'csv'])).code).toBe(64);
  }, 60_000);

  it('prints the same fleet with --server as without', async () => {
    const local = ['--config', h.settingsFile, '--server', ''];
    // The daemon's first inventory pass writes the policies' shares: compare once they are there.
    for (let i = 0; i < 40; i++) {
      const first = await cliAs(undefined, ['fleet', '--format', 'json', ...local]);
      if (JSON.parse(first.out).policies?.length > 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    // The rollout upgrades the fleet meanwhile (each pass rewrites it): the same output within a few reads.
    const strip = (format: string, out: string) =>
      format === 'json'
        ? JSON.stringify({ ...JSON.parse(out), now: 0 })
        : // A rehearsal's clock line is local only (docs/access.md): the rest is the same.
          out.replace(/^Simulated clock .*\n/, '');
    for (const format of ['json', 'csv', 'table']) {
      let pair: string[] = [];
      for (let i = 0; i < 10; i++) {
        const here = await cliAs(undefined, ['fleet', '--format', format, ...local]);
        const remote = await cliAs('vera', ['fleet', '--format', format]);
        expect([remote.code, here.code], remote.out).toEqual([0, 0]);
        pair = [strip(format, remote.out), strip(format, here.out)];
        if (pair[0] === pair[1]) break;
      }
      expect(pair[0]).toBe(pair[1]);
    }
    expect((await cliAs(undefined, ['fleet'])).code).toBe(77);
    expect((await cliAs('vera', ['fleet', '--org', 'emea'])).code).toBe(64);
  }, 60_000);

  it('waits for two distinct people to approve, refusing the second click of the same one', async () => {
    const promote = await post('promote', TOKENS.omar);
    expect(promote.status).toBe(409);
    expect(promote.json.error?.message).toMatch(/awaits 2 approvals/);
    const first = await cliAs('omar', ['approve', ID]);
    expect(first.code, first.out).toBe(0);
    expect(first.out).toMatch(/approved by omar \(1 of 2\); 1 more approval needed/);
    const waiting = rolloutOf(await h.status());
    expect(waiting?.wave?.approval?.by.map((b) => b.name)).toEqual(['omar']);
    // status, on Redis and through the daemon as a viewer, shows who approved and who is needed.
    const local = await cliAs(undefined, ['status', '--config', h.settingsFile, '--server', '']);
    const remote = await cliAs('vera', ['status']);
    for (const status of [local, remote]) {
      expect(status.code, status.out).toBe(0);
      expect(status.out).toMatch(/awaiting 2 approvals for wave 2 \(approved by omar\):\s+1 more needed/);
    }
    expect((await cliAs(undefined, ['status'])).code).toBe(77);
    const again = await cliAs('omar', ['approve', ID]);
    expect(again.code).toBe(3);
    expect(again.out).toMatch(/omar approved wave 2 of fleet@19\.470-4 already .*another person/);
    const second = await post('approve', TOKENS.otto);
    expect(second.status, second.text).toBe(200);
    expect(second.json.message).toMatch(/approved by omar and otto: it opens now/);
    const done = await h.waitFor((s) => rolloutOf(s)?.phase === 'converged', 90_000);
    expect(rolloutOf(done)?.counts).toEqual({ succeeded: 8 });
    const approvals = (await h.state.events.history(ID)).filter((e) => e.type === 'rollout.approved');
    expect(approvals.map((e) => e.actor)).toEqual(['omar', 'otto']);
    // The webhooks' outbox carries the same events, with who.
    const outbox = await h.redis.xrange(h.state.keys.outbox, '-', '+');
    const told = outbox
      .map(([, f]) => JSON.parse(f[f.indexOf('event') + 1] as string) as { type: string; actor?: string })
      .filter((e) => e.type === 'rollout.approved');
    expect(told.map((e) => e.actor)).toEqual(['omar', 'otto']);
  }, 120_000);

  it('reads a token file again when it changes: the old token stops, the new one works', async () => {
    const file = join(dirname(h.settingsFile), 'vera.token');
    const rotated = ROTATED;
    writeFileSync(file, `${rotated}\n`);
    let answer = 0;
    for (let i = 0; i < 50 && answer !== 200; i++) {
      answer = (await call('GET', '/rollouts', { token: rotated })).status;
      if (answer !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer).toBe(200);
    expect((await call('GET', '/rollouts', { token: TOKENS.vera })).status).toBe(401);
    writeFileSync(file, `${TOKENS.vera}\n`);
    for (let i = 0; i < 50 && answer !== 401; i++) {
      answer = (await call('GET', '/rollouts', { token: rotated })).status;
      if (answer !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    expect(answer).toBe(401);
    expect((await call('GET', '/rollouts', { token: TOKENS.vera })).status).toBe(200);
  }, 20_000);

  it('takes a rollback through --server within the person’s organizations', async () => {
    const viewer = await cliAs('vera', ['rollback', ID, '--all']);
    expect(viewer.code).toBe(77);
    expect(viewer.out).toMatch(/vera is a viewer: rollback needs the role operator/);
    const apac = await cliAs('olga', ['rollback', ID, '--all']);
    expect(apac.code).toBe(77);
    const emea = await cliAs('olga', ['rollback', ID, '--all', '--org', 'emea']);
    expect(emea.code, emea.out).toBe(0);
    expect(emea.out).toMatch(/rollback of 4 Collectors/);
    const requested = (await h.state.events.history(ID)).filter((e) => e.type === 'rollback.requested');
    expect(requested.map((e) => [e.actor, e.detail?.org])).toEqual([['olga', 'emea']]);
  }, 60_000);

  it('shows a person of emea only emea’s rollbacks and their accounts, in the rollout, /status and the report', async () => {
    const apac = await cliAs('omar', ['rollback', ID, '--all', '--org', 'apac']);
    expect(apac.code, apac.out).toBe(0);
    type Shown = {
      rollbacks?: { org?: string }[];
      rollbackAccounts?: { requested: number; rollouts: { org?: string }[] }[];
    };
    const orgsOf = (r: Shown) => ({
      entries: (r.rollbacks ?? []).map((e) => e.org),
      accounts: (r.rollbackAccounts ?? []).map((a) => [a.requested, a.rollouts.map((x) => x.org)]),
    });
    const one = (token: string) => call('GET', `/rollouts/${encodeURIComponent(ID)}`, { token });
    // The daemon carries a request out on its next round (its entry is written then): wait for
    // apac's, bounded, before reading.
    const all = async () => orgsOf((await one(TOKENS.ada)).json as Shown);
    await waitUntil(async () => (await all()).entries.length >= 2, 10_000, "apac's rollback entry", 100);
    expect(await all()).toEqual({
      entries: ['emea', 'apac'],
      accounts: [
        [4, ['emea']],
        [4, ['apac']],
      ],
    });
    const emea = { entries: ['emea'], accounts: [[4, ['emea']]] };
    expect(orgsOf((await one(TOKENS.olga)).json as Shown)).toEqual(emea);
    const status = (await call('GET', '/status', { token: TOKENS.olga })).json as unknown as FleetStatus;
    expect(orgsOf(rolloutOf(status) as Shown)).toEqual(emea);
    const report = await call('GET', `/rollouts/${encodeURIComponent(ID)}/report?format=json`, {
      token: TOKENS.olga,
    });
    expect(report.status, report.text).toBe(200);
    expect(orgsOf((JSON.parse(report.text) as { rollout: Shown }).rollout)).toEqual(emea);
  }, 60_000);

  it('lets only an admin forget', async () => {
    const operator = await post('forget', TOKENS.omar, { force: true });
    expect(operator.status).toBe(403);
    expect(operator.json.error?.message).toBe('omar is an operator: forget needs the role admin');
    const admin = await post('forget', TOKENS.ada, { force: true });
    expect(admin.status, admin.text).toBe(200);
    expect(admin.json.message).toMatch(/^forgot fleet@19\.470-4 and the records of its 8 Collectors/);
  });

  it('records a policy file change the daemon loads, with its digests before and after', async () => {
    const before = readFileSync(h.policyFile, 'utf8');
    const after = `# reviewed by the change board\n${before}`;
    writeFileSync(h.policyFile, after);
    const sha = (t: string) => `sha256:${createHash('sha256').update(t, 'utf8').digest('hex')}`;
    let change: AuditEntry | undefined;
    for (let i = 0; i < 100 && !change; i++) {
      change = (await audit()).find((e) => e.what === 'policy.changed');
      if (!change) await new Promise((r) => setTimeout(r, 100));
    }
    expect(change).toMatchObject({
      who: 'daemon',
      file: h.policyFile,
      oldDigest: sha(before),
      newDigest: sha(after),
    });
  }, 30_000);

  it('has every request in the audit trail with its name and answer, and no token anywhere', async () => {
    const all = await audit();
    const seen = all.map((e) => [e.who, e.what, e.answer, e.status]);
    expect(seen).toEqual(
      expect.arrayContaining([
        ['unknown', 'pause', 'refused', 401],
        ['vera', 'pause', 'refused', 403],
        ['vera', 'forget', 'refused', 403],
        ['olga', 'pause', 'refused', 403],
        ['olga', 'pause', 'allowed', 200],
        ['pat', 'pause', 'allowed', 200],
        ['unknown', 'resume', 'refused', 401],
        ['omar', 'approve', 'allowed', 200],
        ['omar', 'approve', 'refused', 409],
        ['otto', 'approve', 'allowed', 200],
        ['omar', 'forget', 'refused', 403],
        ['ada', 'forget', 'allowed', 200],
      ]),
    );
    const pat = all.find((e) => e.who === 'pat' && e.answer === 'allowed');
    expect(pat).toMatchObject({ via: 'proxy', proxy: '127.0.0.2', orgs: ['emea'], rollout: ID });
    const olga = all.find((e) => e.who === 'olga' && e.answer === 'allowed');
    expect(olga).toMatchObject({ via: 'token', from: '127.0.0.1', orgs: ['emea'] });
    // Filters, and the CLI through the API as CSV.
    expect((await audit('&user=otto')).map((e) => e.what)).toEqual(['approve']);
    const csv = await cliAs('vera', ['audit', '--user', 'ada', '--format', 'csv']);
    expect(csv.code, csv.out).toBe(0);
    expect(csv.out.trim().split('\n')).toEqual([
      'time,who,via,from,proxy,what,rollout,orgs,answer,status,reason',
      expect.stringMatching(
        /^\d{4}-.*,ada,token,127\.0\.0\.1,,forget,fleet@19\.470-4,(emea apac|apac emea),allowed,200,$/,
      ),
    ]);
    // One JSON line per record on the daemon's log, for a SIEM.
    const lines = run
      .output()
      .split('\n')
      .filter((l) => l.includes('"audit":true'));
    expect(lines.length).toBeGreaterThanOrEqual(all.filter((e) => e.via !== 'local').length);

    // No token in the log, the metrics, any Redis key or value, or the audit trail.
    const metrics = (await call('GET', '/metrics')).text;
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await h.redis.scan(
        cursor,
        'MATCH',
        `${h.env.FLEET_UPGRADE_KEY_PREFIX}*`,
        'COUNT',
        1000,
      );
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    const values: string[] = [];
    for (const key of keys) values.push(key, JSON.stringify(await readKey(key)));
    const everything = [run.output(), metrics, JSON.stringify(all), ...values].join('\n');
    expect(everything).toContain('olga');
    for (const token of [...Object.values(TOKENS), UNKNOWN, ROTATED, CONTROL])
      expect(everything).not.toContain(token);
  }, 60_000);
});
