/**
 * Webhook delivery for each test of the calling file: the test's Redis with an outbox under its
 * prefix, an EventRecorder that records into it, a receiver on loopback, and `start` for notifiers on
 * that outbox with the tests' short intervals. After each test the notifiers stop, then the
 * receiver and whatever was handed to `closeAfter` close.
 */
import { afterEach, beforeEach } from 'vitest';
import { type Notifier, type NotifierOptions, startNotifier } from '../../src/notify/start-notifier.js';
import { createKeys, type Keys } from '../../src/rollout/index.js';
import { captureLogger } from './capture-logger.js';
import { EventRecorder } from './event-recorder.js';
import { type TestRedis, useTestRedis } from './redis.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.js';

export interface TestNotifier {
  /** The test's Redis. */
  readonly redis: TestRedis;
  /** Keys under the test's prefix. */
  readonly keys: Keys;
  /** Records events into the test's outbox. */
  readonly events: EventRecorder;
  /** A webhook receiver started for the test. */
  readonly receiver: WebhookReceiver;
  /**
   * A notifier on the test's outbox: the test's Redis and keys, a logger capturing warnings,
   * claims after 300 ms, reads every 20 ms; `options` override. Stopped after the test.
   */
  start(options: Pick<NotifierOptions, 'webhooks'> & Partial<NotifierOptions>): Promise<Notifier>;
  /** Closes `resource` after the test, once the notifiers stopped (a receiver, a connection). */
  closeAfter(close: () => Promise<unknown>): void;
}

export function useNotifier(): TestNotifier {
  const redis = useTestRedis();
  let keys: Keys | undefined;
  let events: EventRecorder | undefined;
  let receiver: WebhookReceiver | undefined;
  const notifiers: Notifier[] = [];
  const closers: (() => Promise<unknown>)[] = [];
  beforeEach(async () => {
    keys = createKeys(redis.prefix);
    events = new EventRecorder(redis.redis, keys);
    receiver = await startWebhookReceiver();
  });
  afterEach(async () => {
    for (const n of notifiers.splice(0)) await n.stop();
    await receiver?.close();
    for (const close of closers.splice(0)) await close();
  });
  const inTest = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the notifier set-up is only available inside a test');
    return value;
  };
  return {
    redis,
    get keys() {
      return inTest(keys);
    },
    get events() {
      return inTest(events);
    },
    get receiver() {
      return inTest(receiver);
    },
    async start(options) {
      const n = await startNotifier({
        redis: redis.redis,
        keys: inTest(keys),
        logger: captureLogger('warn').logger,
        claimIdleMs: 300,
        pollMs: 20,
        ...options,
      });
      notifiers.push(n);
      return n;
    },
    closeAfter(close) {
      closers.push(close);
    },
  };
}
