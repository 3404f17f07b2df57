/**
 * One webhook's view of the outbox stream: its consumer group (created at the stream's end, so a
 * new webhook gets the events recorded from then on), read by this process as one consumer.
 * An entry read is pending under this consumer until acknowledged; the consumer renews its hold
 * while it works on it; the entries of a consumer that stopped renewing (a process that died)
 * are claimed by another after `minIdleMs` (XAUTOCLAIM). Only Redis calls here, no decisions.
 */
import type { Redis } from 'ioredis';
import { defineScripts } from '../lib/redis/redis-scripts.js';

export interface OutboxEntry {
  /** The stream id (`<ms>-<seq>`). */
  streamId: string;
  fields: Record<string, string>;
}

type RawEntry = [string, string[]] | null;

type ScriptedRedis = Redis & {
  fuRenewHeld(stream: string, group: string, consumer: string, ...ids: string[]): Promise<string[]>;
  fuForgetConsumer(stream: string, group: string, consumer: string): Promise<number>;
};

/** Milliseconds part of a stream id: when Redis added the entry. */
export function streamIdTime(id: string): number {
  return Number(id.split('-')[0]);
}

/** Orders stream ids (`<ms>-<seq>`) numerically. */
export function compareStreamIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

function toEntries(raw: readonly RawEntry[] | undefined): OutboxEntry[] {
  const out: OutboxEntry[] = [];
  for (const e of raw ?? []) {
    if (!e) continue; // an entry trimmed from the stream while it was pending (Redis 6.2)
    const fields: Record<string, string> = {};
    for (let i = 0; i + 1 < e[1].length; i += 2) fields[e[1][i] as string] = e[1][i + 1] as string;
    out.push({ streamId: e[0], fields });
  }
  return out;
}

export class OutboxReader {
  private claimCursor = '0-0';

  constructor(
    private readonly redis: Redis,
    readonly stream: string,
    readonly group: string,
    readonly consumer: string,
  ) {
    defineScripts(redis, [
      { command: 'fuRenewHeld', module: 'notify', name: 'renew-held-1' },
      { command: 'fuForgetConsumer', module: 'notify', name: 'forget-consumer-1' },
    ]);
  }

  /** Creates the group at the stream's end unless it exists (then its position is kept). */
  async ensureGroup(): Promise<void> {
    try {
      await this.redis.xgroup('CREATE', this.stream, this.group, '$', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
  }

  /** Up to `count` entries never delivered to the group, now pending under this consumer. */
  async readNew(count: number): Promise<OutboxEntry[]> {
    const reply = (await this.redis.xreadgroup(
      'GROUP',
      this.group,
      this.consumer,
      'COUNT',
      count,
      'STREAMS',
      this.stream,
      '>',
    )) as [string, RawEntry[]][] | null;
    return toEntries(reply?.[0]?.[1]);
  }

  /**
   * Up to `count` entries pending for at least `minIdleMs` under any consumer (one that stopped
   * renewing), now this consumer's. Walks the group's pending list a few pages per call.
   */
  async claimIdle(minIdleMs: number, count: number): Promise<OutboxEntry[]> {
    const out: OutboxEntry[] = [];
    for (let page = 0; page < 5 && out.length < count; page++) {
      const [next, raw] = (await this.redis.xautoclaim(
        this.stream,
        this.group,
        this.consumer,
        Math.max(0, Math.round(minIdleMs)),
        this.claimCursor,
        'COUNT',
        count - out.length,
      )) as [string, RawEntry[], string[]?];
      out.push(...toEntries(raw));
      this.claimCursor = next;
      if (next === '0-0') break;
    }
    return out;
  }

  /** Keeps `ids` from being claimed by others; returns those this consumer no longer owns. */
  async renew(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    return (this.redis as ScriptedRedis).fuRenewHeld(this.stream, this.group, this.consumer, ...ids);
  }

  /** Makes `ids` claimable by any consumer at once (this process stops working on them). */
  async release(ids: readonly string[], idleMs: number): Promise<void> {
    if (ids.length === 0) return;
    await this.redis.xclaim(
      this.stream,
      this.group,
      this.consumer,
      0,
      ...ids,
      'IDLE',
      Math.round(idleMs),
      'JUSTID',
    );
  }

  async ack(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.redis.xack(this.stream, this.group, ...ids);
  }

  /** Entries of the group not delivered yet: pending (read, not acknowledged) plus not read. */
  async backlog(): Promise<number | undefined> {
    const groups = (await this.redis.xinfo('GROUPS', this.stream)) as unknown[][];
    for (const g of groups) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < g.length; i += 2) info.set(String(g[i]), g[i + 1]);
      if (info.get('name') !== this.group) continue;
      const lag = info.get('lag');
      return Number(info.get('pending') ?? 0) + (typeof lag === 'number' ? lag : 0);
    }
    return undefined;
  }

  /**
   * Removes consumers of the group other than this one that hold nothing and were idle longer
   * than `idleMs` (processes that stopped), so the group's list of consumers does not grow.
   */
  async forgetIdleConsumers(idleMs: number): Promise<number> {
    const consumers = (await this.redis.xinfo('CONSUMERS', this.stream, this.group)) as unknown[][];
    let removed = 0;
    for (const c of consumers) {
      const info = new Map<string, unknown>();
      for (let i = 0; i + 1 < c.length; i += 2) info.set(String(c[i]), c[i + 1]);
      const name = String(info.get('name'));
      if (name === this.consumer || Number(info.get('pending')) !== 0) continue;
      if (Number(info.get('idle')) < idleMs) continue;
      // Checked again atomically: the consumer may have read an entry since XINFO.
      removed += await (this.redis as ScriptedRedis).fuForgetConsumer(this.stream, this.group, name);
    }
    return removed;
  }
}
