/**
 * Webhook notifications: every `run` process delivers the outbox (the stream that
 * `EventLog.record` writes) to each configured webhook, at least once, through one consumer group
 * per webhook in which the process is one consumer; the `notify:` receivers (Slack, Teams,
 * PagerDuty: read-receivers.ts) are webhooks of their own kind, each with its group
 * `notify:<name>`. See webhook-consumer.ts for one webhook's
 * delivery and docs/notifications.md for what receivers get.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import pLimit from 'p-limit';
import { Agent } from 'undici';
import { type Clock, systemClock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Metrics } from '../metrics/create-metrics.js';
import type { Keys } from '../rollout/index.js';
import { OutboxReader } from './outbox-reader.js';
import { describeWebhook, type Webhook } from './read-webhooks.js';
import { receiverGroup } from './receiver.js';
import { WebhookConsumer } from './webhook-consumer.js';

export interface NotifierOptions {
  redis: Redis;
  keys: Pick<Keys, 'outbox'>;
  webhooks: readonly Webhook[];
  logger: Logger;
  metrics?: Pick<Metrics, 'webhookDeliveries' | 'exportWebhookPending'>;
  /** Real time (receivers are real, also in a rehearsal at a time scale). Default: the system clock. */
  clock?: Clock;
  /**
   * Real ms after which the entries of a process that stopped renewing them (it died) are taken
   * over by another; the daemon passes its `stalledInterval`. Default 30 000.
   */
  claimIdleMs?: number;
  /** Real ms between two reads of the outbox when idle. Default 1000. */
  pollMs?: number;
  /** Requests under way at once in this process, across webhooks. Default 4. */
  concurrency?: number;
  /** Entries held at once per webhook by this process. Default 100. */
  maxHeld?: number;
  /** This process's consumer name in the groups. Default `<host>:<pid>:<random>`. */
  consumer?: string;
  /** The organizations a rollout covers (a `notify:` receiver's `orgs` filter and fields). */
  orgsOf?: (rollout: string) => Promise<readonly string[] | undefined>;
}

export interface Notifier {
  /** The consumer name of this process. */
  readonly consumer: string;
  stop(): Promise<void>;
}

/** The consumer group of a webhook on the outbox stream. */
export const webhookGroup = (name: string): string => `webhook:${name}`;

/** The group of a webhook or a `notify:` receiver (the two lists may not share a name). */
const groupOf = (w: Webhook): string => (w.receiver ? receiverGroup(w.name) : webhookGroup(w.name));

/** Starts delivering; the groups exist when it resolves, so no event recorded later is missed. */
export async function startNotifier(options: NotifierOptions): Promise<Notifier> {
  const consumer = options.consumer ?? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  if (options.webhooks.length === 0) return { consumer, stop: async () => {} };
  const { redis, logger, metrics } = options;
  const claimIdleMs = options.claimIdleMs ?? 30_000;
  const readers = new Map<string, OutboxReader>();
  for (const webhook of options.webhooks) {
    const reader = new OutboxReader(redis, options.keys.outbox, groupOf(webhook), consumer);
    await reader.ensureGroup();
    readers.set(webhook.name, reader);
  }
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connect: { timeout: 10_000 } });
  const limit = pLimit(options.concurrency ?? 4);
  const consumers: WebhookConsumer[] = [];
  for (const webhook of options.webhooks) {
    const reader = readers.get(webhook.name) as OutboxReader;
    for (const outcome of ['delivered', 'failed', 'gave_up'] as const)
      metrics?.webhookDeliveries.labels(webhook.name, outcome).inc(0);
    consumers.push(
      new WebhookConsumer({
        webhook,
        reader,
        limit,
        dispatcher,
        clock: options.clock ?? systemClock,
        logger,
        count: (outcome) => metrics?.webhookDeliveries.labels(webhook.name, outcome).inc(),
        claimIdleMs,
        pollMs: options.pollMs ?? 1000,
        maxHeld: options.maxHeld ?? 100,
        ...(options.orgsOf ? { orgsOf: options.orgsOf } : {}),
      }),
    );
  }
  metrics?.exportWebhookPending(async () => {
    const out = new Map<string, number>();
    for (const [name, reader] of readers) {
      const n = await reader.backlog().catch(() => undefined);
      if (n !== undefined) out.set(name, n);
    }
    return out;
  });
  for (const c of consumers) c.start();
  logger.info(
    {
      consumer,
      webhooks: options.webhooks.map(describeWebhook),
    },
    'webhook notifications started',
  );
  let stopping: Promise<void> | undefined;
  return {
    consumer,
    stop() {
      stopping ??= (async () => {
        await Promise.all(consumers.map((c) => c.stop()));
        await dispatcher.destroy().catch(() => undefined);
      })();
      return stopping;
    },
  };
}
