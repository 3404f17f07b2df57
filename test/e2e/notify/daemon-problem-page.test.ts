/**
 * A daemon problem older than 5 minutes pages, and its end resolves the incident: the built CLI's
 * `run` (run `npm run build` first) with a PagerDuty receiver at a loopback receiver, the
 * simulator over HTTP (at 300 × time: 5 minutes are 1 s), a real Redis. Policy `later` names a
 * target the service does not offer (a daemon problem, `target_not_offered`); it has no rollout,
 * so the problem is told in the live rollout of `emea-fleet`. Nothing is told before the problem
 * has lasted 5 minutes of the deployment's clock; the page's dedup_key is the problem's; once the
 * file names a build the service offers, `daemon.problem_ended` resolves it.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';
import { PagerDutyPayload } from '../../support/receiver-shapes.js';
import { exitOf } from '../../support/rollout-harness.js';
import { waitUntil } from '../../support/wait-until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

let harness: SharedSimOrgs | undefined;
let receiver: WebhookReceiver | undefined;
let dir: string | undefined;

afterEach(async () => {
  await harness?.close();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  harness = undefined;
  receiver = undefined;
  dir = undefined;
});

const ROUTING_KEY = 'e2eDa3m0nR0ut1ngK3y0123456789ab';
const PD_PATH = '/pd/v2/enqueue';
const DEDUP = 'fleet-upgrade/daemon:target_not_offered:later';

interface HistoryEvent {
  type: string;
  at: number;
  detail?: { kind?: string; subject?: string; since?: number };
}

describe('a daemon problem pages', () => {
  it('after 5 minutes, once, and resolves when it is fixed', async () => {
    const h = await startSharedSimOrgs({
      orgs: [
        {
          fleet: {
            name: 'emea',
            builds: ['19.470-4', '19.480-2'],
            users: [{ accessId: 'emea-ops', accessKey: 'emea-secret' }],
            // Long upgrades keep emea-fleet's rollout running throughout.
            collectors: [1, 2].map((id) => ({
              id,
              version: '19.470-4',
              outcome: 'succeed' as const,
              upgradeSeconds: 7200,
            })),
            behaviour: { incrementalAbove: 0 },
          },
        },
      ],
      policy: { name: 'unused' },
      timeScale: 300,
    });
    harness = h;
    const r = await startWebhookReceiver();
    receiver = r;
    dir = mkdtempSync(join(tmpdir(), 'daemon-page-'));
    const policies = join(dir, 'policies');
    mkdirSync(policies);
    const base = { verify: false, poll: { initial: '20s', max: '1m' } };
    writeFileSync(join(policies, 'emea-fleet.yaml'), stringify({ name: 'emea-fleet', ...base }));
    const later = join(policies, 'later.yaml');
    writeFileSync(later, stringify({ name: 'later', target: '19.490-1', ...base }));
    const settings = parse(readFileSync(h.settingsFile, 'utf8')) as Record<string, unknown>;
    settings.notify = [
      {
        name: 'oncall',
        pagerduty: { routingKeyEnv: 'PD_ROUTING_KEY', severity: 'error', url: `${r.url}${PD_PATH}` },
        window: '1s',
      },
    ];
    writeFileSync(h.settingsFile, stringify(settings));
    h.env.PD_ROUTING_KEY = ROUTING_KEY;

    const run = h.spawnCli(['run', '--policies', policies, '--listen', '127.0.0.1:0']);
    const pages = () =>
      r.requests
        .filter((q) => q.path === PD_PATH && q.status === 200)
        .map((q) => PagerDutyPayload.parse(JSON.parse(q.body)));
    await waitUntil(() => pages().length >= 1, 30_000, `the page; ${run.output()}`);
    expect(pages()[0]).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: DEDUP,
      payload: { severity: 'error', class: 'daemon.problem', component: 'emea-fleet' },
    });
    expect(JSON.stringify(pages()[0])).toContain('its target 19.490-1 is not offered by the service');

    // Told in emea-fleet's rollout, after the problem had lasted 5 minutes of the deployment's clock.
    const id = 'emea-fleet@19.480-2';
    const history = async () =>
      (JSON.parse((await h.cli(['history', id, '--json'])).out) as { events: HistoryEvent[] }).events;
    const told = (await history()).filter((e) => e.type === 'daemon.problem');
    expect(told).toHaveLength(1);
    expect(told[0]?.detail).toMatchObject({ kind: 'target_not_offered', subject: 'later' });
    expect((told[0]?.at ?? 0) - (told[0]?.detail?.since ?? Number.POSITIVE_INFINITY)).toBeGreaterThanOrEqual(
      5 * 60_000,
    );

    // Fixed: the file names a build the service offers; the problem ends, the incident is resolved.
    writeFileSync(later, stringify({ name: 'later', target: '19.480-2', ...base }));
    await waitUntil(() => pages().length >= 2, 30_000, `the resolve; ${run.output()}`);
    expect(pages()[1]).toEqual({ routing_key: ROUTING_KEY, event_action: 'resolve', dedup_key: DEDUP });
    const events = await history();
    expect(events.filter((e) => e.type === 'daemon.problem')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'daemon.problem_ended')).toHaveLength(1);
    // Still one page each after a while (no repeat while the problem lasted, none after).
    await new Promise((res) => setTimeout(res, 1500));
    expect(pages().map((p) => p.event_action)).toEqual(['trigger', 'resolve']);
    expect(run.output()).not.toContain(ROUTING_KEY);
    run.kill('SIGTERM');
    expect(await exitOf(run, 15_000)).toBe(0);
  }, 90_000);
});
