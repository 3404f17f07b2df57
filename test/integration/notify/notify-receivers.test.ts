/**
 * Slack, Teams and PagerDuty receivers (`notify:`) through the real path: the settings' section
 * parsed and resolved, events recorded into the outbox of the run's Redis, the notifier delivering
 * them to loopback receivers over HTTP. Every payload is checked against the shape each service
 * documents (test/support/receiver-shapes.ts). Routing by organization, one incident per
 * condition that resume resolves and a flap does not reopen, a flood of failures as one message
 * per receiver, a receiver away for 2 minutes (on an accelerated clock) that then gets every
 * message in order and none twice, a summary held by a process that dies sent once by the next
 * one, and no URL or routing key in a log line, metric, Redis key or
 * error message.
 */
import { describe, expect, it } from 'vitest';
import { createScaledClock } from '../../../src/lib/clock.js';
import { closeRedis, createRedis } from '../../../src/lib/redis/create-redis.js';
import { createMetrics } from '../../../src/metrics/create-metrics.js';
import { readReceivers } from '../../../src/notify/read-receivers.js';
import type { Webhook } from '../../../src/notify/read-webhooks.js';
import { ReceiverListFile } from '../../../src/notify/schema.js';
import type { NotifierOptions } from '../../../src/notify/start-notifier.js';
import type { RecordedEvent, RolloutEvent } from '../../../src/rollout/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { PagerDutyPayload, SlackPayload, slackText, TeamsPayload } from '../../support/receiver-shapes.js';
import { useNotifier } from '../../support/use-notifier.js';
import { waitUntil } from '../../support/wait-until.js';
import type { ReceivedRequest } from '../../support/webhook-receiver.js';

const notify = useNotifier();

const ROUTING_KEY = 'R0UT1NGKEYe93f0c2a4e9d1b4c578a2e';
const SLACK_PATH = '/services/T0EMEA/B0CHAT/SlackSecretPath77';
const TEAMS_PATH = '/workflows/us-team/triggers/manual/paths/invoke?sig=TeamsSig4411';
const PD_PATH = '/pd/v2/enqueue';

/** The `notify:` section as a settings file holds it, resolved as `run` resolves it. */
function receivers(list: unknown[], env: NodeJS.ProcessEnv = {}): Webhook[] {
  const read = readReceivers({
    list: ReceiverListFile.parse(list),
    file: 'settings.yaml',
    env: { PD_KEY: ROUTING_KEY, ...env },
  });
  expect(read.issues).toEqual([]);
  return read.webhooks;
}

const ORGS: Record<string, string[]> = { 'emea-fleet@19.480-2': ['emea'], 'us-fleet@19.480-2': ['us'] };

async function start(webhooks: Webhook[], over: Partial<NotifierOptions> = {}) {
  const log = captureLogger('debug');
  const metrics = createMetrics();
  await notify.start({
    webhooks,
    logger: log.logger,
    metrics,
    orgsOf: async (id) => ORGS[id],
    ...over,
  });
  return { log, metrics };
}

function event(
  rollout: string,
  type: RolloutEvent['type'],
  over: Partial<RolloutEvent> = {},
): Promise<RecordedEvent> {
  const [policy = '', build = ''] = rollout.split('@');
  return notify.events.record({
    type,
    rollout,
    policy,
    build,
    at: Date.now(),
    source: 'scheduler',
    message: `${rollout}: ${type}`,
    ...over,
  });
}

const halted = (rollout: string) =>
  event(rollout, 'rollout.halted', {
    source: 'gate',
    message: `${rollout} halted: failed > 0 (1 of 4)`,
    detail: { criterion: 'failed > 0', counts: { succeeded: 3, failed: 1 } },
  });
const resumed = (rollout: string) =>
  event(rollout, 'rollout.resumed', {
    source: 'operator',
    actor: 'ops@bastion',
    message: `${rollout} resumed by ops@bastion: released the halt`,
    detail: { released: 'halted' },
  });

const on = (path: string) => (r: ReceivedRequest) => r.path === path;
const pd = (reqs: ReceivedRequest[]) =>
  reqs.filter(on(PD_PATH)).map((r) => PagerDutyPayload.parse(JSON.parse(r.body)));

const CHAT = [
  { name: 'emea-chat', slack: { url: '' }, orgs: ['emea'], window: '300ms' },
  { name: 'us-chat', teams: { url: '' }, orgs: ['us'], window: '300ms' },
  { name: 'oncall', pagerduty: { routingKeyEnv: 'PD_KEY', url: '', severity: 'critical' }, window: '300ms' },
];
function chat(url: string): unknown[] {
  return [
    { ...CHAT[0], slack: { url: `${url}${SLACK_PATH}` } },
    { ...CHAT[1], teams: { url: `${url}${TEAMS_PATH}` } },
    { ...CHAT[2], pagerduty: { routingKeyEnv: 'PD_KEY', url: `${url}${PD_PATH}`, severity: 'critical' } },
  ];
}

describe('notify receivers', () => {
  it("a halt in emea reaches only emea's channel and triggers one incident; resume resolves it; a flap pages once", async () => {
    const r = notify.receiver;
    await start(receivers(chat(r.url)));
    await halted('emea-fleet@19.480-2');
    await event('us-fleet@19.480-2', 'wave.started', { detail: { wave: 1, of: 2 } });
    await waitUntil(
      () => r.delivered().length === 3,
      10_000,
      'the halt in Slack and PagerDuty, the wave in Teams',
    );

    const slack = r.requests.filter(on(SLACK_PATH)).map((q) => SlackPayload.parse(JSON.parse(q.body)));
    expect(slack).toHaveLength(1);
    expect(slackText(slack[0] as SlackPayload)).toContain('emea-fleet@19.480-2 halted');
    expect(slackText(slack[0] as SlackPayload)).toContain('*Organization*\nemea');
    const teams = r.requests.filter(on(TEAMS_PATH)).map((q) => TeamsPayload.parse(JSON.parse(q.body)));
    expect(teams).toHaveLength(1);
    expect(JSON.stringify(teams)).toContain('us-fleet@19.480-2: wave.started');
    expect(JSON.stringify(teams)).not.toContain('emea');
    const [trigger] = pd(r.requests);
    expect(trigger).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: 'trigger',
      dedup_key: 'fleet-upgrade/emea-fleet@19.480-2/halted',
      payload: {
        severity: 'critical',
        source: 'fleet-upgrade',
        component: 'emea-fleet',
        group: 'emea',
        class: 'rollout.halted',
      },
    });

    // Resume: the channel says who acted; the incident is resolved once the window passed.
    await resumed('emea-fleet@19.480-2');
    await waitUntil(() => pd(r.requests).length === 2, 10_000, 'the resolve');
    expect(pd(r.requests)[1]).toEqual({
      routing_key: ROUTING_KEY,
      event_action: 'resolve',
      dedup_key: 'fleet-upgrade/emea-fleet@19.480-2/halted',
    });
    const resumedMsg = r.requests.filter(on(SLACK_PATH)).at(-1) as ReceivedRequest;
    expect(slackText(SlackPayload.parse(JSON.parse(resumedMsg.body)))).toContain('*Who acted*\nops@bastion');

    // A flap: halted again, resumed, halted again within the window: the incident stays open.
    await halted('emea-fleet@19.480-2');
    await waitUntil(() => pd(r.requests).length === 3, 10_000, 'the second trigger');
    await resumed('emea-fleet@19.480-2');
    await halted('emea-fleet@19.480-2');
    await waitUntil(() => pd(r.requests).length === 4, 10_000, 'the relapse');
    await new Promise((res) => setTimeout(res, 800)); // past the window: no resolve follows
    expect(pd(r.requests).map((p) => p.event_action)).toEqual(['trigger', 'resolve', 'trigger', 'trigger']);
    // Nothing of the us rollout paged, nothing of emea reached the us channel.
    expect(r.requests.filter(on(TEAMS_PATH))).toHaveLength(1);
  });

  it('200 failures within the window make one message per receiver, with the top failure classes', async () => {
    const r = notify.receiver;
    const { metrics } = await start(
      receivers(chat(r.url).map((c) => ({ ...(c as object), orgs: undefined, window: '2s' }))),
      { maxHeld: 50 },
    );
    const states = ['failed', 'failed', 'timed_out', 'error'] as const;
    for (let i = 0; i < 200; i++) {
      const rollout = i % 2 === 0 ? 'emea-fleet@19.480-2' : 'us-fleet@19.480-2';
      const byState = { failed: 0, timed_out: 0, error: 0 };
      const byClass: Record<string, number> = {};
      for (let k = 0; k <= i; k += 2) {
        const j = k / 2;
        const state = states[j % 4] as keyof typeof byState;
        byState[state]++;
        // A failed Collector's class is its message's (disk_space, network); the others' their state.
        const cls = state === 'failed' ? (j % 8 === 1 ? 'network' : 'disk_space') : state;
        byClass[cls] = (byClass[cls] ?? 0) + 1;
      }
      await event(rollout, 'collectors.failed', {
        detail: { new: 1, total: Math.floor(i / 2) + 1, byState, byClass },
      });
    }
    await waitUntil(() => r.delivered().length === 2, 15_000, 'one summary in Slack and one in Teams');
    await new Promise((res) => setTimeout(res, 500));
    expect(r.requests.map((q) => q.path).sort()).toEqual([SLACK_PATH, TEAMS_PATH].sort());
    const slack = SlackPayload.parse(JSON.parse(r.requests.find(on(SLACK_PATH))?.body ?? ''));
    expect(slack.text).toMatch(
      /^200 Collectors failed in emea, us \(emea-fleet@19.480-2, us-fleet@19.480-2\); top causes: 74 disk_space, 50 error, 50 timed_out\n/,
    );
    const teams = TeamsPayload.parse(JSON.parse(r.requests.find(on(TEAMS_PATH))?.body ?? ''));
    expect(JSON.stringify(teams)).toContain('200 Collectors failed');
    const delivered = (await metrics.webhookDeliveries.get()).values.filter(
      (v) => v.labels.outcome === 'delivered',
    );
    expect(Object.fromEntries(delivered.map((v) => [v.labels.webhook, v.value]))).toEqual({
      'emea-chat': 1,
      'us-chat': 1,
      oncall: 0,
    });
    // All 200 entries acknowledged in every receiver's group.
    for (const name of ['emea-chat', 'us-chat', 'oncall'])
      await waitUntil(
        async () =>
          ((await notify.redis.redis.xpending(notify.keys.outbox, `notify:${name}`)) as [number])[0] === 0,
        5000,
        `${name}: every entry acknowledged`,
      );
  });

  it('a receiver away for 2 minutes gets every message afterwards, in order, none twice', async () => {
    const r = notify.receiver;
    // Two minutes of the notifier's clock pass in 2 real seconds; back-off from 1 s to 5 min.
    const clock = createScaledClock(60);
    const { log, metrics } = await start(receivers([{ ...(chat(r.url)[0] as object), orgs: undefined }]), {
      clock,
      pollMs: 1200,
      claimIdleMs: 30_000,
    });
    await r.down();
    const started = clock.now();
    const recorded: RecordedEvent[] = [];
    for (let i = 0; i < 24; i++) {
      recorded.push(
        await event('emea-fleet@19.480-2', 'wave.completed', { message: `emea-fleet@19.480-2: step ${i}` }),
      );
      await new Promise((res) => setTimeout(res, 80));
    }
    await waitUntil(() => clock.now() - started >= 120_000, 10_000, 'two minutes of the clock');
    r.answer = () => 200;
    await r.up();
    await waitUntil(() => r.delivered().length >= 24, 15_000, 'every message after the outage');
    await new Promise((res) => setTimeout(res, 300));
    expect(r.delivered()).toEqual(recorded.map((e) => e.id));
    const texts = r.requests.map((q) => SlackPayload.parse(JSON.parse(q.body)).text.split('\n')[0]);
    expect(texts).toEqual(recorded.map((_, i) => `emea-fleet@19.480-2: step ${i}`));
    const failed = (await metrics.webhookDeliveries.get()).values.find(
      (v) => v.labels.webhook === 'emea-chat' && v.labels.outcome === 'failed',
    )?.value;
    // Connection refused for 2 minutes: a doubling back-off (1 s ... 64 s), not a flood.
    expect(failed).toBeGreaterThanOrEqual(4);
    expect(failed).toBeLessThanOrEqual(10);
    expect(log.text()).toContain('webhook delivery failed');
  });

  it('a summary held by a process that dies is sent by the next one, once, with every failure', async () => {
    const r = notify.receiver;
    const slackOnly = () => receivers([{ ...(chat(r.url)[0] as object), orgs: undefined, window: '1s' }]);
    const connection = createRedis(notify.redis.url, { name: 'notifier-dies' });
    notify.closeAfter(() => closeRedis(connection));
    await notify.start({
      redis: connection,
      webhooks: slackOnly(),
      consumer: 'a',
      orgsOf: async (id) => ORGS[id],
      logger: captureLogger('warn').logger,
    });
    // Events recorded before they carried failure classes: the summary names their end states.
    for (let i = 0; i < 30; i++)
      await event('emea-fleet@19.480-2', 'collectors.failed', {
        detail: { new: 1, total: i + 1, byState: { failed: i + 1 } },
      });
    // Process a read them all and holds one summary in its window; then it dies for Redis.
    await waitUntil(
      async () =>
        ((await notify.redis.redis.xpending(notify.keys.outbox, 'notify:emea-chat')) as [number])[0] === 30,
      5000,
      'all 30 held by a',
    );
    connection.disconnect();
    await notify.start({
      webhooks: slackOnly(),
      consumer: 'b',
      orgsOf: async (id) => ORGS[id],
      logger: captureLogger('warn').logger,
    });
    await waitUntil(() => r.delivered().length === 1, 10_000, 'the summary, sent by b');
    await new Promise((res) => setTimeout(res, 1500));
    expect(r.requests.filter((q) => q.status === 200)).toHaveLength(1);
    expect(SlackPayload.parse(JSON.parse(r.requests[0]?.body ?? '')).text).toMatch(
      /^30 Collectors failed in emea \(emea-fleet@19.480-2\); top causes: 30 failed/,
    );
    await waitUntil(
      async () =>
        ((await notify.redis.redis.xpending(notify.keys.outbox, 'notify:emea-chat')) as [number])[0] === 0,
      5000,
      'every entry acknowledged',
    );
  });

  it('no URL path, query or routing key in a log line, a metric, a Redis key or an error message', async () => {
    const r = notify.receiver;
    // Each service echoes what it got in an error: the URL, the body with the routing key.
    r.answer = (req, n) =>
      n <= 3
        ? (res) => {
            res.writeHead(req.path === PD_PATH ? 400 : 500, { 'content-type': 'text/plain' });
            res.end(`bad request to ${req.path}: ${req.body.slice(0, 400)}`);
          }
        : 200;
    const { log, metrics } = await start(
      receivers(chat(r.url).map((c) => ({ ...(c as object), orgs: undefined }))),
    );
    await halted('emea-fleet@19.480-2');
    await waitUntil(() => r.delivered().length === 3, 15_000, 'delivered after the errors');
    const text = log.text();
    expect(text).toContain('webhook delivery failed');
    const exposed = await metrics.registry.metrics();
    const keys = (await notify.redis.redis.keys(`${notify.redis.prefix}*`)).join('\n');
    const groups = JSON.stringify(await notify.redis.redis.xinfo('GROUPS', notify.keys.outbox));
    for (const secret of [ROUTING_KEY, 'SlackSecretPath77', 'TeamsSig4411', '/workflows/us-team', 'B0CHAT']) {
      expect(text, secret).not.toContain(secret);
      expect(exposed, secret).not.toContain(secret);
      expect(keys, secret).not.toContain(secret);
      expect(groups, secret).not.toContain(secret);
    }
    // A settings error names the field, never the value.
    const bad = readReceivers({
      list: ReceiverListFile.parse([{ name: 'x', slack: { urlEnv: 'SLACK_X' } }]),
      file: 'settings.yaml',
      env: { SLACK_X: `not-a-url${SLACK_PATH}` },
    });
    expect(bad.issues.map((i) => `${i.field}: ${i.reason}`)).toEqual([
      'notify[0].slack.urlEnv: SLACK_X does not hold an http:// or https:// URL',
    ]);
    const inline = ReceiverListFile.safeParse([{ name: 'p', pagerduty: { routingKey: ROUTING_KEY } }]);
    expect(inline.success).toBe(false);
    expect(JSON.stringify(inline.error?.issues)).not.toContain(ROUTING_KEY);
  });
});
