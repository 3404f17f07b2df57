/**
 * Webhook delivery through the real path: events recorded with `EventLog.record` into the outbox
 * of the run's Redis, the notifier delivering them to a receiver on loopback. Every event arrives
 * at least once with a valid signature, a receiver that fails or is down gets everything once it
 * is back, the event filter and the Slack format hold, a refused event neither blocks the others
 * nor lives forever, redirects are not followed, answers are not read beyond a small cap, and no
 * log line carries a secret or the URL's path or query.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/lib/logger.js';
import { createMetrics, type Metrics } from '../../../src/metrics/create-metrics.js';
import { readWebhooks, type Webhook } from '../../../src/notify/read-webhooks.js';
import { Secret } from '../../../src/notify/secret.js';
import { type Notifier, type NotifierOptions, webhookGroup } from '../../../src/notify/start-notifier.js';
import type { RecordedEvent, RolloutEventType } from '../../../src/rollout/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useNotifier } from '../../support/use-notifier.js';
import { waitUntil } from '../../support/wait-until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const notify = useNotifier();
const { redis } = notify;
let metrics: Metrics;
let receiver: WebhookReceiver;

beforeEach(() => {
  metrics = createMetrics();
  receiver = notify.receiver;
});

function hook(url: string, over: Partial<Webhook> = {}): Webhook {
  return {
    name: 'test',
    url,
    events: '*',
    format: 'json',
    timeoutMs: 2000,
    retry: { initialMs: 50, maxMs: 200, giveUpAfterMs: 86_400_000 },
    ...over,
  };
}

function start(
  webhooks: Webhook[],
  logger: Logger = captureLogger('warn').logger,
  over: Partial<NotifierOptions> = {},
): Promise<Notifier> {
  return notify.start({ webhooks, logger, metrics, ...over });
}

const TYPES: RolloutEventType[] = [
  'rollout.started',
  'wave.started',
  'wave.completed',
  'rollout.baking',
  'rollout.converged',
];

function record(type: RolloutEventType, message = `${type} happened`): Promise<RecordedEvent> {
  return notify.events.record({
    type,
    rollout: 'linux@19.470-4',
    policy: 'linux',
    build: '19.470-4',
    at: Date.now(),
    source: 'scheduler',
    message,
    detail: { wave: 1 },
  });
}

async function counted(webhook: string, outcome: string): Promise<number> {
  const m = await metrics.webhookDeliveries.get();
  return m.values.find((v) => v.labels.webhook === webhook && v.labels.outcome === outcome)?.value ?? 0;
}

async function pendingInRedis(name: string): Promise<number> {
  const [count] = (await redis.redis.xpending(notify.keys.outbox, webhookGroup(name))) as [number];
  return count;
}

describe('delivery', () => {
  it('delivers every event once, signed, with the event as recorded, in order', async () => {
    const secret = 'whsec-test-0123456789';
    await start([hook(`${receiver.url}/hooks/a`, { secret: new Secret(secret) })]);
    const recorded: RecordedEvent[] = [];
    for (const t of TYPES) recorded.push(await record(t));
    await waitUntil(() => receiver.delivered().length === TYPES.length, 10_000, 'every event delivered');
    expect(receiver.delivered()).toEqual(recorded.map((e) => e.id));
    for (const [i, req] of receiver.requests.entries()) {
      const event = recorded[i] as RecordedEvent;
      expect(req.path).toBe('/hooks/a');
      expect(receiver.signedWith(req, secret), `signature of ${req.eventId}`).toBe(true);
      expect(receiver.signedWith(req, 'another-secret')).toBe(false);
      expect(JSON.parse(req.body)).toEqual(event);
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['x-fleet-upgrade-event']).toBe(event.type);
      expect(req.headers['x-fleet-upgrade-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    }
    await waitUntil(async () => (await pendingInRedis('test')) === 0, 5000, 'every entry acknowledged');
    expect(await counted('test', 'delivered')).toBe(TYPES.length);
    expect(await counted('test', 'failed')).toBe(0);
    const text = await metrics.registry.getSingleMetricAsString('fleet_upgrade_webhook_pending');
    expect(text).toContain('fleet_upgrade_webhook_pending{webhook="test"} 0');
  });

  it('sends no signature header without a secret', async () => {
    await start([hook(receiver.url)]);
    await record('rollout.started');
    await waitUntil(() => receiver.delivered().length === 1, 10_000, 'delivered');
    expect(receiver.requests[0]?.headers['x-fleet-upgrade-signature']).toBeUndefined();
    expect(receiver.requests[0]?.headers['x-fleet-upgrade-timestamp']).toMatch(/^\d+$/);
  });

  it('delivers what was recorded before it stops (run --once sends its last events)', async () => {
    const n = await start([hook(receiver.url)], captureLogger('warn').logger, { pollMs: 60_000 });
    const last = [await record('wave.completed'), await record('rollout.converged')];
    await n.stop();
    expect(receiver.delivered()).toEqual(last.map((e) => e.id));
    expect(await pendingInRedis('test')).toBe(0);
  });

  it('delivers an event recorded while a stop waits on an attempt under way', async () => {
    // The stop's wake comes during a round (the first event's attempt): the drain must read again
    // at once, not sleep the 60 s poll until its grace ends with the second event undelivered.
    receiver.answer = (_req, n) => (n === 1 ? 'hang' : 200);
    const n = await start([hook(receiver.url)], captureLogger('warn').logger, { pollMs: 60_000 });
    const first = await record('wave.completed');
    await receiver.waitForRequests(1, 5000);
    const second = await record('rollout.converged');
    const began = Date.now();
    const stopped = n.stop();
    receiver.release(200);
    await stopped;
    expect(receiver.delivered()).toEqual([first.id, second.id]);
    expect(Date.now() - began).toBeLessThan(2500);
    expect(await pendingInRedis('test')).toBe(0);
  });

  it('stops within its grace when the receiver does not answer, handing the event over', async () => {
    receiver.answer = () => 'hang';
    const n = await start([hook(receiver.url, { timeoutMs: 60_000 })]);
    await record('rollout.started');
    await receiver.waitForRequests(1, 5000);
    const began = Date.now();
    await n.stop();
    expect(Date.now() - began).toBeLessThan(4000);
    expect(await pendingInRedis('test')).toBe(1);
  });

  it('delivers the events recorded while no notifier ran, once one starts again', async () => {
    const first = await start([hook(receiver.url)]);
    await first.stop();
    const recorded = [await record('rollout.paused'), await record('rollout.resumed')];
    await start([hook(receiver.url)]);
    await waitUntil(() => receiver.delivered().length === 2, 10_000, 'both delivered');
    expect(receiver.delivered()).toEqual(recorded.map((e) => e.id));
  });
});

describe('the outbox', () => {
  it('is read again after it was deleted (its groups are created anew)', async () => {
    const capture = captureLogger('warn');
    await start([hook(receiver.url)], capture.logger);
    await record('rollout.started');
    await waitUntil(() => receiver.delivered().length === 1, 10_000, 'first delivered');
    await redis.redis.del(notify.keys.outbox);
    await waitUntil(
      async () =>
        ((await redis.redis.xinfo('GROUPS', notify.keys.outbox).catch(() => [])) as unknown[]).length === 1,
      5000,
      'the group created again',
    );
    const later = await record('rollout.converged');
    await waitUntil(() => receiver.delivered().includes(later.id), 10_000, 'delivered after the deletion');
    expect(capture.text()).toContain('NOGROUP');
  });
});

describe('a receiver that fails or is away', () => {
  it('gets every event once it answers again, after 500s and refused connections', async () => {
    receiver.answer = () => 500;
    await start([hook(receiver.url)]);
    const recorded = [
      await record('rollout.started'),
      await record('wave.started'),
      await record('wave.completed'),
    ];
    await receiver.waitForRequests(4, 5000);
    // The receiver is away: the webhook waits, retrying only its oldest event.
    expect(new Set(receiver.requests.map((r) => r.eventId))).toEqual(new Set([recorded[0]?.id]));
    // The wait grows (50 ms doubling to 200 ms): a few requests a second, not a flood.
    const before = receiver.requests.length;
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.requests.length - before).toBeLessThanOrEqual(15);
    await receiver.down();
    recorded.push(await record('rollout.halted'), await record('rollout.resumed'));
    await new Promise((r) => setTimeout(r, 500));
    receiver.answer = () => 200;
    await receiver.up();
    await waitUntil(() => new Set(receiver.delivered()).size === 5, 10_000, 'every event after the outage');
    expect(new Set(receiver.delivered())).toEqual(new Set(recorded.map((e) => e.id)));
    expect(receiver.delivered()).toEqual(recorded.map((e) => e.id));
    expect(await counted('test', 'failed')).toBeGreaterThanOrEqual(4);
    expect(await counted('test', 'delivered')).toBe(5);
    expect(await counted('test', 'gave_up')).toBe(0);
    await waitUntil(async () => (await pendingInRedis('test')) === 0, 5000, 'every entry acknowledged');
  });

  it('times out an attempt without an answer and does not read an endless answer', async () => {
    receiver.answer = (_req, n) =>
      n === 1
        ? 'hang'
        : (res) => {
            res.writeHead(200, { 'content-type': 'text/plain' });
            const chunk = Buffer.alloc(16 * 1024, 'x');
            const write = () => {
              while (!res.destroyed && res.write(chunk));
              if (!res.destroyed) res.once('drain', write);
            };
            write();
          };
    await start([hook(receiver.url, { timeoutMs: 300 })]);
    const event = await record('rollout.started');
    await waitUntil(async () => (await counted('test', 'delivered')) === 1, 10_000, 'delivered');
    expect(receiver.requests.map((r) => r.eventId)).toEqual([event.id, event.id]);
    expect(await counted('test', 'failed')).toBe(1);
    await waitUntil(async () => (await pendingInRedis('test')) === 0, 5000, 'acknowledged');
  });

  it('goes on with other events while one is refused, and gives that one up after giveUpAfter', async () => {
    const capture = captureLogger('warn');
    receiver.answer = (req) => (JSON.parse(req.body).type === 'rollout.halted' ? 400 : 200);
    await start(
      [hook(receiver.url, { retry: { initialMs: 50, maxMs: 100, giveUpAfterMs: 700 } })],
      capture.logger,
    );
    const refused = await record('rollout.halted');
    const others = [
      await record('wave.started'),
      await record('wave.completed'),
      await record('rollout.resumed'),
    ];
    await waitUntil(() => receiver.delivered().length === 3, 5000, 'the others delivered');
    expect(receiver.delivered()).toEqual(others.map((e) => e.id));
    await waitUntil(async () => (await counted('test', 'gave_up')) === 1, 5000, 'the refused one given up');
    expect(receiver.requests.filter((r) => r.eventId === refused.id).length).toBeGreaterThanOrEqual(2);
    const gaveUp = capture.lines().filter((l) => l.msg === 'webhook delivery given up');
    expect(gaveUp).toHaveLength(1);
    expect(gaveUp[0]).toMatchObject({
      level: 50,
      webhook: 'test',
      event: refused.id,
      type: 'rollout.halted',
    });
    expect(String(gaveUp[0]?.reason)).toContain('answered 400');
    await waitUntil(async () => (await pendingInRedis('test')) === 0, 5000, 'acknowledged');
    const attempts = receiver.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.requests.length).toBe(attempts);
  });

  it('does not follow a redirect', async () => {
    const elsewhere = await startWebhookReceiver();
    notify.closeAfter(() => elsewhere.close());
    const capture = captureLogger('warn');
    receiver.answer = () => (res) => res.writeHead(302, { location: `${elsewhere.url}/caught` }).end();
    await start(
      [hook(receiver.url, { retry: { initialMs: 50, maxMs: 50, giveUpAfterMs: 400 } })],
      capture.logger,
    );
    await record('rollout.started');
    await waitUntil(async () => (await counted('test', 'gave_up')) === 1, 5000, 'given up');
    expect(elsewhere.requests).toEqual([]);
    expect(receiver.requests.length).toBeGreaterThanOrEqual(1);
    expect(capture.text()).toContain('redirects are not followed');
  });
});

describe('what a webhook gets', () => {
  it('filters by event type and speaks Slack', async () => {
    await start([
      hook(`${receiver.url}/slack`, {
        name: 'chat',
        format: 'slack',
        events: new Set<RolloutEventType>(['rollout.halted', 'rollout.awaiting_approval']),
      }),
      hook(`${receiver.url}/all`, { name: 'all' }),
    ]);
    const recorded = [
      await record('wave.started', 'Wave 1 of 3 started: 10 Collectors.'),
      await record('rollout.halted', 'Rollout linux@19.470-4 halted: 3 of 10 failed (> 20%) <gate> & waits'),
      await record(
        'rollout.awaiting_approval',
        'Wave 2 waits for approval: fleet-upgrade promote linux@19.470-4',
      ),
      await record('rollout.converged', 'Converged: 10 succeeded.'),
    ];
    await waitUntil(
      () => receiver.delivered('/all').length === 4 && receiver.delivered('/slack').length === 2,
      10_000,
      'both webhooks served',
    );
    expect(receiver.delivered('/all')).toEqual(recorded.map((e) => e.id));
    const slack = receiver.requests.filter((r) => r.path === '/slack');
    expect(slack.map((r) => r.eventId)).toEqual([recorded[1]?.id, recorded[2]?.id]);
    expect(slack.map((r) => JSON.parse(r.body))).toEqual([
      { text: 'Rollout linux@19.470-4 halted: 3 of 10 failed (&gt; 20%) &lt;gate&gt; &amp; waits' },
      { text: 'Wave 2 waits for approval: fleet-upgrade promote linux@19.470-4' },
    ]);
    // The events the filter leaves out are acknowledged too: nothing waits for the chat webhook.
    await waitUntil(
      async () => (await pendingInRedis('chat')) === 0 && (await pendingInRedis('all')) === 0,
      5000,
      'acknowledged',
    );
    const text = await metrics.registry.getSingleMetricAsString('fleet_upgrade_webhook_pending');
    expect(text).toContain('fleet_upgrade_webhook_pending{webhook="chat"} 0');
    expect(await counted('chat', 'delivered')).toBe(2);
  });

  it('prefixes a Slack message with the rollout when the message does not name it', async () => {
    await start([hook(receiver.url, { format: 'slack' })]);
    await record('wave.completed', 'Wave 1 of 3 completed.');
    await waitUntil(() => receiver.delivered().length === 1, 10_000, 'delivered');
    expect(JSON.parse(receiver.requests[0]?.body ?? '')).toEqual({
      text: 'linux@19.470-4: Wave 1 of 3 completed.',
    });
  });
});

describe('logs', () => {
  it('never carry the secret, the URL path or its query', async () => {
    const capture = captureLogger('debug');
    const secret = 'SIGNSECRET789';
    const webhook = hook(`${receiver.url}/hooks/PATHSECRET123?token=QUERYSECRET456`, {
      secret: new Secret(secret),
    });
    receiver.answer = (req, n) =>
      n <= 2 ? (res) => res.writeHead(500).end(`cannot serve ${req.path}`) : 200;
    await start(
      [webhook, hook('http://127.0.0.1:1/down/PATHSECRET123?token=QUERYSECRET456', { name: 'away' })],
      capture.logger,
    );
    // Even a careless log line holding the settings shows neither the secret nor the URL's path.
    const { webhooks: settings } = readWebhooks({
      list: [{ url: webhook.url, secretEnv: 'HOOK_SECRET' }],
      file: 'settings.yaml',
      env: { HOOK_SECRET: secret },
    });
    expect(settings[0]?.secret?.reveal()).toBe(secret);
    capture.logger.info({ webhooks: settings, one: settings[0]?.secret }, 'settings');
    await record('rollout.started');
    await waitUntil(() => receiver.delivered().length === 1, 10_000, 'delivered');
    // The receiver answers before the sender has read the answer and logged it: wait for the
    // sender's own count of the delivery (counted just before its log line), not the receiver's.
    await waitUntil(async () => (await counted('test', 'delivered')) >= 1, 5000, 'the delivery counted');
    await waitUntil(async () => (await counted('away', 'failed')) >= 2, 5000, 'the unreachable one failed');
    const text = capture.text();
    expect(text).toContain('webhook delivery failed');
    expect(text).toContain('webhook delivered');
    expect(text).toContain(receiver.url);
    for (const leak of [secret, 'PATHSECRET123', 'QUERYSECRET456']) expect(text).not.toContain(leak);
    expect(receiver.signedWith(receiver.requests[2] as never, secret)).toBe(true);
  });
});
