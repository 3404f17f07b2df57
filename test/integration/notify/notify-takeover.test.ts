/**
 * Several processes deliver one outbox: each entry goes to one of them; an entry read by a
 * process that dies before delivering it (no acknowledgement, no renewal ever again) is taken
 * over by another after the claim interval; a process that stops hands its entries over at once.
 * (The built CLI killed with SIGKILL: test/e2e/notify/notify-sigkill.test.ts.)
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import type { Webhook } from '../../../src/notify/read-webhooks.js';
import { type Notifier, type NotifierOptions, webhookGroup } from '../../../src/notify/start-notifier.js';
import type { RecordedEvent, RolloutEventType } from '../../../src/rollout/index.js';
import { useNotifier } from '../../support/use-notifier.js';
import { waitUntil } from '../../support/wait-until.js';
import type { WebhookReceiver } from '../../support/webhook-receiver.js';

const notify = useNotifier();
const { redis } = notify;
let receiver: WebhookReceiver;
let connections: Redis[];

beforeEach(() => {
  receiver = notify.receiver;
  connections = [];
});

// Before the notifiers stop (the set-up's afterEach runs after this one): no request hangs.
afterEach(() => receiver.release(503));

const webhook = (url: string): Webhook => ({
  name: 'ops',
  url,
  events: '*',
  format: 'json',
  timeoutMs: 10_000,
  retry: { initialMs: 50, maxMs: 200, giveUpAfterMs: 86_400_000 },
});

/** A notifier as another process would run it: its own connection, closed once it stopped. */
function start(consumer: string, over: Partial<NotifierOptions> = {}): Promise<Notifier> {
  const connection = createRedis(redis.url, { name: `notifier-${consumer}` });
  connections.push(connection);
  notify.closeAfter(() => closeRedis(connection));
  return notify.start({ redis: connection, webhooks: [webhook(receiver.url)], consumer, ...over });
}

function record(type: RolloutEventType): Promise<RecordedEvent> {
  return notify.events.record({
    type,
    rollout: 'linux@19.470-4',
    policy: 'linux',
    build: '19.470-4',
    at: Date.now(),
    source: 'operator',
    actor: 'ops@host',
    message: `${type} by ops@host`,
  });
}

/** [entry id, consumer, idle ms, deliveries] of every pending entry of the webhook. */
async function pending(): Promise<[string, string, number, number][]> {
  return (await redis.redis.xpending(notify.keys.outbox, webhookGroup('ops'), '-', '+', 100)) as [
    string,
    string,
    number,
    number,
  ][];
}

describe('several processes', () => {
  it('deliver each entry once between them while all are well', async () => {
    await start('a');
    await start('b');
    await start('c');
    const recorded: RecordedEvent[] = [];
    for (let i = 0; i < 30; i++) recorded.push(await record(i % 2 ? 'rollout.paused' : 'rollout.resumed'));
    await waitUntil(() => receiver.delivered().length >= 30, 10_000, 'every event');
    await new Promise((r) => setTimeout(r, 200));
    expect([...receiver.delivered()].sort()).toEqual(recorded.map((e) => e.id).sort());
  });

  it('take over an entry that a dead process had read but not delivered', async () => {
    // The first request is never answered: the process is "killed" while it waits for it.
    receiver.answer = (_req, n) => (n === 1 ? 'hang' : 200);
    await start('a');
    const first = await record('rollout.halted');
    await receiver.waitForRequests(1, 5000);
    expect((await pending()).map(([id, consumer]) => [id, consumer])).toEqual([[expect.any(String), 'a']]);
    // Dead for Redis: no acknowledgement, no renewal, ever again.
    connections[0]?.disconnect();
    const later = await record('rollout.resumed');
    await start('b');
    await waitUntil(
      () => receiver.delivered().includes(first.id) && receiver.delivered().includes(later.id),
      10_000,
      'both events delivered by b',
    );
    expect(receiver.requests[0]?.status).toBe(0); // a's attempt never got an answer
    // The later one may come first: the dead process's entry waits for the claim interval.
    expect([...receiver.delivered()].sort()).toEqual([first.id, later.id].sort());
    await waitUntil(async () => (await pending()).length === 0, 5000, 'nothing pending');
  });

  it('hand over at once the entries of a process that stops', async () => {
    receiver.answer = (_req, n) => (n === 1 ? 'hang' : 200);
    // Both wait a minute before taking over a silent consumer's entries.
    const a = await start('a', { claimIdleMs: 60_000 });
    const event = await record('rollout.aborted');
    await receiver.waitForRequests(1, 5000);
    await a.stop(); // its attempt is cut off after 2 s; the entry is released, not acknowledged
    expect((await pending()).map(([, consumer, idle]) => [consumer, idle >= 60_000])).toEqual([['a', true]]);
    await start('b', { claimIdleMs: 60_000 });
    await waitUntil(() => receiver.delivered().includes(event.id), 5000, 'b delivered it');
    expect(receiver.delivered()).toEqual([event.id]);
  });
});
