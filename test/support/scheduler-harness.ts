/**
 * The scheduler under test with a real Redis and a real BullMQ queue, and the service's listing
 * stubbed: what a scan sees is the test's to say (`fleet`), the clock is manual. Every write goes
 * through the real store. `useSchedulerHarness()` registers the hooks that close the queues.
 */

import { afterEach, expect } from 'vitest';
import type { BuildTarget, Collector } from '../../src/api/index.js';
import { createManualClock } from '../../src/lib/clock.js';
import { closeRedis, createRedis, type Redis } from '../../src/lib/redis/create-redis.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { Policy, type PolicyInput } from '../../src/policy/schema.js';
import { createUpgradeQueue, type UpgradeQueue } from '../../src/queue/upgrade-job.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  type CollectorState,
  CollectorStore,
  newRecord,
  SLOT_STATES,
  transition,
} from '../../src/rollout/collector/index.js';
import { createKeys } from '../../src/rollout/index.js';
import { EventLog, RolloutStore } from '../../src/rollout/life/index.js';
import type { ControlDeps } from '../../src/rollout/operator/index.js';
import { type OrgApi, Scheduler, settingsOf } from '../../src/rollout/tick/index.js';
import { captureLogger } from './capture-logger.js';
import { useTestRedis } from './redis.js';
import { seedCollector } from './seed-collector.js';

export const OLD = '19.450-12';
export const BUILD = '19.470-4';
export const NEWER = '19.480-1';
export const MINUTE = 60_000;

/** A Collector as the listing shows it. */
export function collector(id: number, patch: Partial<Collector> = {}): Collector {
  return {
    id,
    name: `c-${id}`,
    hostName: `web-${id}`,
    timeZone: 'Etc/UTC',
    collectorType: 'Installable',
    collectorVersion: OLD,
    osName: 'Linux',
    osArch: 'amd64',
    osVersion: '6.8',
    ephemeral: false,
    alive: true,
    lastSeenAlive: 0,
    sourceSyncMode: 'UI',
    links: [],
    ...patch,
  } as Collector;
}

export type SchedulerHarness = Awaited<ReturnType<ReturnType<typeof useSchedulerHarness>>>;

/** Registers the test's Redis and cleanup; returns `setup(policy)` for each test. */
export function useSchedulerHarness() {
  const ctx = useTestRedis();
  const open: { queue?: UpgradeQueue; connection?: Redis }[] = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.queue?.close();
      if (o.connection) await closeRedis(o.connection);
    }
  });
  return async function setup(
    policyInput: Partial<PolicyInput> = {},
    /** `orgs`: the deployment drives these organizations; each lists the Collectors `orgOf` gives it. */
    options: { orgs?: readonly string[] } = {},
  ) {
    const keys = createKeys(ctx.prefix);
    const connection = createRedis(ctx.url, { name: 'scheduler-test-bull', forBullmq: true });
    const queue = createUpgradeQueue(connection, keys.bullPrefix);
    open.push({ queue, connection });
    const log = captureLogger('debug');
    // The daemon's metrics of outcomes: the tally the store keeps in Redis as it writes (the one
    // writer), exported as the leading `run` exports it.
    const metrics = createMetrics();
    const store = new CollectorStore(ctx.redis, keys, log.logger);
    metrics.exportOutcomes(() => store.outcomeTallies());
    const rollouts = new RolloutStore(ctx.redis, keys);
    const events = new EventLog(ctx.redis, keys);
    const clock = createManualClock(Date.UTC(2025, 0, 6, 9, 0, 0));
    const targets: BuildTarget[] = [
      { version: OLD, latest: false },
      { version: BUILD, latest: true },
    ];
    /** What the listing offers for a build: the test's Collectors not on that build. */
    const fleet = new Map<number, Collector>();
    /** With `orgs`: the organization of each Collector of `fleet` (ids are unique across them here). */
    const orgOf = new Map<number, string>();
    const listings: string[] = [];
    const stubApi = (org?: string): OrgApi => ({
      listTargets: async () => targets,
      async *collectorPages(params): AsyncGenerator<Collector[]> {
        listings.push(params?.toVersion ?? '');
        const all = [...fleet.values()].filter(
          (c) => c.collectorVersion !== params?.toVersion && (org === undefined || orgOf.get(c.id) === org),
        );
        const size = params?.limit ?? 1000;
        for (let i = 0; i * size < all.length; i++) {
          await s.beforePage?.(i, params?.toVersion ?? '', org);
          yield all.slice(i * size, (i + 1) * size);
        }
      },
    });
    const orgApis = options.orgs?.map((org) => ({ org, client: stubApi(org) }));
    const scheduler = new Scheduler({
      ...(orgApis
        ? {
            apis: {
              names: orgApis.map((o) => o.org),
              get: (org: string) => {
                const found = orgApis.find((o) => o.org === org);
                if (!found) throw new Error(`no organization ${org}`);
                return found;
              },
            },
          }
        : { api: stubApi() }),
      redis: ctx.redis,
      keys,
      store,
      rollouts,
      queue,
      clock,
      logger: log.logger,
      scanIntervalMs: 5 * MINUTE,
    });
    let policy = Policy.parse({ name: 'linux-fleet', ...policyInput });
    const control: ControlDeps & { events: typeof events } = { rollouts, store, events, clock, keys };
    const s = {
      /** Called before the listing yields page `index` (0-based) of `toVersion` (of `org`, with `orgs`). */
      beforePage: undefined as
        | ((index: number, toVersion: string, org?: string) => Promise<void>)
        | undefined,
      redis: ctx.redis,
      keys,
      queue,
      store,
      rollouts,
      events,
      control,
      scheduler,
      clock,
      fleet,
      orgOf,
      listings,
      targets,
      log,
      metrics,
      get policy() {
        return policy;
      },
      set policy(p: Policy) {
        policy = p;
      },
      async tick(policies: Policy[] = [policy]) {
        await scheduler.tick(policies);
      },
      async rolloutId() {
        const id = await rollouts.currentOf(policy.name);
        if (!id) throw new Error('no current rollout');
        return id;
      },
      async rollout() {
        const r = await rollouts.get(await s.rolloutId());
        if (!r) throw new Error('no rollout');
        return r;
      },
      async record(id: number, rolloutId?: string): Promise<CollectorRecord> {
        const r = await store.get(rolloutId ?? (await s.rolloutId()), id);
        if (!r) throw new Error(`no record of ${id}`);
        return r;
      },
      async counts(rolloutId?: string) {
        return store.counts(rolloutId ?? (await s.rolloutId()));
      },
      /** The policy's slots, as `<collector>` of the current rollout. */
      async slots(rolloutId?: string) {
        const id = rolloutId ?? (await s.rolloutId());
        return (await store.slotHolders(policy.name))
          .filter((h) => h.rolloutId === id)
          .map((h) => h.collectorId)
          .sort((a, b) => a - b);
      },
      /** Moves a Collector of the current rollout by `events`, through the real store. */
      async drive(id: number, events: CollectorEvent[]) {
        const rolloutId = await s.rolloutId();
        let r = await s.record(id);
        for (const event of events) {
          const t = transition(r, event, { now: clock.now(), settings: settingsOf(policy) });
          if (!t.ok) throw new Error(t.reason);
          expect(await store.apply(rolloutId, [t.move], { limit: 1_000_000 })).toEqual(['written']);
          r = t.move.next;
        }
        return r;
      },
      /** The Collector's task ran and ended (from admitted): `succeeded` or another outcome. */
      async finish(id: number, outcome: 'succeeded' | 'failed' | 'timed_out' = 'succeeded') {
        const end: CollectorEvent =
          outcome === 'succeeded' ? { type: 'succeeded' } : { type: outcome, message: `test ${outcome}` };
        return s.drive(id, [
          { type: 'send' },
          { type: 'created', taskId: `t${id}`, requestTime: clock.now(), createdBy: 'test' },
          end,
        ]);
      },
      /** Seeds a record of the current rollout in `state` (the first tick must have started it). */
      async seed(id: number, state: CollectorState, taskId?: string) {
        const rolloutId = await s.rolloutId();
        return seedCollector(
          { store, rolloutId, settings: settingsOf(policy), now: clock.now() },
          newRecord(collector(id), BUILD, clock.now()),
          state,
          taskId,
        );
      },
      /** The types of the rollout's recorded events, oldest first. */
      async eventTypes(rolloutId?: string) {
        return (await events.history(rolloutId ?? (await s.rolloutId()))).map((e) => e.type);
      },
    };
    return s;
  };
}

/** Slot holders equal the records in slot states, for every rollout of the policy. */
export async function expectSlotsTrue(s: SchedulerHarness, rolloutId: string) {
  const inSlotStates: number[] = [];
  for await (const r of s.store.all(rolloutId)) if (SLOT_STATES.includes(r.state)) inSlotStates.push(r.id);
  expect(await s.slots(rolloutId)).toEqual(inSlotStates.sort((a, b) => a - b));
}
