/**
 * ResultStore on a real Redis: records per rollout × Collector, the compare-and-set that the
 * scheduler and the workers rely on, counts per state kept exact by the Lua script through every
 * transition (and untouched by a failed CAS), discovery that never overwrites, and iteration over
 * every record (more than one HSCAN batch).
 */
import { describe, expect, it } from 'vitest';
import { closeRedis, createRedis } from '../../../src/lib/redis.js';
import { createKeys } from '../../../src/rollout/keys.js';
import {
  type CollectorResult,
  type CollectorState,
  FINAL_STATES,
  isFinal,
  ResultStore,
} from '../../../src/rollout/result-store.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const ROLLOUT = 'linux-fleet@19.470-4';

function record(id: number, state: CollectorState = 'queued', extra: Partial<CollectorResult> = {}) {
  return {
    id,
    name: `c-${id}`,
    hostName: `host-${id}`,
    from: '19.400-5',
    to: '19.470-4',
    state,
    attempts: 0,
    statusReads: 0,
    discoveredAt: 1_736_150_400_000,
    ...extra,
  } satisfies CollectorResult;
}

function store() {
  return new ResultStore(ctx.redis, createKeys(ctx.prefix));
}

/** Counts recomputed from the records themselves. */
async function recount(s: ResultStore, rolloutId = ROLLOUT) {
  const out: Partial<Record<CollectorState, number>> = {};
  for await (const r of s.all(rolloutId)) out[r.state] = (out[r.state] ?? 0) + 1;
  return out;
}

describe('ResultStore: records', () => {
  it('puts and gets a record with every field as written', async () => {
    const s = store();
    const r = record(101, 'pending', {
      taskId: '10000001',
      attempts: 2,
      statusReads: 3,
      message: 'a "quoted", message\nwith a newline',
      timeZone: 'Europe/Berlin',
      requestTime: 1_736_150_460_000,
      lastStatus: 6,
    });
    expect(await s.put(ROLLOUT, r)).toBe(true);
    expect(await s.get(ROLLOUT, 101)).toEqual(r);
    expect(await s.get(ROLLOUT, 102)).toBeUndefined();
    expect(await s.get('other@19.470-4', 101)).toBeUndefined();
  });

  it('getMany returns the records found, keyed by id, leaving out missing ones', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1));
    await s.put(ROLLOUT, record(3, 'succeeded'));
    const many = await s.getMany(ROLLOUT, [1, 2, 3]);
    expect([...many.keys()].sort()).toEqual([1, 3]);
    expect(many.get(3)?.state).toBe('succeeded');
    expect((await s.getMany(ROLLOUT, [])).size).toBe(0);
  });

  it('keeps rollouts apart', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1, 'succeeded'));
    await s.put('other@19.450-12', record(1, 'failed'));
    expect((await s.get(ROLLOUT, 1))?.state).toBe('succeeded');
    expect(await s.counts(ROLLOUT)).toEqual({ succeeded: 1 });
    expect(await s.counts('other@19.450-12')).toEqual({ failed: 1 });
  });

  it('keeps its keys under the prefix, with the cluster hash tag', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1));
    const keys = await ctx.redis.keys(`${ctx.prefix}*`);
    expect(keys.sort()).toEqual(
      [
        `${ctx.prefix}{fleet-upgrade}:counts:${ROLLOUT}`,
        `${ctx.prefix}{fleet-upgrade}:results:${ROLLOUT}`,
      ].sort(),
    );
  });
});

describe('ResultStore: compare-and-set and counts', () => {
  it('counts exactly across a whole life: queued → admitted → creating → pending → progressing → succeeded', async () => {
    const s = store();
    const path: CollectorState[] = ['queued', 'admitted', 'creating', 'pending', 'progressing', 'succeeded'];
    await s.put(ROLLOUT, record(1, 'queued'));
    await s.put(ROLLOUT, record(2, 'queued'));
    for (let i = 1; i < path.length; i++) {
      const ok = await s.put(ROLLOUT, record(1, path[i]), path[i - 1]);
      expect(ok).toBe(true);
      expect(await s.counts(ROLLOUT)).toEqual({ queued: 1, [path[i] as string]: 1 });
    }
    expect(await s.counts(ROLLOUT)).toEqual(await recount(s));
  });

  it('writes nothing when the stored state is not the expected one, and leaves counts unchanged', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1, 'pending', { taskId: 't1', statusReads: 1 }));
    const before = await s.counts(ROLLOUT);
    const ok = await s.put(ROLLOUT, record(1, 'succeeded', { taskId: 't2' }), 'progressing');
    expect(ok).toBe(false);
    expect(await s.get(ROLLOUT, 1)).toMatchObject({ state: 'pending', taskId: 't1', statusReads: 1 });
    expect(await s.counts(ROLLOUT)).toEqual(before);
    expect(before).toEqual({ pending: 1 });
  });

  it('refuses a CAS on a record that does not exist, creating nothing', async () => {
    const s = store();
    expect(await s.put(ROLLOUT, record(7, 'admitted'), 'queued')).toBe(false);
    expect(await s.get(ROLLOUT, 7)).toBeUndefined();
    expect(await s.counts(ROLLOUT)).toEqual({});
  });

  it('rewriting a record in the same state keeps the count', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1, 'pending', { statusReads: 1 }));
    expect(await s.put(ROLLOUT, record(1, 'pending', { statusReads: 2 }), 'pending')).toBe(true);
    expect(await s.put(ROLLOUT, record(1, 'pending', { statusReads: 3 }))).toBe(true);
    expect(await s.counts(ROLLOUT)).toEqual({ pending: 1 });
    expect((await s.get(ROLLOUT, 1))?.statusReads).toBe(3);
  });

  it('an unconditional put moves the count from the old state', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1, 'reconciling'));
    await s.put(ROLLOUT, record(1, 'timed_out'));
    expect(await s.counts(ROLLOUT)).toEqual({ timed_out: 1 });
  });

  it('of two racing CAS writes from the same state, exactly one wins and counts stay exact', async () => {
    const s = store();
    const ids = Array.from({ length: 50 }, (_, i) => i + 1);
    for (const id of ids) await s.put(ROLLOUT, record(id, 'reconciling'));
    const results = await Promise.all(
      ids.flatMap((id) => [
        s.put(ROLLOUT, record(id, 'succeeded'), 'reconciling'),
        s.put(ROLLOUT, record(id, 'queued'), 'reconciling'),
      ]),
    );
    for (let i = 0; i < ids.length; i++) expect(Number(results[2 * i]) + Number(results[2 * i + 1])).toBe(1);
    const counts = await s.counts(ROLLOUT);
    expect((counts.succeeded ?? 0) + (counts.queued ?? 0)).toBe(50);
    expect(counts.reconciling).toBeUndefined();
    expect(counts).toEqual(await recount(s));
  });

  it('counts leave out states that dropped to zero', async () => {
    const s = store();
    await s.put(ROLLOUT, record(1, 'queued'));
    await s.put(ROLLOUT, record(1, 'skipped'), 'queued');
    const raw = await ctx.redis.hgetall(createKeys(ctx.prefix).counts(ROLLOUT));
    expect(raw.queued).toBe('0');
    expect(await s.counts(ROLLOUT)).toEqual({ skipped: 1 });
  });
});

describe('ResultStore: discovery', () => {
  it('addNew returns only the new ids and never overwrites an existing record', async () => {
    const s = store();
    await s.put(ROLLOUT, record(2, 'failed', { message: 'disk full', attempts: 1 }));
    const added = await s.addNew(ROLLOUT, [record(1), record(2), record(3)]);
    expect(added).toEqual([1, 3]);
    expect(await s.get(ROLLOUT, 2)).toMatchObject({ state: 'failed', message: 'disk full', attempts: 1 });
    expect(await s.counts(ROLLOUT)).toEqual({ queued: 2, failed: 1 });
    // Again: nothing new, nothing changed.
    expect(await s.addNew(ROLLOUT, [record(1), record(2), record(3)])).toEqual([]);
    expect(await s.counts(ROLLOUT)).toEqual({ queued: 2, failed: 1 });
    expect(await s.addNew(ROLLOUT, [])).toEqual([]);
  });

  it('addNew from two clients at once adds each id exactly once', async () => {
    const s = store();
    const connection = createRedis(ctx.url, { name: 'result-store-test' });
    const other = new ResultStore(connection, createKeys(ctx.prefix));
    try {
      const batch = Array.from({ length: 300 }, (_, i) => record(i + 1));
      const [a, b] = await Promise.all([s.addNew(ROLLOUT, batch), other.addNew(ROLLOUT, batch)]);
      expect([...a, ...b].sort((x, y) => x - y)).toEqual(batch.map((r) => r.id));
      expect(await s.counts(ROLLOUT)).toEqual({ queued: 300 });
    } finally {
      await closeRedis(connection);
    }
  });
});

describe('ResultStore: all()', () => {
  it('iterates every record once, across many HSCAN batches (2,500 records)', async () => {
    const s = store();
    const n = 2_500;
    const states: CollectorState[] = ['queued', 'pending', 'succeeded', 'failed', 'not_alive'];
    const batch = Array.from({ length: n }, (_, i) => record(i + 1, states[i % states.length]));
    expect(await s.addNew(ROLLOUT, batch)).toHaveLength(n);
    const seen: number[] = [];
    for await (const r of s.all(ROLLOUT)) seen.push(r.id);
    expect(seen).toHaveLength(n);
    expect(new Set(seen).size).toBe(n);
    expect(Math.min(...seen)).toBe(1);
    expect(Math.max(...seen)).toBe(n);
    expect(await s.counts(ROLLOUT)).toEqual({
      queued: 500,
      pending: 500,
      succeeded: 500,
      failed: 500,
      not_alive: 500,
    });
    expect(await s.counts(ROLLOUT)).toEqual(await recount(s));
  });

  it('yields nothing for an unknown rollout', async () => {
    const s = store();
    const seen: CollectorResult[] = [];
    for await (const r of s.all('nobody@1.0-1')) seen.push(r);
    expect(seen).toEqual([]);
  });
});

describe('states', () => {
  it('isFinal is true for exactly the final states', () => {
    expect(FINAL_STATES.every((s) => isFinal(s))).toBe(true);
    for (const s of [
      'queued',
      'admitted',
      'creating',
      'waiting_alive',
      'reconciling',
      'pending',
      'progressing',
    ] as const)
      expect(isFinal(s)).toBe(false);
  });
});
