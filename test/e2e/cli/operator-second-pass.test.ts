/**
 * What the operator sees, second pass (issue #26), through the built CLI (run `npm run build`
 * first) and the HTTP API against one simulator that plays three organizations with long names,
 * and a real Redis:
 * - every id `upgrade` prints is one `report` and `status` accept (`--to latest` prints the build
 *   the service resolved); `cannot`, and exit 3 when nothing is written, 2 when some are left out;
 * - `status --org X` counts only X's part (the row, `--json`'s `total`) and leaves out a rollout
 *   whose Collectors are all in other organizations (a canary of `staging`);
 * - a running rollout with offline Collectors says what it waits for: how many, next try at;
 * - an abort over HTTP shows who in `status` and `history`; `1 task under way is followed to its
 *   end`; `history` writes every time one way (ISO 8601, to the second);
 * - every line of those screens within 80 columns.
 */

import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { FleetStatus, RolloutStatus } from '../../../src/rollout/index.js';
import type { OrgFleetInput } from '../../../src/simulator/schema.js';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';

const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
const US = 'us-east-production-frontend';
const EU = 'eu-west-production-backend';
const STAGING = 'staging-canary-ring-one';

let harness: SharedSimOrgs | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

function org(
  name: string,
  count: number,
  patch: { offline?: number[]; upgradeSeconds?: number } = {},
): OrgFleetInput & { name: string } {
  return {
    name,
    builds: BUILDS,
    users: [{ accessId: `${name}-ops`, accessKey: `${name}-secret` }],
    collectors: Array.from({ length: count }, (_, i) => ({
      id: i + 1,
      name: `${name}-collector-${i + 1}`,
      version: '19.400-5',
      alive: !patch.offline?.includes(i + 1),
      outcome: 'succeed' as const,
      upgradeSeconds: patch.upgradeSeconds ?? 60,
    })),
    behaviour: { incrementalAbove: 0 },
    faults: { rateLimit: { perSecond: 0, concurrent: 0 } },
  };
}

/** The lines of `text` longer than 80 columns, with their length (none expected). */
function tooWide(text: string): string[] {
  return text
    .split('\n')
    .filter((l) => [...l].length > 80)
    .map((l) => `${[...l].length}: ${l}`);
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  await new Promise((r) => server.close(r));
  return port;
}

const byId = (s: FleetStatus, id: string): RolloutStatus | undefined => s.rollouts.find((r) => r.id === id);

describe('what the operator sees, second pass', () => {
  it('real ids, honest exits, one organization’s part, what a wave waits for, who aborted', async () => {
    harness = await startSharedSimOrgs({
      timeScale: 300,
      orgs: [
        // Collector 6 is offline: tried again every 30 simulated minutes (6 s here).
        { fleet: org(US, 6, { offline: [6] }) },
        { fleet: org(EU, 4) },
        // An hour each (12 s here), one at a time: one task under way.
        { fleet: org(STAGING, 3, { upgradeSeconds: 3600 }) },
      ],
      policy: {
        name: 'everywhere',
        target: '19.450-12',
        maxInFlight: 8,
        verify: false,
        poll: { initial: '20s', max: '1m' },
        retry: { notAlive: { attempts: 3, backoff: '30m' } },
        select: { org: [US, EU] },
      },
    });
    const h = harness;
    const canaryFile = join(dirname(h.policyFile), 'canary.yaml');
    writeFileSync(
      canaryFile,
      stringify({
        name: 'canary',
        target: '19.450-12',
        maxInFlight: 1,
        verify: false,
        poll: { initial: '1m', max: '2m' },
        select: { org: STAGING },
      }),
    );
    const port = await freePort();
    h.spawnCli(['run', '--policy', h.policyFile, '--policy', canaryFile, '--listen', `127.0.0.1:${port}`]);

    // A wave that waits on an offline Collector says for how many, and when it tries again.
    const waiting = await h.waitFor((s) => {
      const r = byId(s, 'everywhere@19.450-12');
      return (
        (r?.counts.waiting_retry ?? 0) === 1 && r?.done === 9 && byId(s, 'canary@19.450-12')?.inflight === 1
      );
    }, 60_000);
    expect(waiting.rollouts.map((r) => r.id).sort()).toEqual(['canary@19.450-12', 'everywhere@19.450-12']);
    // An abort over HTTP while one task is under way: who, in status and history.
    const res = await fetch(`http://127.0.0.1:${port}/rollouts/canary@19.450-12/abort`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reason: 'bad build, see INC-42' }),
    });
    expect(res.status, await res.text()).toBe(200);
    const aborted = await h.cli(['status', '--org', STAGING]);
    expect(aborted.out.replace(/\s+/g, ' ')).toMatch(
      /aborted \(by http:127\.0\.0\.1: bad build, see INC-42\); .*1 task under way is followed to its end/,
    );
    const status = await h.cli(['status']);
    expect(status.code, status.out).toBe(0);
    expect(tooWide(status.out), status.out).toEqual([]);
    expect(status.out.replace(/\s+/g, ' ')).toMatch(
      /waiting for 1 retrying \(offline, or a task refused\), next try (at \d\d:\d\d(:\d\d)? UTC|due now)/,
    );

    // status --org: that organization's part only; another organization's canary left out.
    const eu = await h.cli(['status', '--org', EU]);
    expect(eu.code, eu.out).toBe(0);
    expect(tooWide(eu.out), eu.out).toEqual([]);
    expect(eu.out).toMatch(/^everywhere@19\.450-12\s+running\s+\[#{8}\] 4\/4 /m);
    expect(eu.out).not.toMatch(/canary/);
    const euJson = JSON.parse((await h.cli(['status', '--org', EU, '--json'])).out) as FleetStatus;
    expect(euJson.rollouts.map((r) => [r.id, r.total, r.done])).toEqual([['everywhere@19.450-12', 4, 4]]);
    const staging = JSON.parse((await h.cli(['status', '--org', STAGING, '--json'])).out) as FleetStatus;
    expect(staging.rollouts.map((r) => [r.id, r.total])).toEqual([['canary@19.450-12', 3]]);
    expect((await h.cli(['status', '--org', US])).out).not.toMatch(/canary/);

    const history = await h.cli(['history', 'canary@19.450-12']);
    expect(history.code, history.out).toBe(0);
    expect(tooWide(history.out), history.out).toEqual([]);
    expect(history.out).toMatch(/rollout\.aborted {2}operator:http:127\.0\.0\.1/);
    const wideHistory = (await h.cli(['history', 'canary@19.450-12', '--wide'])).out;
    for (const text of [history.out, wideHistory]) {
      expect(text).not.toMatch(/\.\d{3}Z|\(UTC\)/);
      expect(text).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ {2}rollout\.started/m);
    }

    // upgrade --to latest: the printed id is the one report and status know.
    const started = await h.cli(['upgrade', '--collector', '2', '--to', 'latest', '--org', EU]);
    expect(started.code, started.out).toBe(0);
    expect(tooWide(started.out), started.out).toEqual([]);
    expect(started.out).not.toMatch(/@latest|@<build>/);
    const ids = [...new Set(started.out.match(/upgrade-\d{14}-[0-9a-f]{6}@[\w.-]+\d/g) ?? [])];
    expect(ids).toHaveLength(1);
    const id = ids[0] as string;
    expect(id).toMatch(/@19\.470-4$/);
    await h.waitFor((s) => byId(s, id)?.phase === 'converged', 60_000);
    const report = await h.cli(['report', id, '--format', 'csv']);
    expect(report.code, report.out).toBe(0);
    expect(report.out).toMatch(/^2,.*succeeded/m);
    expect((await h.cli(['status', '--org', EU])).out).toContain(id.slice(0, 20));

    // The same over HTTP: the answer names the rollout's id, which its report endpoint knows.
    const posted = await fetch(`http://127.0.0.1:${port}/upgrades`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ collectors: [4], to: 'latest', org: EU }),
    });
    const answer = (await posted.json()) as { oneOff: string; rollout?: string };
    expect(posted.status, JSON.stringify(answer)).toBe(201);
    expect(answer.rollout).toBe(`${answer.oneOff}@19.470-4`);
    await h.waitFor((s) => byId(s, answer.rollout as string)?.phase === 'converged', 60_000);
    const viaHttp = await fetch(`http://127.0.0.1:${port}/rollouts/${answer.rollout}/report`);
    expect(viaHttp.status).toBe(200);
    await viaHttp.arrayBuffer();

    // Honest refusals: nothing written is exit 3 and says `cannot`; some left out is exit 2.
    const none = await h.cli(['upgrade', '--collector', '999', '--to', 'latest', '--org', EU]);
    expect(none.code, none.out).toBe(3);
    expect(tooWide(none.out), none.out).toEqual([]);
    expect(none.out.replace(/\s+/g, ' ')).toMatch(
      /no one-off started: the Collector of org \S+ cannot be upgraded to 19\.470-4/,
    );
    const some = await h.cli(['upgrade', '--collector', '3,999', '--to', 'latest', '--org', EU]);
    expect(some.code, some.out).toBe(2);
    expect(tooWide(some.out), some.out).toEqual([]);
    expect(some.out.replace(/\s+/g, ' ')).toMatch(
      /one-off rollout upgrade-\S+@19\.470-4: 1 Collector of org/,
    );
  }, 180_000);
});
