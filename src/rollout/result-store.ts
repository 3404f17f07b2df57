/**
 * What happened to each Collector of a rollout, in Redis: one JSON record per Collector in a
 * hash, and a hash of counts per state that a Lua script keeps exact with every change, so that
 * `status` and the metrics read counts without scanning 100,000 records.
 *
 * States of a Collector in a rollout:
 *   queued (known, waiting for an in-flight slot) → admitted (holds a slot, job enqueued) →
 *   creating (create sent; outcome not yet recorded) → pending (task id known, status 0 or 1) →
 *   progressing (status 6) → succeeded | failed | timed_out
 *   creating → waiting_alive (collector.not.alive; slot released, retried after a backoff) → admitted …
 *   creating → reconciling (the service has a task for it whose id we do not know: an ambiguous
 *     create, or collector.in.upgrading) → succeeded | queued (observed through the listings)
 *   creating → rejected (version, type or permission errors) | not_alive (attempts spent)
 *   queued → skipped (a newer rollout of the policy took over)
 */
import type { Redis } from 'ioredis';
import type { Keys } from './keys.js';

export const FINAL_STATES = ['succeeded', 'failed', 'timed_out', 'not_alive', 'rejected', 'skipped'] as const;
export const ACTIVE_STATES = [
  'queued',
  'admitted',
  'creating',
  'waiting_alive',
  'reconciling',
  'pending',
  'progressing',
] as const;
export type FinalState = (typeof FINAL_STATES)[number];
export type ActiveState = (typeof ACTIVE_STATES)[number];
export type CollectorState = FinalState | ActiveState;

/** States that hold an in-flight slot: the Collector may have an unfinished task. */
export const SLOT_STATES: readonly CollectorState[] = [
  'admitted',
  'creating',
  'reconciling',
  'pending',
  'progressing',
];

export function isFinal(state: CollectorState): state is FinalState {
  return (FINAL_STATES as readonly string[]).includes(state);
}

export interface CollectorResult {
  id: number;
  name: string;
  hostName: string;
  /** The Collector's time zone, for maintenance windows read in it. */
  timeZone?: string;
  /** Build the Collector was on when the rollout found it. */
  from: string;
  /** Build of the rollout. */
  to: string;
  state: CollectorState;
  /** Task id of the current (or last) task, as the service gave it. */
  taskId?: string;
  /** Create attempts so far (collector.not.alive retries count). */
  attempts: number;
  /** Status reads of this Collector's tasks. */
  statusReads: number;
  /** The service's message (failures), or ours (rejections, time-outs). */
  message?: string;
  /** Epoch ms (orchestrator clock). */
  discoveredAt: number;
  admittedAt?: number;
  createSentAt?: number;
  requestTime?: number;
  finishedAt?: number;
  nextAttemptAt?: number;
  /** When the service was first found to hold a task for it whose id we do not know. */
  reconcilingSince?: number;
  /** Last task status read (0, 1, 2, 3, 6). */
  lastStatus?: number;
  /** The process (host:pid) that created the task. */
  createdBy?: string;
}

// KEYS: results, counts. ARGV: id, json, newState, expectedState ('' = any), createOnly ('1' or '').
// Returns 1 when written, 0 when the record's state was not the expected one (or exists, with createOnly).
const UPDATE_SCRIPT = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
local oldState = false
if old then
  if ARGV[5] == '1' then return 0 end
  oldState = cjson.decode(old)['state']
end
if ARGV[4] ~= '' and oldState ~= ARGV[4] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if oldState ~= ARGV[3] then
  if oldState then redis.call('HINCRBY', KEYS[2], oldState, -1) end
  redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
end
return 1
`;

type Scripted = Redis & {
  fuUpdateResult(
    results: string,
    counts: string,
    id: string,
    json: string,
    state: string,
    expected: string,
    createOnly: string,
  ): Promise<number>;
};

export class ResultStore {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    if (!('fuUpdateResult' in redis))
      redis.defineCommand('fuUpdateResult', { numberOfKeys: 2, lua: UPDATE_SCRIPT });
    this.redis = redis as Scripted;
  }

  async get(rolloutId: string, collectorId: number): Promise<CollectorResult | undefined> {
    const raw = await this.redis.hget(this.keys.results(rolloutId), String(collectorId));
    return raw ? (JSON.parse(raw) as CollectorResult) : undefined;
  }

  /** Several records at once; missing ones are left out. */
  async getMany(rolloutId: string, ids: readonly number[]): Promise<Map<number, CollectorResult>> {
    const out = new Map<number, CollectorResult>();
    if (ids.length === 0) return out;
    const raws = await this.redis.hmget(this.keys.results(rolloutId), ...ids.map(String));
    raws.forEach((raw) => {
      if (!raw) return;
      const r = JSON.parse(raw) as CollectorResult;
      out.set(r.id, r);
    });
    return out;
  }

  /** Every record of a rollout, read in batches with HSCAN. */
  async *all(rolloutId: string): AsyncGenerator<CollectorResult> {
    let cursor = '0';
    do {
      const [next, flat] = await this.redis.hscan(this.keys.results(rolloutId), cursor, 'COUNT', 1000);
      for (let i = 1; i < flat.length; i += 2) yield JSON.parse(flat[i] as string) as CollectorResult;
      cursor = next;
    } while (cursor !== '0');
  }

  /**
   * Writes `record`; with `expected`, only when the stored state is that one (compare-and-set
   * between the scheduler and the workers). Returns whether it was written.
   */
  async put(rolloutId: string, record: CollectorResult, expected?: CollectorState): Promise<boolean> {
    const written = await this.redis.fuUpdateResult(
      this.keys.results(rolloutId),
      this.keys.counts(rolloutId),
      String(record.id),
      JSON.stringify(record),
      record.state,
      expected ?? '',
      '',
    );
    return written === 1;
  }

  /** Adds records that are not there yet (discovery); returns the ids that were new. */
  async addNew(rolloutId: string, records: readonly CollectorResult[]): Promise<number[]> {
    if (records.length === 0) return [];
    const pipeline = this.redis.pipeline() as unknown as Scripted & {
      exec(): Promise<[Error | null, unknown][] | null>;
    };
    for (const r of records) {
      pipeline.fuUpdateResult(
        this.keys.results(rolloutId),
        this.keys.counts(rolloutId),
        String(r.id),
        JSON.stringify(r),
        r.state,
        '',
        '1',
      );
    }
    const replies = (await pipeline.exec()) ?? [];
    const added: number[] = [];
    replies.forEach(([err, value], i) => {
      if (err) throw err;
      if (value === 1) added.push((records[i] as CollectorResult).id);
    });
    return added;
  }

  async counts(rolloutId: string): Promise<Partial<Record<CollectorState, number>>> {
    const raw = await this.redis.hgetall(this.keys.counts(rolloutId));
    const out: Partial<Record<CollectorState, number>> = {};
    for (const [state, n] of Object.entries(raw))
      if (Number(n) !== 0) out[state as CollectorState] = Number(n);
    return out;
  }
}
