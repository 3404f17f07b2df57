/**
 * Puts a Collector's record into a state for a test the way the product does: discovered, then
 * moved through the events of the state machine (src/rollout/collector/collector-state.ts) by the real
 * store, so that the counts, the slot set and the indexes are what they would be. The path of
 * events is the shortest one that reaches the state.
 */
import { expect } from 'vitest';
import type { CollectorStore } from '../../src/rollout/collector/index.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  type CollectorState,
  keyOf,
  type LifeSettings,
  newRecord,
  transition,
} from '../../src/rollout/collector/index.js';

const PENDING: CollectorEvent[] = [
  { type: 'admit' },
  { type: 'send' },
  { type: 'created', taskId: '424242', requestTime: 0, createdBy: 'test' },
];

/** The events that lead from `queued` to each state. */
export function pathTo(state: CollectorState, taskId = '424242', now = 0): CollectorEvent[] {
  const pending: CollectorEvent[] = PENDING.map((e) =>
    e.type === 'created' ? { ...e, taskId, requestTime: now } : e,
  );
  switch (state) {
    case 'queued':
      return [];
    case 'admitted':
      return [{ type: 'admit' }];
    case 'creating':
      return [{ type: 'admit' }, { type: 'send' }];
    case 'pending':
      return pending;
    case 'progressing':
      return [...pending, { type: 'status', status: 6 }];
    case 'reconciling':
      return [{ type: 'admit' }, { type: 'send' }, { type: 'task_unknown', proven: true, message: 'seeded' }];
    case 'waiting_retry':
      return [
        { type: 'admit' },
        { type: 'send' },
        { type: 'create_error', transient: true, message: 'seeded' },
      ];
    case 'not_alive':
      return [{ type: 'admit' }, { type: 'send' }, { type: 'not_alive', message: 'seeded' }];
    case 'succeeded':
      return [...pending, { type: 'succeeded', status: 2 }];
    case 'failed':
      return [...pending, { type: 'failed', message: 'seeded', status: 3 }];
    case 'timed_out':
      return [...pending, { type: 'timed_out', message: 'seeded' }];
    case 'rejected':
      return [{ type: 'admit' }, { type: 'send' }, { type: 'rejected', message: 'seeded' }];
    case 'error':
      return [
        { type: 'admit' },
        { type: 'send' },
        { type: 'create_error', transient: false, message: 'seeded' },
      ];
    case 'verifying':
      return [...pending, { type: 'verify', status: 2, dueAt: now }];
    case 'unhealthy':
      return [
        ...pending,
        { type: 'verify', status: 2, dueAt: now },
        { type: 'unhealthy', message: 'seeded' },
      ];
    case 'manual':
      return [
        ...pending,
        { type: 'manual', message: 'seeded', failureClass: 'upgrades_disabled', status: 3 },
      ];
    case 'unknown':
      return [
        { type: 'admit' },
        { type: 'send' },
        { type: 'task_unknown', proven: false, message: 'seeded' },
        { type: 'outcome_unknown', message: 'seeded' },
      ];
    case 'quarantined':
      return [{ type: 'quarantine', message: 'seeded' }];
    case 'skipped':
      return [{ type: 'supersede', message: 'seeded' }];
    case 'aborted':
      return [{ type: 'abort', message: 'seeded' }];
  }
}

export interface SeedOptions {
  store: CollectorStore;
  rolloutId: string;
  settings: LifeSettings;
  now: number;
  /** The in-flight limit for the admit move. */
  limit?: number;
}

/**
 * Writes `base` (a queued record) and moves it to `state`; `reach` settings make not_alive and
 * error final at once, other states are reached with the rollout's `settings`.
 */
export async function seedCollector(
  options: SeedOptions,
  base: CollectorRecord,
  state: CollectorState,
  taskId?: string,
): Promise<CollectorRecord> {
  const { store, rolloutId, now } = options;
  expect(await store.discover(rolloutId, [base])).toEqual([keyOf(base)]);
  let record = base;
  const reach: LifeSettings = {
    ...options.settings,
    ...(state === 'not_alive' ? { notAliveAttempts: 1 } : { notAliveAttempts: 1_000 }),
    ...(state === 'error' ? { errorAttempts: 1 } : { errorAttempts: 1_000 }),
    transientAttempts: 1_000,
  };
  for (const event of pathTo(state, taskId, now)) {
    const t = transition(record, event, { now, settings: reach, random: () => 0.5 });
    if (!t.ok) throw new Error(t.reason);
    const [outcome] = await store.apply(rolloutId, [t.move], { limit: options.limit ?? 1_000 });
    expect(outcome, `seeding ${base.id} into ${state}: ${event.type}`).toBe('written');
    record = t.move.next;
  }
  return record;
}

export { newRecord };
