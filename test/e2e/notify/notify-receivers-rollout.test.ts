/**
 * Slack, Teams and PagerDuty receivers through a real rollout: the built CLI's `run` with a
 * settings file whose `notify:` names them (the Slack URL from a variable, the Teams URL from a
 * file, the routing key from a variable), two organizations in one simulator over HTTP, the run's
 * Redis. A Collector of emea fails: emea's rollout halts; only emea's channel hears of it, one
 * incident is triggered; `resume` from the command line resolves it. Every payload has the shape
 * its service documents; no URL or routing key reaches the output, a metric or a Redis key.
 * `notify --print` and `notify --test NAME` are run too.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';
import { PagerDutyPayload, SlackPayload, slackText, TeamsPayload } from '../../support/receiver-shapes.js';
import { freePort } from '../../support/redis-topology.js';
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

const ROUTING_KEY = 'e2eR0UT1NGk3y5c1b9a7f0d2e4c6b8a';
const SLACK_PATH = '/services/T0EMEA/B0E2E/e2eSlackSecret31';
const TEAMS_PATH = '/workflows/us/invoke?sig=e2eTeamsSig88';
const PD_PATH = '/pd/v2/enqueue';

const org = (name: string, first: number, failing: number[]) => ({
  fleet: {
    name,
    builds: ['19.470-4', '19.480-2'],
    users: [{ accessId: `${name}-ops`, accessKey: `${name}-secret` }],
    collectors: Array.from({ length: 4 }, (_, i) => ({
      id: first + i,
      version: '19.470-4',
      ...(failing.includes(first + i)
        ? { outcome: 'fail' as const, failureCause: 'unknown' as const }
        : { outcome: 'succeed' as const }),
      upgradeSeconds: 60,
    })),
    behaviour: { incrementalAbove: 0 },
  },
});

const policy = (name: string, orgs: string[]) => ({
  name,
  orgs,
  maxInFlight: 4,
  verify: false,
  poll: { initial: '20s', max: '1m' },
  failureGate: { failed: { max: 0 } },
});

describe('notify receivers in a real rollout', () => {
  it("a halt in emea reaches emea's channel only and pages once; resume resolves the incident", async () => {
    const h = await startSharedSimOrgs({
      orgs: [org('emea', 1, [1]), org('us', 11, [])],
      policy: policy('unused', ['us']),
      timeScale: 300,
    });
    harness = h;
    const r = await startWebhookReceiver();
    receiver = r;
    dir = mkdtempSync(join(tmpdir(), 'notify-receivers-'));
    const policies = join(dir, 'policies');
    mkdirSync(policies);
    writeFileSync(join(policies, 'emea-fleet.yaml'), stringify(policy('emea-fleet', ['emea'])));
    writeFileSync(join(policies, 'us-fleet.yaml'), stringify(policy('us-fleet', ['us'])));
    const teamsUrlFile = join(dir, 'teams-url');
    writeFileSync(teamsUrlFile, `${r.url}${TEAMS_PATH}\n`, { mode: 0o600 });
    const settings = parse(readFileSync(h.settingsFile, 'utf8')) as Record<string, unknown>;
    settings.notify = [
      {
        name: 'emea-chat',
        slack: { urlEnv: 'SLACK_EMEA_URL' },
        events: ['rollout.halted', 'rollout.resumed', 'rollout.converged', 'cohort.quarantined'],
        orgs: ['emea'],
      },
      { name: 'us-chat', teams: { urlFile: teamsUrlFile }, orgs: ['us'] },
      {
        name: 'oncall',
        pagerduty: { routingKeyEnv: 'PD_ROUTING_KEY', severity: 'error', url: `${r.url}${PD_PATH}` },
        window: '1s',
      },
    ];
    writeFileSync(h.settingsFile, stringify(settings));
    h.env.SLACK_EMEA_URL = `${r.url}${SLACK_PATH}`;
    h.env.PD_ROUTING_KEY = ROUTING_KEY;

    // The defaults, and one sample message to the on-call receiver with the service's answer.
    const printed = await h.cli(['notify', '--print']);
    expect(printed.code).toBe(0);
    expect(printed.out).toMatch(/^rollout\.halted +\{message\}$/m);
    expect(printed.out).toMatch(/^collectors\.failed +\{count\} Collectors failed in \{orgs\}/m);
    const tested = await h.cli(['notify', '--test', 'oncall']);
    expect(tested.out).toContain(
      'sent a sample rollout.halted message to oncall: pagerduty at http://127.0.0.1',
    );
    expect(tested.out).toContain('answered 200: delivered');
    expect(tested.code).toBe(0);
    const sample = PagerDutyPayload.parse(JSON.parse(r.requests[0]?.body ?? ''));
    expect(sample).toMatchObject({
      event_action: 'trigger',
      dedup_key: 'fleet-upgrade/sample@19.480-2/halted',
    });
    const unknown = await h.cli(['notify', '--test', 'nobody']);
    expect(unknown.code).toBe(64);
    expect(unknown.out).toContain(
      "no receiver or webhook named 'nobody' in the settings (there are: emea-chat, us-chat, oncall)",
    );
    r.requests.length = 0;

    const port = await freePort();
    const run = h.spawnCli(['run', '--policies', policies, '--listen', `127.0.0.1:${port}`]);
    const halted = await h.waitFor(
      (s) =>
        s.rollouts.some((x) => x.id === 'emea-fleet@19.480-2' && x.phase === 'halted') &&
        s.rollouts.some((x) => x.id === 'us-fleet@19.480-2' && x.phase === 'converged'),
      60_000,
    );
    expect(halted.rollouts).toHaveLength(2);
    // us-fleet converged by upgrading us's 4 Collectors (emea-fleet, first in file order, claims none of them).
    expect(halted.rollouts.find((x) => x.id === 'us-fleet@19.480-2')?.byOrg).toEqual([
      expect.objectContaining({ org: 'us', done: 4, total: 4 }),
    ]);
    const on = (path: string) => r.requests.filter((q) => q.path === path && q.status === 200);
    await waitUntil(
      () => on(PD_PATH).length >= 1 && on(SLACK_PATH).length >= 1,
      20_000,
      `the halt told; ${run.output()}`,
    );
    await waitUntil(
      () => on(TEAMS_PATH).some((q) => q.body.includes('converged')),
      20_000,
      'us told of its convergence',
    );

    const slack = on(SLACK_PATH).map((q) => SlackPayload.parse(JSON.parse(q.body)));
    expect(slack.map((p) => slackText(p)).join('\n')).toContain('emea-fleet@19.480-2 halted');
    for (const p of slack) expect(slackText(p)).not.toContain('us-fleet');
    const teams = on(TEAMS_PATH).map((q) => TeamsPayload.parse(JSON.parse(q.body)));
    for (const t of teams) expect(JSON.stringify(t)).not.toContain('emea-fleet');
    const pages = () => on(PD_PATH).map((q) => PagerDutyPayload.parse(JSON.parse(q.body)));
    expect(pages()).toHaveLength(1);
    expect(pages()[0]).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: 'fleet-upgrade/emea-fleet@19.480-2/halted',
      payload: { severity: 'error', component: 'emea-fleet', group: 'emea', class: 'rollout.halted' },
    });

    // An operator resumes: the incident is resolved (after the 1 s window), the channel hears who.
    const resumed = await h.cli(['resume', 'emea-fleet@19.480-2']);
    expect(resumed.code).toBe(0);
    await waitUntil(() => pages().length === 2, 20_000, `the resolve; ${run.output()}`);
    expect(pages()[1]).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'resolve',
      dedup_key: 'fleet-upgrade/emea-fleet@19.480-2/halted',
    });
    await waitUntil(
      () => on(SLACK_PATH).some((q) => q.body.includes('rollout.resumed')),
      20_000,
      'the resume in emea-chat',
    );
    const resumedMsg = on(SLACK_PATH).find((q) => q.body.includes('rollout.resumed'));
    expect(slackText(SlackPayload.parse(JSON.parse(resumedMsg?.body ?? '')))).toMatch(
      /\*Who acted\*\n\S+@\S+/,
    );

    // No URL path or routing key in the output, the metrics, the Redis keys or the groups.
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(
      /fleet_upgrade_webhook_deliveries_total\{webhook="oncall",outcome="delivered"\} 2/,
    );
    const keys = (await h.redis.keys('*')).join('\n');
    const groups = JSON.stringify(await h.redis.xinfo('GROUPS', h.state.keys.outbox));
    expect(groups).toContain('notify:emea-chat');
    const output = [run.output(), printed.out, tested.out, unknown.out, resumed.out].join('\n');
    for (const secret of [ROUTING_KEY, 'e2eSlackSecret31', 'e2eTeamsSig88', '/workflows/us', 'B0E2E']) {
      expect(output, secret).not.toContain(secret);
      expect(metrics, secret).not.toContain(secret);
      expect(keys, secret).not.toContain(secret);
      expect(groups, secret).not.toContain(secret);
    }
    run.kill('SIGTERM');
    expect(await exitOf(run, 15_000)).toBe(0);
  }, 120_000);
});
