/**
 * CollectorStore on a real Redis: records per rollout × Collector written only as moves of the
 * transition table (collector-state.ts), each a compare-and-set on the state it was computed
 * from, with the counts per state, the policy's in-flight slots, the indexes (queued, retries,
 * reconciling), the counts per wave, the rollout's counters, the durations and the slot-freed
 * channel kept by the one Lua script in the same step; discovery that never overwrites and puts
 * canaries first; iteration over every record.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createState, type FleetState } from '../../../src/cli/boot/create-state.js';
import type { Logger } from '../../../src/lib/logger.js';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis/create-redis.js';
import type { ApplyOptions, ApplyOutcome, CollectorStore } from '../../../src/rollout/collector/index.js';
import {
  type CollectorEvent,
  type CollectorKey,
  type CollectorRecord,
  type CollectorState,
  holdsSlot,
  indexOf,
  type LifeSettings,
  type Move,
  newRecord,
  SLOT_STATES,
  type StateCounts,
  transition,
} from '../../../src/rollout/collector/index.js';
import { policyOf } from '../../../src/rollout/index.js';
import type { RolloutSettings } from '../../../src/rollout/life/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const connections: Redis[] = [];

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

const T0 = 1_736_150_400_000;
/** Two rollouts of one policy (they share its slots) and one of another policy. */
const ROLLOUT = 'linux-fleet@19.470-4';
const OLDER = 'linux-fleet@19.450-12';
const OTHER = 'windows-fleet@19.470-4';

const LIFE: LifeSettings = {
  notAliveAttempts: 2,
  notAliveBackoffMs: 600_000,
  errorAttempts: 2,
  errorBackoffMs: 60_000,
  transientAttempts: 3,
  transientBackoffMs: 10_000,
  maxBackoffMs: 3_600_000,
};
const SETTINGS: RolloutSettings = {
  ...LIFE,
  pollInitialMs: 60_000,
  pollMaxMs: 300_000,
  pollJitter: 0.2,
  taskTimeoutMs: 35 * 60_000,
};

/** The state of the test's deployment on `redis` (a second connection acts as another process). */
function open(redis: Redis = ctx.redis, logger?: Logger): FleetState {
  return createState(redis, ctx.prefix, logger);
}

function connect(): Redis {
  const redis = createRedis(ctx.url, { name: 'collector-store-test' });
  connections.push(redis);
  return redis;
}

function collector(id: number): CollectorRecord {
  return newRecord(
    { id, name: `c-${id}`, hostName: `host-${id}`, collectorVersion: '19.400-5' },
    '19.470-4',
    T0,
  );
}

const ev = {
  admit: { type: 'admit' },
  send: { type: 'send' },
  resend: { type: 'resend' },
  withdraw: { type: 'withdraw', message: 'the rollout paused' },
  created: (taskId = '10000001', requestTime = T0) =>
    ({ type: 'created', taskId, requestTime, createdBy: 'host-a:1' }) as const,
  notAlive: { type: 'not_alive', message: 'collector.not.alive' },
  error: { type: 'create_error', transient: false, message: '400 bad request' },
  transient: { type: 'create_error', transient: true, message: '503' },
  rejected: { type: 'rejected', message: 'collector.version.invalid' },
  unknown: { type: 'task_unknown', proven: true, message: 'collector.in.upgrading' },
  status: (status: number) => ({ type: 'status', status }) as const,
  statusError: { type: 'status_error', notFound: true, message: 'task not found' },
  succeeded: { type: 'succeeded', status: 2 },
  failed: { type: 'failed', message: 'disk full', status: 3 },
  timedOut: { type: 'timed_out', message: 'no final status in 35m' },
  seenAlive: { type: 'seen_alive' },
  supersede: { type: 'supersede', message: 'a newer build' },
  abort: { type: 'abort', message: 'rollout aborted (by ops)' },
  retry: { type: 'operator_retry', message: 'retried by ops' },
  admitIn: (wave: number) => ({ type: 'admit', wave }) as const,
  verify: { type: 'verify', status: 2, dueAt: T0 + 60_000 },
  unhealthy: { type: 'unhealthy', message: 'stopped heartbeating' },
  manual: { type: 'manual', message: 'Upgrades are disabled', failureClass: 'upgrades_disabled', status: 3 },
  quarantine: { type: 'quarantine', message: 'its cohort is quarantined' },
  outcomeUnknown: { type: 'outcome_unknown', message: 'offered again after an unanswered create' },
} as const satisfies Record<string, CollectorEvent | ((...a: never[]) => CollectorEvent)>;

/** The events that take a new (queued) record to each state, through the table only. */
const PATH: Record<CollectorState, CollectorEvent[]> = {
  queued: [],
  admitted: [ev.admit],
  creating: [ev.admit, ev.send],
  pending: [ev.admit, ev.send, ev.created()],
  progressing: [ev.admit, ev.send, ev.created(), ev.status(6)],
  succeeded: [ev.admit, ev.send, ev.created(), ev.status(6), ev.succeeded],
  failed: [ev.admit, ev.send, ev.created(), ev.failed],
  timed_out: [ev.admit, ev.send, ev.created(), ev.timedOut],
  reconciling: [ev.admit, ev.send, ev.unknown],
  waiting_retry: [ev.admit, ev.withdraw],
  not_alive: [ev.admit, ev.send, ev.notAlive, ev.admit, ev.send, ev.notAlive],
  rejected: [ev.admit, ev.send, ev.rejected],
  error: [ev.admit, ev.send, ev.error, ev.admit, ev.send, ev.error],
  verifying: [ev.admit, ev.send, ev.created(), ev.verify],
  unhealthy: [ev.admit, ev.send, ev.created(), ev.verify, ev.unhealthy],
  manual: [ev.admit, ev.send, ev.created(), ev.manual],
  unknown: [ev.admit, ev.send, ev.unknown, ev.outcomeUnknown],
  quarantined: [ev.quarantine],
  skipped: [ev.supersede],
  aborted: [ev.abort],
};

/** The move `event` makes of the stored record; throws when the table has none. */
async function moveOf(
  store: CollectorStore,
  rolloutId: string,
  id: number,
  event: CollectorEvent,
  now = T0,
): Promise<Move> {
  const t = transition(await store.get(rolloutId, id), event, { now, settings: LIFE, random: () => 0.5 });
  if (!t.ok) throw new Error(t.reason);
  return t.move;
}

/** Applies `event` to the stored record (a generous limit unless one is given). */
async function step(
  store: CollectorStore,
  rolloutId: string,
  id: number,
  event: CollectorEvent,
  options: ApplyOptions & { now?: number } = {},
): Promise<ApplyOutcome> {
  const move = await moveOf(store, rolloutId, id, event, options.now);
  const [outcome] = await store.apply(rolloutId, [move], { limit: 1_000, ...options });
  return outcome as ApplyOutcome;
}

/** Discovers `id` and drives it to `state`; every move must be written. */
async function put(store: CollectorStore, rolloutId: string, id: number, state: CollectorState, now = T0) {
  expect(await store.discover(rolloutId, [collector(id)])).toEqual([id]);
  for (const event of PATH[state]) expect(await step(store, rolloutId, id, event, { now })).toBe('written');
  const r = await store.get(rolloutId, id);
  expect(r?.state).toBe(state);
  return r as CollectorRecord;
}

async function records(store: CollectorStore, rolloutId: string): Promise<CollectorRecord[]> {
  const out: CollectorRecord[] = [];
  for await (const r of store.all(rolloutId)) out.push(r);
  return out;
}

/** Counts recomputed from the records themselves. */
async function recount(store: CollectorStore, rolloutId: string): Promise<StateCounts> {
  const out: StateCounts = {};
  for (const r of await records(store, rolloutId)) out[r.state] = (out[r.state] ?? 0) + 1;
  return out;
}

/** Counts per wave recomputed from the records (those admitted in a wave), as waveCounts() gives them. */
function rewave(all: readonly CollectorRecord[]): StateCounts[] {
  const out: StateCounts[] = [];
  for (const r of all) {
    if (r.wave === undefined) continue;
    for (let w = out.length; w <= r.wave; w++) out.push({});
    const wave = out[r.wave] as StateCounts;
    wave[r.state] = (wave[r.state] ?? 0) + 1;
  }
  return out;
}

async function zset(key: string): Promise<[number, number][]> {
  const flat = await ctx.redis.zrange(key, '0', '-1', 'WITHSCORES');
  const out: [number, number][] = [];
  for (let i = 0; i < flat.length; i += 2) out.push([Number(flat[i]), Number(flat[i + 1])]);
  return out;
}

const byId = <T extends { id: number } | [number, number]>(a: T, b: T) =>
  (Array.isArray(a) ? a[0] : a.id) - (Array.isArray(b) ? b[0] : b.id);

/**
 * What the store promises after any sequence of moves: counts equal the records, each index holds
 * exactly the Collectors in its state (retries scored by nextAttemptAt, reconciling by
 * reconcilingSince), and the policy's slots are exactly its Collectors in slot states.
 */
async function expectConsistent(s: FleetState, rolloutIds: readonly string[]) {
  const members = new Set<string>();
  for (const rolloutId of rolloutIds) {
    const all = await records(s.store, rolloutId);
    expect(await s.store.counts(rolloutId)).toEqual(await recount(s.store, rolloutId));
    const queued = all.filter((r) => indexOf(r.state) === 'queued').map((r) => r.id);
    expect((await s.store.indexed(rolloutId, 'queued')).map(Number).sort((a, b) => a - b)).toEqual(
      queued.sort((a, b) => a - b),
    );
    expect((await zset(s.keys.retries(rolloutId))).sort(byId)).toEqual(
      all
        .filter((r) => r.state === 'waiting_retry')
        .map((r): [number, number] => [r.id, r.nextAttemptAt ?? Number.NaN])
        .sort(byId),
    );
    expect((await zset(s.keys.reconciling(rolloutId))).sort(byId)).toEqual(
      all
        .filter((r) => r.state === 'reconciling')
        .map((r): [number, number] => [r.id, r.reconcilingSince ?? Number.NaN])
        .sort(byId),
    );
    expect(await s.store.waveCounts(rolloutId)).toEqual(rewave(all));
    for (const r of all) if (SLOT_STATES.includes(r.state)) members.add(`${rolloutId}#${r.id}`);
  }
  const policies = new Set(rolloutIds.map(policyOf));
  const held = new Set<string>();
  for (const policy of policies) for (const m of await ctx.redis.smembers(s.keys.slots(policy))) held.add(m);
  expect(held).toEqual(members);
}

/** Polls `check` every few ms until it holds, for at most `ms`. */
async function until(check: () => boolean, ms = 2_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('CollectorStore: records', () => {
  it('writes and reads a record with every field as written', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 101, 'pending');
    const full: CollectorRecord = {
      id: 101,
      name: 'c-101',
      hostName: 'host-101',
      timeZone: 'Europe/Berlin',
      from: '19.400-5',
      to: '19.470-4',
      state: 'failed',
      taskId: '10000001',
      attempts: 2,
      admissions: 3,
      notAliveAnswers: 1,
      errorAnswers: 1,
      transientErrors: 2,
      statusReads: 7,
      statusErrors: 1,
      message: 'a "quoted", message\nwith a newline and ünïcödé',
      discoveredAt: T0,
      admittedAt: T0 + 1,
      createSentAt: T0 + 2,
      requestTime: T0 + 3,
      finishedAt: T0 + 4,
      nextAttemptAt: T0 + 5,
      reconcilingSince: T0 + 6,
      taskProven: true,
      lastStatus: 3,
      createdBy: 'host-a:4242',
    };
    expect(await s.store.apply(ROLLOUT, [{ from: 'pending', event: 'failed', next: full }])).toEqual([
      'written',
    ]);
    expect(await s.store.get(ROLLOUT, 101)).toStrictEqual(full);
    expect((await s.store.getMany(ROLLOUT, [101])).get(101)).toStrictEqual(full);
    expect(await s.store.get(ROLLOUT, 102)).toBeUndefined();
    expect(await s.store.get(OTHER, 101)).toBeUndefined();
  });

  it('getMany returns the records found, keyed by id, leaving out missing ones', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 1, 'queued');
    await put(s.store, ROLLOUT, 3, 'succeeded');
    const many = await s.store.getMany(ROLLOUT, [1, 2, 3]);
    expect([...many.keys()].sort()).toEqual([1, 3]);
    expect(many.get(1)).toEqual(await s.store.get(ROLLOUT, 1));
    expect(many.get(3)?.state).toBe('succeeded');
    expect((await s.store.getMany(ROLLOUT, [])).size).toBe(0);
  });

  it('keeps rollouts apart', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 1, 'succeeded');
    await put(s.store, OLDER, 1, 'failed');
    await put(s.store, OTHER, 1, 'reconciling');
    expect((await s.store.get(ROLLOUT, 1))?.state).toBe('succeeded');
    expect((await s.store.get(OLDER, 1))?.state).toBe('failed');
    expect(await s.store.counts(ROLLOUT)).toEqual({ succeeded: 1 });
    expect(await s.store.counts(OLDER)).toEqual({ failed: 1 });
    expect(await s.store.counts(OTHER)).toEqual({ reconciling: 1 });
    expect(await s.store.indexed(OTHER, 'reconciling')).toEqual([1]);
    expect(await s.store.indexed(ROLLOUT, 'reconciling')).toEqual([]);
  });

  it('keeps its keys under the prefix, with the cluster hash tag', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [collector(1), collector(2)]);
    expect(await step(s.store, ROLLOUT, 1, ev.admit, { durationMs: 1 })).toBe('written');
    const base = `${ctx.prefix}{fleet-upgrade}:`;
    expect((await ctx.redis.keys(`${ctx.prefix}*`)).sort()).toEqual(
      [
        `${base}results:${ROLLOUT}`,
        `${base}counts:${ROLLOUT}`,
        `${base}queued:${ROLLOUT}`,
        `${base}rollout:${ROLLOUT}`,
        `${base}durations:${ROLLOUT}`,
        `${base}slots:linux-fleet`,
        `${base}org-counts:${ROLLOUT}`,
        `${base}org-slots:linux-fleet:default`,
      ].sort(),
    );
  });
});

describe('CollectorStore: moves, compare-and-set and counts', () => {
  it('counts exactly across a whole life: discover → admit → send → created → status → succeeded', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [collector(1), collector(2)]);
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 2 });
    const life: [CollectorEvent, CollectorState][] = [
      [ev.admit, 'admitted'],
      [ev.send, 'creating'],
      [ev.created(), 'pending'],
      [ev.status(1), 'pending'],
      [ev.status(6), 'progressing'],
      [ev.succeeded, 'succeeded'],
    ];
    for (const [event, state] of life) {
      expect(await step(s.store, ROLLOUT, 1, event)).toBe('written');
      expect((await s.store.get(ROLLOUT, 1))?.state).toBe(state);
      expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 1, [state]: 1 });
      await expectConsistent(s, [ROLLOUT]);
    }
    expect(await s.store.get(ROLLOUT, 1)).toMatchObject({
      attempts: 1,
      admissions: 1,
      statusReads: 3,
      taskId: '10000001',
    });
  });

  it('of two clients applying the same move from the same state, exactly one writes; counts stay exact', async () => {
    const a = open();
    const b = open(connect());
    const ids = Array.from({ length: 50 }, (_, i) => i + 1);
    for (const id of ids) await put(a.store, ROLLOUT, id, 'pending');
    const moves = await Promise.all(ids.map((id) => moveOf(a.store, ROLLOUT, id, ev.succeeded)));
    // Half the ids race the same move, the other half two different moves from the same state.
    const others = await Promise.all(
      ids.map((id) => moveOf(a.store, ROLLOUT, id, id % 2 ? ev.succeeded : ev.failed)),
    );
    const outcomes = await Promise.all(
      ids.flatMap((_, i) => [
        a.store.apply(ROLLOUT, [moves[i] as Move]),
        b.store.apply(ROLLOUT, [others[i] as Move]),
      ]),
    );
    for (let i = 0; i < ids.length; i++) {
      expect([outcomes[2 * i]?.[0], outcomes[2 * i + 1]?.[0]].sort()).toEqual(['stale', 'written']);
    }
    const counts = await a.store.counts(ROLLOUT);
    expect((counts.succeeded ?? 0) + (counts.failed ?? 0)).toBe(50);
    expect(counts.pending).toBeUndefined();
    await expectConsistent(a, [ROLLOUT]);
    expect(await a.store.slotHolders('linux-fleet')).toEqual([]);
  });

  it('of two clients admitting the same Collector, one takes the slot and the other is stale', async () => {
    const a = open();
    const b = open(connect());
    const ids = Array.from({ length: 20 }, (_, i) => i + 1);
    await a.store.discover(ROLLOUT, ids.map(collector));
    const moves = await Promise.all(ids.map((id) => moveOf(a.store, ROLLOUT, id, ev.admit)));
    const [x, y] = await Promise.all([
      a.store.apply(ROLLOUT, moves, { limit: 100 }),
      b.store.apply(ROLLOUT, [...moves].reverse(), { limit: 100 }),
    ]);
    const reversed = [...(y ?? [])].reverse();
    for (let i = 0; i < ids.length; i++) expect([x?.[i], reversed[i]].sort()).toEqual(['stale', 'written']);
    expect(await a.store.counts(ROLLOUT)).toEqual({ admitted: 20 });
    expect(await ctx.redis.scard(a.keys.slots('linux-fleet'))).toBe(20);
    await expectConsistent(a, [ROLLOUT]);
  });

  it('a move from a state the record is no longer in is stale: record, counts, slot and indexes unchanged', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 1, 'reconciling');
    await put(s.store, ROLLOUT, 2, 'queued');
    const move = await moveOf(s.store, ROLLOUT, 1, ev.succeeded);
    expect(await step(s.store, ROLLOUT, 1, ev.created('20000002', T0 + 5))).toBe('written');
    const before = {
      record: await s.store.get(ROLLOUT, 1),
      counts: await s.store.counts(ROLLOUT),
      slots: await ctx.redis.smembers(s.keys.slots('linux-fleet')),
    };
    expect(await s.store.apply(ROLLOUT, [move], { limit: 10 })).toEqual(['stale']);
    expect(await s.store.get(ROLLOUT, 1)).toEqual(before.record);
    expect(before.record).toMatchObject({ state: 'pending', taskId: '20000002' });
    expect(await s.store.counts(ROLLOUT)).toEqual(before.counts);
    expect(before.counts).toEqual({ pending: 1, queued: 1 });
    expect(await ctx.redis.smembers(s.keys.slots('linux-fleet'))).toEqual(before.slots);
    expect(before.slots).toEqual([`${ROLLOUT}#1`]);
    await expectConsistent(s, [ROLLOUT]);
  });

  it('a move of a record that does not exist is stale and creates nothing', async () => {
    const s = open();
    const move: Move = { from: 'queued', event: 'admit', next: { ...collector(7), state: 'admitted' } };
    expect(await s.store.apply(ROLLOUT, [move], { limit: 10 })).toEqual(['stale']);
    expect(await s.store.get(ROLLOUT, 7)).toBeUndefined();
    expect(await s.store.counts(ROLLOUT)).toEqual({});
    expect(await s.store.slotHolders('linux-fleet')).toEqual([]);
  });

  it('refuses a move that is not in the table, writing nothing, and logs it as a defect', async () => {
    const log = captureLogger('debug');
    const s = open(ctx.redis, log.logger);
    await put(s.store, ROLLOUT, 1, 'queued');
    await put(s.store, ROLLOUT, 2, 'pending');
    await put(s.store, ROLLOUT, 3, 'queued');
    const before = await s.store.get(ROLLOUT, 1);
    const bad: Move[] = [
      { from: 'queued', event: 'succeeded', next: { ...collector(1), state: 'succeeded' } },
      // An event in the table, but not between these states.
      {
        from: 'pending',
        event: 'status',
        next: { ...(before as CollectorRecord), id: 2, state: 'succeeded' },
      },
    ];
    const good = await moveOf(s.store, ROLLOUT, 3, ev.admit);
    expect(await s.store.apply(ROLLOUT, [bad[0] as Move, good, bad[1] as Move], { limit: 10 })).toEqual([
      'refused',
      'written',
      'refused',
    ]);
    expect(await s.store.get(ROLLOUT, 1)).toEqual(before);
    expect((await s.store.get(ROLLOUT, 2))?.state).toBe('pending');
    expect((await s.store.get(ROLLOUT, 3))?.state).toBe('admitted');
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 1, pending: 1, admitted: 1 });
    const defects = log.lines().filter((l) => l.level === 50);
    expect(defects).toEqual([
      expect.objectContaining({
        msg: 'defect: a move not in the transition table was refused',
        rollout: ROLLOUT,
        collector: 1,
        from: 'queued',
        event: 'succeeded',
        to: 'succeeded',
      }),
      expect.objectContaining({ collector: 2, from: 'pending', event: 'status', to: 'succeeded' }),
    ]);
    await expectConsistent(s, [ROLLOUT]);
  });

  it('a move that stays in its state rewrites the record and keeps the count', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 1, 'pending');
    for (let i = 0; i < 3; i++) expect(await step(s.store, ROLLOUT, 1, ev.status(1))).toBe('written');
    expect(await s.store.counts(ROLLOUT)).toEqual({ pending: 1 });
    expect((await s.store.get(ROLLOUT, 1))?.statusReads).toBe(3);
  });

  it('counts leave out states that dropped to zero', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 1, 'skipped');
    expect((await ctx.redis.hgetall(s.keys.counts(ROLLOUT))).queued).toBe('0');
    expect(await s.store.counts(ROLLOUT)).toEqual({ skipped: 1 });
  });

  it('keeps counts, indexes and slots true to the records through a long random sequence of moves', async () => {
    const s = open();
    const ids = Array.from({ length: 30 }, (_, i) => i + 1);
    await s.store.discover(ROLLOUT, ids.map(collector));
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const events: CollectorEvent[] = [
      ev.admit,
      ev.send,
      ev.resend,
      ev.withdraw,
      ev.created(),
      ev.notAlive,
      ev.error,
      ev.transient,
      ev.rejected,
      ev.unknown,
      { type: 'task_unknown', proven: false, message: 'create unanswered' },
      ev.status(0),
      ev.status(6),
      ev.statusError,
      ev.succeeded,
      ev.failed,
      ev.timedOut,
      ev.seenAlive,
      ev.supersede,
      ev.admitIn(0),
      ev.admitIn(1),
      ev.admitIn(2),
      ev.retry,
      ev.abort,
    ];
    let snapshot = new Map<CollectorKey, CollectorRecord>();
    const outcomesSeen = new Set<ApplyOutcome>();
    for (let round = 0; round < 80; round++) {
      const now = T0 + round * 1_000;
      const current = await s.store.getMany(ROLLOUT, ids);
      const moves: Move[] = [];
      const picked = ids.filter(() => random() < 0.3);
      for (const id of picked) {
        // Now and then a move computed from an older read, as a late worker would.
        const from = random() < 0.15 ? (snapshot.get(id) ?? current.get(id)) : current.get(id);
        const options = events
          .map((e) => transition(from, e, { now, settings: LIFE, random }))
          .flatMap((t) => (t.ok ? [t.move] : []));
        const move = options[Math.floor(random() * options.length)];
        if (move) moves.push(move);
      }
      const outcomes = await s.store.apply(ROLLOUT, moves, { limit: 6 });
      const after = await s.store.getMany(ROLLOUT, ids);
      moves.forEach((m, i) => {
        const outcome = outcomes[i] as ApplyOutcome;
        outcomesSeen.add(outcome);
        const id = m.next.id;
        if (outcome === 'written') expect(after.get(id)).toEqual(JSON.parse(JSON.stringify(m.next)));
        else expect(after.get(id)).toEqual(current.get(id));
        if (outcome === 'stale') expect(current.get(id)?.state).not.toBe(m.from);
        if (outcome === 'no_slot')
          expect(holdsSlot(m.next.state) && !holdsSlot(current.get(id)?.state ?? 'queued')).toBe(true);
      });
      expect(await ctx.redis.scard(s.keys.slots('linux-fleet'))).toBeLessThanOrEqual(6);
      await expectConsistent(s, [ROLLOUT]);
      if (round % 3 === 0) snapshot = current;
    }
    // The sequence went through every kind of outcome but `refused`.
    expect(outcomesSeen).toEqual(new Set(['written', 'stale', 'no_slot']));
  });
});

describe('CollectorStore: counts per wave', () => {
  it('counts a Collector in the wave of its first admission, through every later move, exactly', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [1, 2, 3, 4, 5].map(collector));
    // Nobody admitted: no wave counts at all (queued Collectors belong to no wave yet).
    expect(await s.store.waveCounts(ROLLOUT)).toEqual([]);
    expect(await step(s.store, ROLLOUT, 1, ev.admitIn(0))).toBe('written');
    expect(await step(s.store, ROLLOUT, 2, ev.admitIn(0))).toBe('written');
    expect(await step(s.store, ROLLOUT, 3, ev.admitIn(2))).toBe('written');
    expect(await s.store.waveCounts(ROLLOUT)).toEqual([{ admitted: 2 }, {}, { admitted: 1 }]);
    for (const e of [ev.send, ev.created(), ev.status(6), ev.succeeded]) await step(s.store, ROLLOUT, 1, e);
    for (const e of [ev.send, ev.created(), ev.failed]) await step(s.store, ROLLOUT, 2, e);
    await step(s.store, ROLLOUT, 3, ev.withdraw);
    expect(await s.store.waveCounts(ROLLOUT)).toEqual([
      { succeeded: 1, failed: 1 },
      {},
      { waiting_retry: 1 },
    ]);
    // Admitted again while wave 3 (index 3) is open: it stays in its first wave.
    expect(await step(s.store, ROLLOUT, 3, ev.admitIn(3))).toBe('written');
    expect((await s.store.get(ROLLOUT, 3))?.wave).toBe(2);
    // An operator's retry: the same Collector, the same wave, a new state.
    expect(await step(s.store, ROLLOUT, 2, ev.retry)).toBe('written');
    // Aborted while waiting in its wave; one that was never admitted is counted in no wave.
    expect(await step(s.store, ROLLOUT, 2, ev.abort)).toBe('written');
    expect(await step(s.store, ROLLOUT, 4, ev.abort)).toBe('written');
    expect(await s.store.waveCounts(ROLLOUT)).toEqual([{ succeeded: 1, aborted: 1 }, {}, { admitted: 1 }]);
    expect(await s.store.counts(ROLLOUT)).toEqual({ succeeded: 1, aborted: 2, admitted: 1, queued: 1 });
    // The HASH itself: `<wave>:<state>`, zeros left behind by moves read as nothing.
    const raw = await ctx.redis.hgetall(s.keys.waveCounts(ROLLOUT));
    expect(raw).toMatchObject({ '0:succeeded': '1', '0:aborted': '1', '0:failed': '0', '2:admitted': '1' });
    await expectConsistent(s, [ROLLOUT]);
  });

  it('a stale or refused move changes no wave count; rollouts keep their own', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [collector(1)]);
    await s.store.discover(OTHER, [collector(1)]);
    await step(s.store, ROLLOUT, 1, ev.admitIn(1));
    const late = await moveOf(s.store, ROLLOUT, 1, ev.withdraw);
    await step(s.store, ROLLOUT, 1, ev.send);
    expect(await s.store.apply(ROLLOUT, [late])).toEqual(['stale']);
    const refused: Move = {
      from: 'creating',
      event: 'abort',
      next: { ...((await s.store.get(ROLLOUT, 1)) as CollectorRecord), state: 'aborted' },
    };
    expect(await s.store.apply(ROLLOUT, [refused])).toEqual(['refused']);
    expect(await s.store.waveCounts(ROLLOUT)).toEqual([{}, { creating: 1 }]);
    expect(await s.store.waveCounts(OTHER)).toEqual([]);
    await step(s.store, OTHER, 1, ev.admitIn(0));
    expect(await s.store.waveCounts(OTHER)).toEqual([{ admitted: 1 }]);
    expect(await s.store.waveCounts(ROLLOUT)).toEqual([{}, { creating: 1 }]);
    await expectConsistent(s, [ROLLOUT, OTHER]);
  });
});

describe('CollectorStore: discovery', () => {
  it('writes only new records, never overwriting one, and returns the new ids', async () => {
    const s = open();
    const failed = await put(s.store, ROLLOUT, 2, 'failed');
    expect(await s.store.discover(ROLLOUT, [collector(1), collector(2), collector(3)])).toEqual([1, 3]);
    expect(await s.store.get(ROLLOUT, 2)).toEqual(failed);
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 2, failed: 1 });
    // Again: nothing new, nothing changed, the admission order kept.
    const order = await zset(s.keys.queued(ROLLOUT));
    expect(await s.store.discover(ROLLOUT, [collector(1), collector(2), collector(3)])).toEqual([]);
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 2, failed: 1 });
    expect(await zset(s.keys.queued(ROLLOUT))).toEqual(order);
    expect(await s.store.discover(ROLLOUT, [])).toEqual([]);
    // The same id twice in one batch is added once.
    expect(await s.store.discover(ROLLOUT, [collector(4), collector(4)])).toEqual([4]);
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 3, failed: 1 });
  });

  it('from two clients at once adds each id exactly once', async () => {
    const a = open();
    const b = open(connect());
    const batch = Array.from({ length: 300 }, (_, i) => collector(i + 1));
    const [x, y] = await Promise.all([a.store.discover(ROLLOUT, batch), b.store.discover(ROLLOUT, batch)]);
    expect([...x, ...y].map(Number).sort((p, q) => p - q)).toEqual(batch.map((r) => r.id));
    expect(await a.store.counts(ROLLOUT)).toEqual({ queued: 300 });
    expect(await ctx.redis.zcard(a.keys.queued(ROLLOUT))).toBe(300);
    await expectConsistent(a, [ROLLOUT]);
  });

  it('gives queued Collectors an increasing admission order across calls; one seen alive again goes last', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 42, 'not_alive');
    await s.store.discover(ROLLOUT, [5, 3, 9].map(collector));
    await s.store.discover(ROLLOUT, [1, 7].map(collector));
    expect(await s.store.indexed(ROLLOUT, 'queued')).toEqual([5, 3, 9, 1, 7]);
    expect(await step(s.store, ROLLOUT, 42, ev.seenAlive)).toBe('written');
    expect(await step(s.store, ROLLOUT, 3, ev.admit)).toBe('written');
    await s.store.discover(ROLLOUT, [2].map(collector));
    const scored = await zset(s.keys.queued(ROLLOUT));
    expect(scored.map(([id]) => id)).toEqual([5, 9, 1, 7, 42, 2]);
    const scores = scored.map(([, score]) => score);
    expect(new Set(scores).size).toBe(scores.length);
    expect([...scores].sort((p, q) => p - q)).toEqual(scores);
  });

  it('puts canaries first in the admission order, in the order found, and counts them in the rollout', async () => {
    const s = open();
    await s.rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 10,
      settings: SETTINGS,
      now: T0,
    });
    await s.store.discover(ROLLOUT, [5, 3].map(collector));
    // A scan finds 9 and 1 (canaries) among 8, 9, 1, 4.
    expect(await s.store.discover(ROLLOUT, [8, 9, 1, 4].map(collector), new Set([9, 1, 77]))).toEqual([
      8, 9, 1, 4,
    ]);
    expect(await s.store.indexed(ROLLOUT, 'queued')).toEqual([9, 1, 5, 3, 8, 4]);
    expect((await s.rollouts.get(ROLLOUT))?.canaries).toBe(2);
    // Canaries found by a later scan still go before every other, after the earlier canaries.
    expect(await s.store.discover(ROLLOUT, [6, 2].map(collector), new Set([2]))).toEqual([6, 2]);
    expect(await s.store.indexed(ROLLOUT, 'queued')).toEqual([9, 1, 2, 5, 3, 8, 4, 6]);
    expect((await s.rollouts.get(ROLLOUT))?.canaries).toBe(3);
    // A canary already known is neither moved nor counted again.
    expect(await s.store.discover(ROLLOUT, [collector(9), collector(3)], new Set([9, 3]))).toEqual([]);
    expect(await s.store.indexed(ROLLOUT, 'queued')).toEqual([9, 1, 2, 5, 3, 8, 4, 6]);
    expect((await s.rollouts.get(ROLLOUT))?.canaries).toBe(3);
    // Candidates come in that order.
    expect((await s.store.candidates(ROLLOUT, T0, 4)).map((r) => r.id)).toEqual([9, 1, 2, 5]);
    await expectConsistent(s, [ROLLOUT]);
  });

  it('a Collector retargeted while queued (its organization’s build moved on) keeps its place and count', async () => {
    const s = open();
    await s.rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 10,
      settings: SETTINGS,
      now: T0,
    });
    await s.store.discover(ROLLOUT, [5, 3].map(collector), new Set([3]));
    await s.store.discover(ROLLOUT, [8, 4].map(collector));
    const before = await zset(s.keys.queued(ROLLOUT));
    for (const id of [3, 8])
      expect(await step(s.store, ROLLOUT, id, { type: 'retarget', to: '19.480-2' })).toBe('written');
    expect(await zset(s.keys.queued(ROLLOUT))).toEqual(before);
    expect((await s.store.get(ROLLOUT, 8))?.to).toBe('19.480-2');
    expect((await s.rollouts.get(ROLLOUT))?.canaries).toBe(1);
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 4 });
    await expectConsistent(s, [ROLLOUT]);
  });
});

describe('CollectorStore: in-flight slots', () => {
  it('admit takes a slot only under the limit; beyond it the move is no_slot and the record unchanged', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [5, 3, 9, 1].map(collector));
    const moves = await Promise.all([5, 3, 9, 1].map((id) => moveOf(s.store, ROLLOUT, id, ev.admit)));
    expect(await s.store.apply(ROLLOUT, moves, { limit: 3 })).toEqual([
      'written',
      'written',
      'written',
      'no_slot',
    ]);
    expect(await s.store.get(ROLLOUT, 1)).toEqual(collector(1));
    expect(await s.store.counts(ROLLOUT)).toEqual({ admitted: 3, queued: 1 });
    expect(await s.store.indexed(ROLLOUT, 'queued')).toEqual([1]);
    expect((await s.store.slotHolders('linux-fleet')).sort((a, b) => a.collectorId - b.collectorId)).toEqual([
      { rolloutId: ROLLOUT, key: 3, org: 'default', collectorId: 3 },
      { rolloutId: ROLLOUT, key: 5, org: 'default', collectorId: 5 },
      { rolloutId: ROLLOUT, key: 9, org: 'default', collectorId: 9 },
    ]);
    // Without a limit, no slot is given at all.
    expect(await s.store.apply(ROLLOUT, [moves[3] as Move])).toEqual(['no_slot']);
    await expectConsistent(s, [ROLLOUT]);
  });

  it('a slot-holding Collector keeps its slot through its moves, even when every slot is held', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [1, 2, 3].map(collector));
    expect(await step(s.store, ROLLOUT, 1, ev.admit, { limit: 2 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 2, ev.admit, { limit: 2 })).toBe('written');
    for (const event of [ev.send, ev.resend, ev.unknown, ev.created(), ev.status(6), ev.status(0)]) {
      // limit 0: a move that keeps its slot needs no room.
      expect(await step(s.store, ROLLOUT, 1, event, { limit: 0 })).toBe('written');
    }
    expect(await step(s.store, ROLLOUT, 3, ev.admit, { limit: 2 })).toBe('no_slot');
    expect((await ctx.redis.smembers(s.keys.slots('linux-fleet'))).sort()).toEqual([
      `${ROLLOUT}#1`,
      `${ROLLOUT}#2`,
    ]);
    // A member that is somehow already in the set (taken before a crash) needs no room either.
    await ctx.redis.srem(s.keys.slots('linux-fleet'), `${ROLLOUT}#2`);
    await ctx.redis.sadd(s.keys.slots('linux-fleet'), `${ROLLOUT}#3`);
    expect(await step(s.store, ROLLOUT, 3, ev.admit, { limit: 2 })).toBe('written');
    expect(await ctx.redis.scard(s.keys.slots('linux-fleet'))).toBe(2);
  });

  it('leaving a slot state frees the slot in the same write; a stale move frees nothing', async () => {
    const s = open();
    const leave: [CollectorState, CollectorEvent][] = [
      ['admitted', ev.withdraw],
      ['admitted', ev.supersede],
      ['creating', ev.notAlive],
      ['creating', ev.error],
      ['creating', ev.rejected],
      ['pending', ev.succeeded],
      ['progressing', ev.failed],
      ['pending', ev.timedOut],
      ['reconciling', ev.timedOut],
      ['reconciling', ev.succeeded],
      ['reconciling', ev.supersede],
    ];
    for (const [i, [state]] of leave.entries()) await put(s.store, ROLLOUT, i + 1, state);
    expect(await ctx.redis.scard(s.keys.slots('linux-fleet'))).toBe(leave.length);
    const late = await moveOf(s.store, ROLLOUT, 6, ev.failed);
    for (const [i, [, event]] of leave.entries()) {
      expect(await step(s.store, ROLLOUT, i + 1, event)).toBe('written');
      expect(await ctx.redis.sismember(s.keys.slots('linux-fleet'), `${ROLLOUT}#${i + 1}`)).toBe(0);
      expect(await ctx.redis.scard(s.keys.slots('linux-fleet'))).toBe(leave.length - i - 1);
      await expectConsistent(s, [ROLLOUT]);
    }
    // Collector 6 succeeded; the late `failed` from pending is stale and changes nothing.
    await put(s.store, ROLLOUT, 50, 'pending');
    expect(await s.store.apply(ROLLOUT, [late])).toEqual(['stale']);
    expect((await s.store.get(ROLLOUT, 6))?.state).toBe('succeeded');
    expect(await s.store.slotHolders('linux-fleet')).toEqual([
      { rolloutId: ROLLOUT, key: 50, org: 'default', collectorId: 50 },
    ]);
  });

  it('with a lowered limit, admits nobody new while the slots held are above it', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [1, 2, 3, 4, 5].map(collector));
    for (const id of [1, 2, 3, 4])
      expect(await step(s.store, ROLLOUT, id, ev.admit, { limit: 4 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 5, ev.admit, { limit: 2 })).toBe('no_slot');
    expect(await step(s.store, ROLLOUT, 1, ev.supersede, { limit: 2 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 5, ev.admit, { limit: 2 })).toBe('no_slot');
    expect(await step(s.store, ROLLOUT, 2, ev.withdraw, { limit: 2 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 5, ev.admit, { limit: 2 })).toBe('no_slot');
    // Members keep their slots meanwhile.
    expect(await step(s.store, ROLLOUT, 3, ev.send, { limit: 2 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 4, ev.withdraw, { limit: 2 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 5, ev.admit, { limit: 2 })).toBe('written');
    expect(await ctx.redis.scard(s.keys.slots('linux-fleet'))).toBe(2);
    await expectConsistent(s, [ROLLOUT]);
  });

  it('never exceeds the limit with concurrent admits from several clients', async () => {
    const seed = open();
    const clients = Array.from({ length: 5 }, () => open(connect()));
    const limit = 7;
    const ids = Array.from({ length: 160 }, (_, i) => i + 1);
    await seed.store.discover(ROLLOUT, ids.map(collector));
    const results = await Promise.all(
      clients.flatMap((c, n) =>
        Array.from({ length: 10 }, async (_, k) => {
          // Overlapping id ranges: several clients ask for the same Collectors.
          const wanted = [n * 3 + k + 1, n * 3 + k + 2, 100 + n * 10 + k];
          const moves = wanted.map((id) => ({
            from: 'queued' as const,
            event: 'admit' as const,
            next: { ...collector(id), state: 'admitted' as const, admissions: 1, admittedAt: T0 },
          }));
          const outcomes = await c.store.apply(ROLLOUT, moves, { limit });
          return wanted.filter((_, i) => outcomes[i] === 'written');
        }),
      ),
    );
    const written = results.flat();
    expect(written).toHaveLength(limit);
    expect(new Set(written).size).toBe(limit);
    expect(await ctx.redis.scard(seed.keys.slots('linux-fleet'))).toBe(limit);
    expect(await seed.store.counts(ROLLOUT)).toEqual({ admitted: limit, queued: ids.length - limit });
    await expectConsistent(seed, [ROLLOUT]);
  });

  it('holds the limit through many rounds of take and free from several clients', async () => {
    const seed = open();
    const clients = Array.from({ length: 4 }, () => open(connect()));
    const watcher = connect();
    const limit = 5;
    const ids = clients.flatMap((_, c) => Array.from({ length: 50 }, (_, r) => c * 1000 + r));
    await seed.store.discover(ROLLOUT, ids.map(collector));
    let running = true;
    let maxWatched = 0;
    const watch = (async () => {
      while (running) maxWatched = Math.max(maxWatched, await watcher.scard(seed.keys.slots('linux-fleet')));
    })();
    let maxSeen = 0;
    let taken = 0;
    try {
      await Promise.all(
        clients.map(async (c, n) => {
          for (let round = 0; round < 25; round++) {
            const mine = [n * 1000 + round, n * 1000 + round + 25];
            const moves = await Promise.all(mine.map((id) => moveOf(c.store, ROLLOUT, id, ev.admit)));
            const outcomes = await c.store.apply(ROLLOUT, moves, { limit });
            maxSeen = Math.max(maxSeen, await c.redis.scard(c.keys.slots('linux-fleet')));
            for (const [i, id] of mine.entries()) {
              if (outcomes[i] !== 'written') continue;
              taken++;
              expect(await step(c.store, ROLLOUT, id, i ? ev.supersede : ev.withdraw, { limit })).toBe(
                'written',
              );
            }
          }
        }),
      );
    } finally {
      running = false;
      await watch;
    }
    expect(taken).toBeGreaterThan(limit);
    expect(maxSeen).toBeGreaterThan(0);
    expect(Math.max(maxSeen, maxWatched)).toBeLessThanOrEqual(limit);
    expect(await ctx.redis.scard(seed.keys.slots('linux-fleet'))).toBe(0);
    await expectConsistent(seed, [ROLLOUT]);
  });

  it('rollouts of one policy share its slots; different policies are apart', async () => {
    const s = open();
    await s.store.discover(OLDER, [1, 2].map(collector));
    await s.store.discover(ROLLOUT, [1, 2].map(collector));
    await s.store.discover(OTHER, [1, 2, 3].map(collector));
    expect(await step(s.store, OLDER, 1, ev.admit, { limit: 3 })).toBe('written');
    expect(await step(s.store, OLDER, 2, ev.admit, { limit: 3 })).toBe('written');
    // The same Collector id in another rollout of the policy is another holder.
    expect(await step(s.store, ROLLOUT, 1, ev.admit, { limit: 3 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 2, ev.admit, { limit: 3 })).toBe('no_slot');
    for (const id of [1, 2, 3])
      expect(await step(s.store, OTHER, id, ev.admit, { limit: 3 })).toBe('written');
    const sort = (h: { rolloutId: string; collectorId: number }[]) =>
      h.map((x) => `${x.rolloutId}#${x.collectorId}`).sort();
    expect(sort(await s.store.slotHolders('linux-fleet'))).toEqual([
      `${OLDER}#1`,
      `${OLDER}#2`,
      `${ROLLOUT}#1`,
    ]);
    expect(sort(await s.store.slotHolders('windows-fleet'))).toEqual([
      `${OTHER}#1`,
      `${OTHER}#2`,
      `${OTHER}#3`,
    ]);
    // A slot freed in the older rollout is free for the newer one.
    expect(await step(s.store, OLDER, 2, ev.supersede, { limit: 3 })).toBe('written');
    expect(await step(s.store, ROLLOUT, 2, ev.admit, { limit: 3 })).toBe('written');
    await expectConsistent(s, [OLDER, ROLLOUT, OTHER]);
  });
});

describe('CollectorStore: indexes and candidates', () => {
  it('queued, retries and reconciling hold exactly the Collectors in those states, with their scores', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [1, 2, 3, 4, 5, 6].map(collector));
    await step(s.store, ROLLOUT, 1, ev.admit, { now: T0 + 100 });
    await step(s.store, ROLLOUT, 1, ev.withdraw, { now: T0 + 100 });
    for (const e of [ev.admit, ev.send, ev.notAlive]) await step(s.store, ROLLOUT, 2, e, { now: T0 + 200 });
    for (const e of [ev.admit, ev.send, ev.unknown]) await step(s.store, ROLLOUT, 3, e, { now: T0 + 300 });
    for (const e of [ev.admit, ev.send, ev.unknown]) await step(s.store, ROLLOUT, 5, e, { now: T0 + 400 });
    await step(s.store, ROLLOUT, 5, ev.timedOut, { now: T0 + 450 });
    await step(s.store, ROLLOUT, 5, ev.retry, { now: T0 + 500 });
    for (const e of [ev.admit, ev.withdraw, ev.admit]) await step(s.store, ROLLOUT, 6, e, { now: T0 + 600 });
    expect(await s.store.counts(ROLLOUT)).toEqual({
      waiting_retry: 3,
      reconciling: 1,
      queued: 1,
      admitted: 1,
    });
    expect(await s.store.indexed(ROLLOUT, 'queued')).toEqual([4]);
    expect(await zset(s.keys.retries(ROLLOUT))).toEqual([
      [1, T0 + 100],
      [5, T0 + 500],
      [2, T0 + 200 + LIFE.notAliveBackoffMs],
    ]);
    expect(await zset(s.keys.reconciling(ROLLOUT))).toEqual([[3, T0 + 300]]);
    expect(await s.store.indexed(ROLLOUT, 'retries')).toEqual([1, 5, 2]);
    expect(await s.store.indexed(ROLLOUT, 'reconciling')).toEqual([3]);
    await expectConsistent(s, [ROLLOUT]);
  });

  it('candidates are the due retries first, oldest due first, then queued ones in order; at most n of each', async () => {
    const s = open();
    await s.store.discover(ROLLOUT, [10, 11, 12].map(collector));
    await s.store.discover(ROLLOUT, [1, 2, 3].map(collector));
    // Retries due at T0+100 (1), T0+50 (2), T0+5000 (3).
    for (const [id, at] of [
      [1, T0 + 100],
      [2, T0 + 50],
      [3, T0 + 5_000],
    ] as const) {
      await step(s.store, ROLLOUT, id, ev.admit, { now: at });
      await step(s.store, ROLLOUT, id, ev.withdraw, { now: at });
    }
    const ids = async (now: number, n: number) =>
      (await s.store.candidates(ROLLOUT, now, n)).map((r) => r.id);
    expect(await ids(T0 + 1_000, 2)).toEqual([2, 1, 10, 11]);
    expect(await ids(T0 + 1_000, 10)).toEqual([2, 1, 10, 11, 12]);
    expect(await ids(T0 + 10_000, 10)).toEqual([2, 1, 3, 10, 11, 12]);
    expect(await ids(T0 + 10_000, 1)).toEqual([2, 10]);
    expect(await ids(T0, 10)).toEqual([10, 11, 12]);
    const [first] = await s.store.candidates(ROLLOUT, T0 + 1_000, 1);
    expect(first).toEqual(await s.store.get(ROLLOUT, 2));
    expect(await s.store.candidates('nobody@1.0-1', T0, 10)).toEqual([]);
  });
});

describe('CollectorStore: counters, durations and the slot-freed channel', () => {
  it('adds counters to the rollout even when its moves are stale, refused or absent', async () => {
    const s = open();
    await s.rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 10,
      settings: SETTINGS,
      now: T0,
    });
    await put(s.store, ROLLOUT, 1, 'pending');
    const late = await moveOf(s.store, ROLLOUT, 1, ev.status(1));
    expect(await step(s.store, ROLLOUT, 1, ev.succeeded, { counters: { statusReads: 1 } })).toBe('written');
    expect(await s.store.apply(ROLLOUT, [late], { counters: { statusReads: 2, createRequests: 1 } })).toEqual(
      ['stale'],
    );
    const refused: Move = {
      from: 'queued',
      event: 'succeeded',
      next: { ...collector(9), state: 'succeeded' },
    };
    expect(await s.store.apply(ROLLOUT, [refused], { counters: { createRequests: 4 } })).toEqual(['refused']);
    expect(await s.store.apply(ROLLOUT, [], { counters: { statusReads: 5, createRequests: 0 } })).toEqual([]);
    expect(await s.rollouts.get(ROLLOUT)).toMatchObject({ statusReads: 8, createRequests: 5 });
    expect(await s.store.get(ROLLOUT, 9)).toBeUndefined();
  });

  it('records a duration only when a move is written; newest first, at most 500, whole ms', async () => {
    const s = open();
    await put(s.store, ROLLOUT, 1, 'pending');
    const late = await moveOf(s.store, ROLLOUT, 1, ev.status(1));
    expect(await step(s.store, ROLLOUT, 1, ev.status(6), { durationMs: 1_234.4 })).toBe('written');
    expect(await s.store.apply(ROLLOUT, [late], { durationMs: 9_999 })).toEqual(['stale']);
    expect(await s.rollouts.durations(ROLLOUT)).toEqual([1_234]);
    for (let i = 1; i <= 510; i++) {
      expect(await step(s.store, ROLLOUT, 1, ev.status(6), { durationMs: i * 1_000 + 0.6 })).toBe('written');
    }
    const d = await s.rollouts.durations(ROLLOUT);
    expect(d).toHaveLength(500);
    expect(d[0]).toBe(510_001);
    expect(d.at(-1)).toBe(11_001);
    expect(await s.rollouts.durations(OLDER)).toEqual([]);
  });

  it('publishes the rollout id on the slot-freed channel when a write frees a slot, and only then', async () => {
    const s = open();
    const subscriber = connect();
    const messages: [string, string][] = [];
    subscriber.on('message', (channel: string, message: string) => messages.push([channel, message]));
    await subscriber.subscribe(s.keys.slotFreedChannel);
    await s.store.discover(ROLLOUT, [1, 2, 3].map(collector));
    await s.store.discover(OTHER, [1].map(collector));
    for (const id of [1, 2, 3]) await step(s.store, ROLLOUT, id, ev.admit);
    for (const e of [ev.send, ev.created(), ev.status(6)]) await step(s.store, ROLLOUT, 1, e);
    const late = await moveOf(s.store, ROLLOUT, 2, ev.withdraw);
    await step(s.store, ROLLOUT, 2, ev.send);
    expect(await s.store.apply(ROLLOUT, [late])).toEqual(['stale']);
    await step(s.store, OTHER, 1, ev.supersede);
    // The first message must be the one freeing write: nothing above freed a slot.
    const frees = await Promise.all([
      moveOf(s.store, ROLLOUT, 1, ev.succeeded),
      moveOf(s.store, ROLLOUT, 3, ev.supersede),
    ]);
    expect(await s.store.apply(ROLLOUT, frees)).toEqual(['written', 'written']);
    await ctx.redis.publish(s.keys.slotFreedChannel, 'marker');
    await until(() => messages.length >= 2);
    expect(messages).toEqual([
      [s.keys.slotFreedChannel, ROLLOUT],
      [s.keys.slotFreedChannel, 'marker'],
    ]);
  });
});

describe('CollectorStore: all() and loadStep', () => {
  it('iterates every record once, across many HSCAN batches (2,500 records)', async () => {
    const s = open();
    const n = 2_500;
    const ids = Array.from({ length: n }, (_, i) => i + 1);
    expect(await s.store.discover(ROLLOUT, ids.map(collector))).toHaveLength(n);
    const admits = await Promise.all(ids.slice(0, 1_000).map((id) => moveOf(s.store, ROLLOUT, id, ev.admit)));
    expect(new Set(await s.store.apply(ROLLOUT, admits, { limit: 1_000 }))).toEqual(new Set(['written']));
    const skips = await Promise.all(ids.slice(2_000).map((id) => moveOf(s.store, ROLLOUT, id, ev.supersede)));
    expect(new Set(await s.store.apply(ROLLOUT, skips))).toEqual(new Set(['written']));
    const scans = vi.spyOn(s.redis, 'hscan');
    const seen: number[] = [];
    for await (const r of s.store.all(ROLLOUT)) seen.push(r.id);
    expect(scans.mock.calls.length).toBeGreaterThan(1);
    scans.mockRestore();
    expect(seen).toHaveLength(n);
    expect(new Set(seen)).toEqual(new Set(ids));
    expect(await s.store.counts(ROLLOUT)).toEqual({ queued: 1_000, admitted: 1_000, skipped: 500 });
    expect(await s.store.counts(ROLLOUT)).toEqual(await recount(s.store, ROLLOUT));
  });

  it('all() yields nothing for an unknown rollout', async () => {
    expect(await records(open().store, 'nobody@1.0-1')).toEqual([]);
  });

  it('the rollout store’s loadStep returns the record and the rollout’s fields in one round trip', async () => {
    const s = open();
    await s.rollouts.start({
      policy: 'linux-fleet',
      target: 'latest',
      build: '19.470-4',
      maxInFlight: 12,
      settings: SETTINGS,
      now: T0,
    });
    const { rollout } = (await s.rollouts.readMany([ROLLOUT]))[0] ?? {};
    if (rollout) await s.rollouts.write(rollout, { patch: { firstPollMs: Math.round(45_000.4) } }, T0);
    const record = await put(s.store, ROLLOUT, 7, 'pending');
    const pipeline = vi.spyOn(s.redis, 'pipeline');
    const direct = ['hget', 'hmget', 'hgetall'].map((m) => vi.spyOn(s.redis, m as 'hget'));
    const view = await s.rollouts.loadStep(ROLLOUT, 7);
    expect(pipeline).toHaveBeenCalledTimes(1);
    for (const spy of direct) expect(spy).not.toHaveBeenCalled();
    vi.restoreAllMocks();
    expect(view.record).toEqual(record);
    expect(view.rollout).toMatchObject({
      id: ROLLOUT,
      phase: 'running',
      build: '19.470-4',
      maxInFlight: 12,
      settings: SETTINGS,
      firstPollMs: 45_000,
    });
    await s.rollouts.move({ id: ROLLOUT, phase: 'running' }, 'halt', T0 + 1, 'gate');
    const halted = (await s.rollouts.loadStep(ROLLOUT, 7)).rollout;
    expect(halted).toEqual({ ...view.rollout, phase: 'halted' });
    expect(await s.rollouts.loadStep(ROLLOUT, 8)).toEqual({ record: undefined, rollout: halted });
    // Records written before the rollout (or of a rollout that is gone) come without one.
    await s.store.discover(OTHER, [collector(1)]);
    expect(await s.rollouts.loadStep(OTHER, 1)).toEqual({ record: collector(1), rollout: undefined });
  });
});
