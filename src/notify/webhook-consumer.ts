/**
 * Delivers the outbox to one webhook from this process, at least once. Each round it claims the
 * entries of consumers that stopped renewing (dead processes), reads new ones, acknowledges at
 * once those the webhook's `events` do not want, and sends the others oldest first, one at a
 * time. An entry it holds is in one of these states:
 *
 *   held ─send─► delivered (2xx) ─► acknowledged (XACK; retried next round if Redis failed)
 *     │  └────► rejected (3xx, 4xx but 408/429) ─► held, this entry waits its own back-off
 *     └───────► unavailable (no answer, time-out, 408, 429, 5xx) ─► held, the whole webhook waits
 *   any held entry recorded more than `giveUpAfter` ago whose attempt fails, or that waits behind
 *   a failed attempt ─► given up (acknowledged, logged, counted)
 *
 * While it holds entries it renews its hold every third of `claimIdleMs`, so no other process
 * takes them; when it dies, another process claims them after `claimIdleMs`; when it stops, it
 * first drains what is already recorded (a short grace), then releases what it still holds.
 * Back-offs are kept in memory: a process that takes over starts again from `retry.initial`.
 *
 * A `notify:` receiver (Slack, Teams, PagerDuty) is a webhook with routing and batches: an entry
 * its filters (organizations, policies) do not want is acknowledged at once; one that waits a
 * window (a failures summary, a PagerDuty resolve) is held until it ends; held entries of one key
 * go as one message (receiver-plan.ts), and are acknowledged together once it is delivered.
 */
import type { LimitFunction } from 'p-limit';
import type { Dispatcher } from 'undici';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import { batchOf, type Held, idsOf, openSummary } from './held-entry.js';
import { compareStreamIds, type OutboxEntry, type OutboxReader, streamIdTime } from './outbox-reader.js';
import type { Webhook } from './read-webhooks.js';
import { receiverBody } from './receiver-body.js';
import { batchKey, isSummary, routes, waitsWindow } from './receiver-plan.js';
import { retryDelay } from './retry-delay.js';
import { RolloutOrgs } from './rollout-orgs.js';
import { OutboxEvent } from './schema.js';
import { type AttemptResult, sendWebhook } from './send-webhook.js';
import { webhookBody } from './webhook-body.js';
import { webhookOrigin } from './webhook-origin.js';

export type DeliveryOutcome = 'delivered' | 'failed' | 'gave_up';

export interface WebhookConsumerOptions {
  webhook: Webhook;
  reader: OutboxReader;
  /** Bounds the requests under way in this process, across webhooks. */
  limit: LimitFunction;
  dispatcher: Dispatcher;
  clock: Clock;
  logger: Logger;
  /** Counts each attempt's outcome (and each event given up). */
  count(outcome: DeliveryOutcome): void;
  /** Entries of a consumer idle this long (real ms) are taken over. */
  claimIdleMs: number;
  /** Real ms between two reads of the outbox when there is nothing to do. */
  pollMs: number;
  /** Entries held at once by this process for this webhook. */
  maxHeld: number;
  random?: () => number;
  /** The organizations a rollout covers (a receiver's `orgs` filter; its message's fields). */
  orgsOf?: (rollout: string) => Promise<readonly string[] | undefined>;
}

export class WebhookConsumer {
  private readonly held = new Map<string, Held>();
  /** Delivered, not yet acknowledged (Redis failed at the time). */
  private readonly unacked = new Set<string>();
  /** Failed attempts in a row for lack of an answer: the webhook waits until `retryAt`. */
  private failures = 0;
  private retryAt = 0;
  private nextClaimAt = 0;
  private claimRounds = 0;
  private stopped = false;
  /** Set by `stop()`: deliver what is there until this real ms, then stop. */
  private drainUntil: number | undefined;
  private stopping: Promise<void> | undefined;
  private wake = new AbortController();
  /** Entries the last round read or claimed. */
  private lastTaken = 0;
  private readonly abortAttempts = new AbortController();
  private loop: Promise<void> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private lastRedisError = '';
  private readonly log: Logger;
  private readonly target: string;
  private readonly orgs: RolloutOrgs;

  constructor(private readonly o: WebhookConsumerOptions) {
    this.target = webhookOrigin(o.webhook.url);
    this.log = o.logger.child({ webhook: o.webhook.name, target: this.target });
    this.orgs = new RolloutOrgs(o.orgsOf);
  }

  start(): void {
    this.loop = this.run();
    this.renewTimer = setInterval(() => void this.renew(), Math.max(50, this.o.claimIdleMs / 3));
    this.renewTimer.unref();
  }

  /**
   * For up to `graceMs` (3 s: with the 1 s for a stuck round, within the daemon's 5 s per shutdown
   * step), delivers what is already recorded (so `run --once` sends the events of
   * its last round), then stops; an attempt still under way then is cut off. The entries it still
   * holds are made claimable at once, so another process (or the next start) sends them.
   */
  stop(graceMs = 3000): Promise<void> {
    this.stopping ??= (async () => {
      this.drainUntil = this.o.clock.now() + graceMs;
      this.wake.abort();
      const timer = setTimeout(() => {
        this.stopped = true;
        this.wake.abort();
        this.abortAttempts.abort(new Error('notifier stopped'));
      }, graceMs);
      // A round stuck on an unreachable Redis does not hold the shutdown up.
      await withTimeout(this.loop ?? Promise.resolve(), graceMs + 1000, () => undefined);
      this.stopped = true;
      clearTimeout(timer);
      clearInterval(this.renewTimer);
      const ids = [...this.held.values()].flatMap(idsOf);
      await this.o.reader.ack([...this.unacked]).catch(() => undefined);
      await this.o.reader.release(ids, this.o.claimIdleMs).catch(() => undefined);
    })();
    return this.stopping;
  }

  /** Stopping, and nothing more can be sent now: nothing new was read, nothing held is due. */
  private drained(): boolean {
    if (this.drainUntil === undefined) return false;
    const now = this.o.clock.now();
    if (now >= this.drainUntil || now < this.retryAt) return true;
    return this.lastTaken === 0 && this.nextDue(now) === undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.round();
        if (this.lastRedisError) this.log.info('webhook outbox readable again');
        this.lastRedisError = '';
      } catch (err) {
        const message = (err as Error).message;
        if (message !== this.lastRedisError) this.log.warn({ err: message }, 'webhook outbox unreadable');
        this.lastRedisError = message;
        // The stream was deleted (and its groups with it): start again from its new end.
        if (message.includes('NOGROUP')) await this.o.reader.ensureGroup().catch(() => undefined);
      }
      if (this.drained()) break;
      // Woken during the round (a stop began): a new round at once, or the wake is lost and
      // what was recorded meanwhile waits a whole poll. While draining, no poll is waited either
      // (unless the outbox is unreadable: then the drain waits, and ends with its grace).
      if (this.wake.signal.aborted) {
        this.wake = new AbortController();
        continue;
      }
      if (this.drainUntil !== undefined && !this.lastRedisError) continue;
      await this.o.clock.sleep(this.idleFor(), this.wake.signal).catch(() => undefined);
    }
  }

  /** Real ms to sleep: until the next poll, the end of the webhook's wait, or an entry's turn. */
  private idleFor(): number {
    const now = this.o.clock.now();
    let until = now + this.o.pollMs;
    if (this.retryAt > now) until = Math.min(until, this.retryAt);
    for (const h of this.held.values()) if (h.nextAt > now) until = Math.min(until, h.nextAt);
    return Math.max(10, until - now);
  }

  private async round(): Promise<void> {
    const { reader, claimIdleMs, maxHeld } = this.o;
    if (this.unacked.size > 0) {
      await reader.ack([...this.unacked]);
      this.unacked.clear();
    }
    const now = this.o.clock.now();
    this.lastTaken = 0;
    if (now >= this.nextClaimAt && this.held.size < maxHeld && this.drainUntil === undefined) {
      this.nextClaimAt = now + claimIdleMs / 2;
      const claimed = await reader.claimIdle(claimIdleMs, maxHeld - this.held.size);
      if (claimed.length > 0) this.log.info({ entries: claimed.length }, 'webhook entries taken over');
      await this.take(claimed);
      // Now and then, forget the consumers of processes that stopped long ago.
      if (this.claimRounds++ % 100 === 0)
        await reader.forgetIdleConsumers(Math.max(3_600_000, claimIdleMs * 10));
    }
    if (this.held.size < maxHeld) await this.take(await reader.readNew(maxHeld - this.held.size));
    await this.deliverDue();
  }

  private async take(entries: OutboxEntry[]): Promise<void> {
    this.lastTaken += entries.length;
    const skip: string[] = [];
    for (const entry of entries) {
      if (this.held.has(entry.streamId)) continue;
      const recorded = entry.fields.event ?? '';
      let event: OutboxEvent | undefined;
      try {
        const parsed = OutboxEvent.safeParse(JSON.parse(recorded));
        if (parsed.success) event = parsed.data;
      } catch {}
      if (!event) {
        this.log.error({ entry: entry.streamId }, 'webhook outbox entry unreadable; given up');
        this.o.count('gave_up');
        skip.push(entry.streamId);
        continue;
      }
      const { events, receiver } = this.o.webhook;
      if (events !== '*' && !(events as ReadonlySet<string>).has(event.type)) {
        skip.push(entry.streamId);
        continue;
      }
      const recordedAt = streamIdTime(entry.streamId);
      const held: Held = {
        streamId: entry.streamId,
        event,
        recorded,
        recordedAt,
        failures: 0,
        nextAt: 0,
        orgs: [],
      };
      if (receiver) {
        held.orgs = await this.orgs.of(event);
        if (!routes(receiver, event, held.orgs)) {
          skip.push(entry.streamId);
          continue;
        }
        const key = batchKey(receiver, event);
        if (key !== undefined) held.key = key;
        if (isSummary(receiver, event)) {
          const open = openSummary(this.held.values(), held.key, this.o.clock.now());
          if (open) {
            if (open.folded) open.folded.push(held);
            else open.folded = [held];
            continue;
          }
          held.summary = true;
        }
        if (waitsWindow(receiver, event)) held.nextAt = recordedAt + receiver.windowMs;
      }
      this.held.set(entry.streamId, held);
    }
    await this.o.reader.ack(skip);
  }

  private nextDue(now: number): Held | undefined {
    let best: Held | undefined;
    for (const h of this.held.values())
      if (h.nextAt <= now && (!best || compareStreamIds(h.streamId, best.streamId) < 0)) best = h;
    return best;
  }

  private async deliverDue(): Promise<void> {
    while (!this.stopped && this.o.clock.now() >= this.retryAt && !this.pastDrain()) {
      const now = this.o.clock.now();
      const entry = this.nextDue(now);
      if (!entry) return;
      const batch = batchOf(this.held.values(), entry, now);
      const result = await this.o.limit(() => this.attempt(batch));
      if (this.stopped && result.outcome === 'unavailable' && result.reason === 'stopped') return;
      await this.settle(entry, result, batch);
    }
  }

  private pastDrain(): boolean {
    return this.drainUntil !== undefined && this.o.clock.now() >= this.drainUntil;
  }

  private attempt(batch: readonly Held[]): Promise<AttemptResult> {
    const { webhook, dispatcher, clock } = this.o;
    const entry = batch[batch.length - 1] as Held;
    return sendWebhook({
      webhook,
      eventId: entry.event.id,
      eventType: entry.event.type,
      body: webhook.receiver
        ? receiverBody(webhook.receiver, batch)
        : webhookBody(webhook.format, entry.event, entry.recorded),
      dispatcher,
      timestampS: Math.floor(clock.now() / 1000),
      signal: this.abortAttempts.signal,
    });
  }

  private async settle(entry: Held, result: AttemptResult, batch: readonly Held[] = [entry]): Promise<void> {
    const now = this.o.clock.now();
    const { retry } = this.o.webhook;
    const about = { event: entry.event.id, type: entry.event.type, rollout: entry.event.rollout };
    if (result.outcome === 'delivered') {
      const ids = batch.map((h) => h.streamId);
      for (const id of ids) {
        this.held.delete(id);
        this.unacked.add(id);
      }
      this.o.count('delivered');
      if (this.failures > 0) this.log.info({ failures: this.failures }, 'webhook receiver answers again');
      this.failures = 0;
      this.log.debug({ ...about, status: result.status, covers: ids.length }, 'webhook delivered');
      await this.o.reader.ack(ids);
      for (const id of ids) this.unacked.delete(id);
      return;
    }
    this.o.count('failed');
    let waitMs: number;
    if (result.outcome === 'unavailable') {
      this.failures++;
      waitMs = retryDelay(this.failures, retry, this.o.random);
      this.retryAt = now + waitMs;
    } else {
      this.failures = 0;
      entry.failures++;
      waitMs = retryDelay(entry.failures, retry, this.o.random);
      entry.nextAt = now + waitMs;
    }
    const stale = (h: Held) => now - h.recordedAt > retry.giveUpAfterMs;
    if (!stale(entry))
      this.log.warn(
        { ...about, status: result.status, reason: result.reason, retryInMs: waitMs },
        'webhook delivery failed',
      );
    // Given up: this entry when it is too old, and (the receiver being away) every one too old.
    const giveUp = [...this.held.values()].filter(
      (h) => (h === entry || result.outcome === 'unavailable') && stale(h),
    );
    for (const h of giveUp) {
      this.held.delete(h.streamId);
      this.o.count('gave_up');
      this.log.error(
        {
          event: h.event.id,
          type: h.event.type,
          rollout: h.event.rollout,
          recordedAt: new Date(h.recordedAt).toISOString(),
          reason: result.reason,
        },
        'webhook delivery given up',
      );
    }
    await this.o.reader.ack(giveUp.flatMap(idsOf));
  }

  /** Keeps the held entries from being claimed; drops those another process took over. */
  private async renew(): Promise<void> {
    const ids = [...[...this.held.values()].flatMap(idsOf), ...this.unacked];
    if (ids.length === 0 || this.stopped) return;
    try {
      const lost = await this.o.reader.renew(ids);
      for (const id of lost) this.held.delete(id);
      if (lost.length > 0)
        this.log.warn({ entries: lost.length }, 'webhook entries taken over by another process');
    } catch {
      // Redis away: the round reports it; the hold lapses only after claimIdleMs.
    }
  }

  /** Entries this process holds for the webhook (for tests and logs). */
  get holding(): number {
    return this.held.size;
  }
}
