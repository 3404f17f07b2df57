/**
 * The `notify:` receivers: the settings section read through `loadDaemonConfig` from a real file
 * (secrets from a variable or a file, never inline; errors with file:line:field; template
 * placeholders checked), and each message shape built within its service's documented limits
 * (test/support/receiver-shapes.ts) even from hostile, oversized events.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { messageFacts } from '../../../src/notify/message-facts.js';
import { DEFAULT_TEMPLATES, fillTemplate } from '../../../src/notify/message-templates.js';
import { PAGERDUTY_EVENTS_URL, type Receiver } from '../../../src/notify/receiver.js';
import { receiverBody } from '../../../src/notify/receiver-body.js';
import { pageAction } from '../../../src/notify/receiver-plan.js';
import type { OutboxEvent } from '../../../src/notify/schema.js';
import { Secret } from '../../../src/notify/secret.js';
import { printTemplates } from '../../../src/notify/send-sample.js';
import { configError } from '../../support/config-error.js';
import { PagerDutyPayload, SlackPayload, TeamsPayload } from '../../support/receiver-shapes.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function settings(lines: string[], extra: Record<string, string> = {}): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'notify-receivers-'));
  dirs.push(dir);
  const file = join(dir, 'fleet-upgrade.yaml');
  writeFileSync(file, `${lines.join('\n').replaceAll('DIR', dir)}\n`);
  for (const [name, content] of Object.entries(extra)) writeFileSync(join(dir, name), content);
  return { file, dir };
}
const load = (file: string, env: NodeJS.ProcessEnv = {}) =>
  loadDaemonConfig({ env, flags: { config: file }, needApi: false });

const receiver = (kind: Receiver['kind'], over: Partial<Receiver> = {}): Receiver => ({
  kind,
  windowMs: 60_000,
  templates: DEFAULT_TEMPLATES,
  severity: 'warning',
  routingKey: new Secret('rk-123'),
  ...over,
});

const halt = (over: Partial<OutboxEvent> = {}): OutboxEvent => ({
  id: 'e1',
  type: 'rollout.halted',
  rollout: 'linux@19.480-2',
  policy: 'linux',
  build: '19.480-2',
  at: Date.UTC(2026, 10, 28, 10),
  message: 'linux@19.480-2 halted: failed > 0',
  detail: { counts: { succeeded: 3, failed: 1 } },
  ...over,
});

describe('notify: in the settings file', () => {
  it('reads each kind, its secret from a variable or a file, and fills in the defaults', () => {
    const { file } = settings(
      [
        'notify:',
        '  - name: emea-chat',
        '    slack: { urlEnv: SLACK_EMEA_URL }',
        '    events: [rollout.halted, collectors.failed]',
        '    orgs: [emea]',
        '  - name: sre-teams',
        '    teams: { urlFile: DIR/teams-url }',
        '    policies: [linux]',
        '    templates:',
        "      rollout.halted: '{rollout} stopped ({progress}); ask {actor}'",
        '  - name: oncall',
        '    pagerduty: { routingKeyEnv: PD_KEY, severity: critical }',
        '    window: 2m',
      ],
      { 'teams-url': 'https://example.webhook.office.com/workflows/abc?sig=zz\n' },
    );
    const [slack, teams, pd, ...rest] = load(file, {
      SLACK_EMEA_URL: 'https://hooks.slack.com/services/T0/B0/xyz',
      PD_KEY: 'pd-routing-key',
    }).webhooks;
    expect(rest).toEqual([]);
    expect(slack?.receiver).toMatchObject({ kind: 'slack', windowMs: 60_000, orgs: new Set(['emea']) });
    expect(slack?.events).toEqual(new Set(['rollout.halted', 'collectors.failed']));
    expect(teams?.url).toBe('https://example.webhook.office.com/workflows/abc?sig=zz');
    expect(teams?.receiver?.templates['rollout.halted']).toBe('{rollout} stopped ({progress}); ask {actor}');
    expect(teams?.receiver?.templates['rollout.converged']).toBe('{message}');
    expect(pd).toMatchObject({
      url: PAGERDUTY_EVENTS_URL,
      receiver: { kind: 'pagerduty', severity: 'critical', windowMs: 120_000 },
    });
    expect(pd?.receiver?.routingKey?.reveal()).toBe('pd-routing-key');
    const logged = JSON.stringify([slack, teams, pd]);
    for (const secret of ['pd-routing-key', '/services/T0/B0/xyz', 'sig=zz'])
      expect(logged).not.toContain(secret);
  });

  it.each([
    [
      'an inline routing key',
      ['notify:', '  - name: p', '    pagerduty:', '      routingKey: abc'],
      '4:7',
      'notify[0].pagerduty.routingKey',
      'an inline routing key is refused',
    ],
    [
      'two kinds',
      [
        'notify:',
        '  - name: x',
        '    slack: { url: "https://a.example/x" }',
        '    teams: { url: "https://a.example/y" }',
      ],
      '2:5',
      'notify[0]',
      'set exactly one of slack, teams and pagerduty',
    ],
    [
      'an unknown placeholder',
      [
        'notify:',
        '  - name: x',
        '    slack: { url: "https://a.example/x" }',
        '    templates:',
        "      rollout.halted: '{rollout} {secret}'",
      ],
      '5:7',
      'notify[0].templates.rollout.halted',
      'unknown placeholder',
    ],
    [
      'a name a webhook has',
      [
        'webhooks:',
        '  - { name: ops, url: "https://a.example/w" }',
        'notify:',
        '  - name: ops',
        '    slack: { url: "https://a.example/x" }',
      ],
      '4:5',
      'notify[0].name',
      "a webhook is named 'ops' too",
    ],
    [
      'a variable not set',
      ['notify:', '  - name: x', '    slack: { urlEnv: NOT_SET_X }'],
      '3:14',
      'notify[0].slack.urlEnv',
      'the environment variable NOT_SET_X is not set',
    ],
  ])('refuses %s, naming the file, line and field', (_what, lines, at, field, reason) => {
    const { file } = settings(lines);
    const err = configError(() => load(file));
    expect(err.message).toContain(`${file}:${at}: ${field}: `);
    expect(err.message).toContain(reason);
    expect(err.message).not.toContain('abc');
  });
});

describe('message shapes', () => {
  const huge = 'x'.repeat(10_000);
  const hostile = halt({
    message: `<!channel> & ${huge}`,
    policy: huge,
    actor: `ops@${huge}`,
    rollout: `r@${'9'.repeat(400)}`,
  });

  it('Slack: Block Kit within the limits, with a plain-text fallback, escaped', () => {
    const ok = SlackPayload.parse(
      JSON.parse(receiverBody(receiver('slack'), [{ event: halt(), orgs: ['emea'] }])),
    );
    expect(ok.blocks.map((b) => b.type)).toEqual(['header', 'section', 'section', 'context']);
    expect(ok.text).toContain('linux@19.480-2 halted');
    expect(ok.text).toContain('Progress: 3 succeeded, 1 failed');
    const cut = SlackPayload.parse(
      JSON.parse(receiverBody(receiver('slack'), [{ event: hostile, orgs: ['emea'] }])),
    );
    expect(JSON.stringify(cut)).not.toContain('<!channel>');
    expect(JSON.stringify(cut)).toContain('&lt;!channel&gt; &amp;');
  });

  it('Teams: an Adaptive Card 1.4 in the Workflows envelope, with its required fields', () => {
    const card = TeamsPayload.parse(
      JSON.parse(receiverBody(receiver('teams'), [{ event: hostile, orgs: ['us'] }])),
    );
    const content = card.attachments[0]?.content as Record<string, unknown>;
    expect(content).toMatchObject({ type: 'AdaptiveCard', version: '1.4' });
    expect(JSON.stringify(content).length).toBeLessThan(20_000);
  });

  it('PagerDuty: v2 trigger and resolve with their required fields, enums and lengths', () => {
    const trigger = PagerDutyPayload.parse(
      JSON.parse(receiverBody(receiver('pagerduty'), [{ event: hostile, orgs: ['emea'] }])),
    );
    expect(trigger).toMatchObject({
      routing_key: 'rk-123',
      event_action: 'trigger',
      payload: { severity: 'warning', source: 'fleet-upgrade' },
    });
    expect(trigger.dedup_key.length).toBe(255);
    const resolve = PagerDutyPayload.parse(
      JSON.parse(
        receiverBody(receiver('pagerduty'), [
          { event: halt({ type: 'rollout.resumed', detail: { released: 'halted' } }), orgs: [] },
        ]),
      ),
    );
    expect(resolve).toEqual({
      routing_key: 'rk-123',
      event_action: 'resolve',
      dedup_key: 'fleet-upgrade/linux@19.480-2/halted',
    });
    // Only what needs a person pages: an org whose credentials are refused; not one that is slow.
    expect(
      pageAction(halt({ type: 'org.waiting', detail: { org: 'emea', reason: 'credentials refused (401)' } })),
    ).toEqual({ action: 'trigger', subject: 'org:emea' });
    expect(
      pageAction(halt({ type: 'org.waiting', detail: { org: 'emea', reason: 'service unavailable (503)' } })),
    ).toBeUndefined();
    expect(pageAction(halt({ type: 'rollout.converged' }))).toBeUndefined();
    // A daemon problem older than 5 minutes: one incident per problem, whichever rollout tells it.
    const problem = {
      kind: 'policy_invalid',
      subject: 'policies/edge.yaml',
      reason: 'x',
      fix: 'y',
      since: 0,
    };
    const told = (type: string, rollout: string) =>
      PagerDutyPayload.parse(
        JSON.parse(
          receiverBody(receiver('pagerduty'), [
            { event: { ...halt({ type, detail: problem }), rollout }, orgs: [] },
          ]),
        ),
      );
    expect(told('daemon.problem', 'linux@19.480-2')).toMatchObject({
      event_action: 'trigger',
      dedup_key: 'fleet-upgrade/daemon:policy_invalid:policies/edge.yaml',
    });
    expect(told('daemon.problem', 'mac@19.480-2').dedup_key).toBe(
      'fleet-upgrade/daemon:policy_invalid:policies/edge.yaml',
    );
    expect(told('daemon.problem_ended', 'mac@19.480-2')).toEqual({
      routing_key: 'rk-123',
      event_action: 'resolve',
      dedup_key: 'fleet-upgrade/daemon:policy_invalid:policies/edge.yaml',
    });
  });

  it("links to the rollout in the deployment's HTTP API when the settings name publicUrl", () => {
    const { file } = settings([
      'publicUrl: https://fleet.example.com/',
      'notify:',
      '  - { name: s, slack: { url: "https://a.example/s" } }',
      '  - { name: t, teams: { url: "https://a.example/t" } }',
      '  - { name: p, pagerduty: { routingKeyEnv: K, url: "https://a.example/p" } }',
    ]);
    const [s, t, p] = load(file, { K: 'k' }).webhooks.map((w) => w.receiver as Receiver);
    const link = 'https://fleet.example.com/rollouts/linux%4019.480-2';
    const batch = [{ event: halt(), orgs: ['emea'] }];
    const slack = SlackPayload.parse(JSON.parse(receiverBody(s as Receiver, batch)));
    expect(JSON.stringify(slack.blocks.at(-1))).toContain(`<${link}|open the rollout>`);
    const teams = TeamsPayload.parse(JSON.parse(receiverBody(t as Receiver, batch)));
    expect(teams.attachments[0]?.content).toMatchObject({ actions: [{ type: 'Action.OpenUrl', url: link }] });
    const pd = PagerDutyPayload.parse(JSON.parse(receiverBody(p as Receiver, batch)));
    expect(pd).toMatchObject({ links: [{ href: link }] });
    const bad = settings(['publicUrl: "https://fleet.example.com/?token=abc"']);
    expect(configError(() => load(bad.file)).message).toContain(
      `${bad.file}:1:1: publicUrl: expected a URL without credentials, query, fragment, spaces or | < >`,
    );
  });

  it('templates fill only the documented fields; no code runs; values are cut', () => {
    const facts = messageFacts(
      receiver('slack', {
        templates: {
          ...DEFAULT_TEMPLATES,
          'rollout.halted': '{rollout} by {actor}: {process} {constructor} {__proto__}',
        },
      }),
      [{ event: halt({ actor: 'ana@laptop' }), orgs: ['emea'] }],
    );
    expect(facts.text).toBe('linux@19.480-2 by ana@laptop: {process} {constructor} {__proto__}');
    expect(fillTemplate('{message}', { message: huge }).length).toBe(500);
    expect(printTemplates()).toMatch(/^rollout\.halted +\{message\}$/m);
    expect(printTemplates()).toMatch(/^\{causes\} +a summary: the top causes/m);
  });
});
