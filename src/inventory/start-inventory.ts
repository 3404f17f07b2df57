/**
 * The daemon's inventory of the whole fleet, per organization, from start-up on and whether or
 * not any policy is enabled. Every `run` process runs this loop; only the holder of the
 * inventory's leader lock (a LeaderLock of its own key, as the scheduler's) acts, so passes are
 * never duplicated across processes. Each round (every `roundMs` real ms) the leader:
 *   - starts a pass of each organization that is due (run-inventory-pass.ts): its schedule in
 *     Redis says when (`intervalMs` after the last pass began; after a failure sooner, 1 min
 *     doubling up to the interval), or a policy that covers it is new or selects otherwise than
 *     when the last pass counted (then at most every MIN_GAP_MS); passes of different
 *     organizations run side by side, each in its own API budget;
 *   - judges each organization's compliance from its last pass (judge-compliance.ts) and writes
 *     it when it changed;
 *   - records that judgement as the sample of the current bucket of the compliance history
 *     (compliance-history.ts), once a bucket.
 * A leader that loses the lock aborts its passes; a pass aborted or failed leaves the last
 * complete one in place.
 *
 *   idle ──due──► passing (pages, paced) ──complete──► idle (pass written, next due)
 *                      └── failed ──► idle (schedule: failures, the error, due sooner) / aborted ──► idle
 */
import type { CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import type { Policy } from '../policy/schema.js';
import { policyOrgs } from '../policy/select/select-collectors.js';
import type { LeaderLock, RolloutRecord } from '../rollout/index.js';
import type { ComplianceHistory } from './compliance-history.js';
import type { InventorySchedule, InventoryStore, OrgInventory } from './inventory-store.js';
import { judgeCompliance, sameCompliance } from './judge-compliance.js';
import { runInventoryPass } from './run-inventory-pass.js';
import { selectionFingerprint } from './tally-inventory.js';

/** Default clock ms between two passes of an organization. */
export const DEFAULT_INVENTORY_INTERVAL_MS = 15 * 60_000;
/** Default clock ms between the requests of two pages of a pass (4 requests/s: 5 % of the budget). */
export const DEFAULT_INVENTORY_PAGE_EVERY_MS = 5_000;
/** The first retry of a failed pass (clock ms); it doubles up to the interval. */
export const FIRST_RETRY_MS = 60_000;
/** A changed policy makes a pass due, but no sooner than this after the last one began (clock ms). */
export const MIN_GAP_MS = 60_000;

export interface InventoryDeps {
  /** The organizations, each with its client. */
  orgs: readonly string[];
  client: (org: string) => Pick<CollectorUpgradeClient, 'inventoryPages'>;
  store: InventoryStore;
  /** Compliance over time (absent: no history kept). */
  history?: ComplianceHistory;
  /** Each policy's current rollout (RolloutStore's `currentIds` and `get`). */
  rollouts: {
    currentIds(): Promise<Map<string, string>>;
    get(id: string): Promise<RolloutRecord | undefined>;
  };
  policies: () => readonly Policy[];
  lock: LeaderLock;
  clock: Clock;
  logger: Logger;
  intervalMs: number;
  pageEveryMs: number;
  /** Real ms between two rounds. */
  roundMs: number;
}

export interface InventoryLoop {
  readonly isLeader: boolean;
  /** One round now (passes it starts run on); resolves when the round is done. */
  runOnce(): Promise<void>;
  /** Resolves when no pass runs (for tests and the demo). */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** When the organization's next pass is due (clock ms). */
export function nextPassAt(inventory: OrgInventory, policies: readonly Policy[], now: number): number {
  const { pass, schedule } = inventory;
  if (!pass || !schedule) return schedule?.nextAt ?? now;
  const changed = policies.some((p) => {
    const counted = pass.policies[p.name];
    // A policy the pass did not count is new since, if it covers the organization.
    return counted
      ? counted.selection !== selectionFingerprint(p)
      : policyOrgs(p, [inventory.org]).length > 0;
  });
  return changed ? Math.min(schedule.nextAt, pass.startedAt + MIN_GAP_MS) : schedule.nextAt;
}

export function startInventory(deps: InventoryDeps): InventoryLoop {
  const { lock, logger, store, clock } = deps;
  const running = new Map<string, Promise<void>>();
  let controller = new AbortController();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let wasLeader = false;

  async function pass(org: string, schedule: InventorySchedule | undefined): Promise<void> {
    const { signal } = controller;
    const log = logger.child({ org });
    const startedAt = clock.now();
    try {
      const result = await runInventoryPass({
        client: deps.client(org),
        clock,
        org,
        policies: deps.policies(),
        pageEveryMs: deps.pageEveryMs,
        signal,
      });
      if (signal.aborted || !lock.isLeader) return;
      await store.writePass(org, result, { nextAt: startedAt + deps.intervalMs, failures: 0 });
      log.info(
        {
          collectors: result.collectors,
          alive: result.alive,
          pages: result.pages,
          ms: result.at - startedAt,
        },
        'inventory pass done',
      );
    } catch (err) {
      if (signal.aborted) return;
      const failures = (schedule?.failures ?? 0) + 1;
      const retryMs = Math.min(deps.intervalMs, FIRST_RETRY_MS * 2 ** Math.min(failures - 1, 20));
      const message = (err as Error).message;
      log.warn({ err: message, failures, retryInMs: retryMs }, 'inventory pass failed');
      await store
        .writeSchedule(org, {
          nextAt: clock.now() + retryMs,
          failures,
          lastError: { at: clock.now(), message },
        })
        .catch(() => undefined);
    }
  }

  async function currentRollouts(): Promise<Map<string, RolloutRecord>> {
    const ids = await deps.rollouts.currentIds();
    const out = new Map<string, RolloutRecord>();
    await Promise.all(
      [...ids].map(async ([policy, id]) => {
        const record = await deps.rollouts.get(id);
        if (record) out.set(policy, record);
      }),
    );
    return out;
  }

  async function round(): Promise<void> {
    try {
      const leader = await lock.tryAcquire();
      if (leader !== wasLeader) logger.info({ leader }, leader ? 'inventory leads' : 'inventory follows');
      wasLeader = leader;
      if (!leader) {
        if (running.size > 0) {
          controller.abort(new Error('inventory leadership lost'));
          controller = new AbortController();
        }
        return;
      }
      const now = clock.now();
      const policies = deps.policies();
      const inventories = await store.read(deps.orgs);
      for (const inv of inventories) {
        if (running.has(inv.org) || stopped) continue;
        if (now < nextPassAt(inv, policies, now)) continue;
        const p = pass(inv.org, inv.schedule).finally(() => running.delete(inv.org));
        running.set(inv.org, p);
      }
      const current = await currentRollouts();
      for (const inv of inventories) {
        const judged = judgeCompliance({ inventory: inv, policies, current, now });
        if (!judged) continue;
        if (!sameCompliance(inv.compliance, judged)) await store.writeCompliance(inv.org, judged);
        await deps.history?.record(inv.org, judged, now);
      }
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'inventory round failed');
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      current = round().finally(schedule);
    }, deps.roundMs);
  }
  current = round().finally(schedule);

  return {
    get isLeader() {
      return lock.isLeader;
    },
    runOnce: async () => {
      await current;
      current = round();
      await current;
    },
    idle: async () => {
      while (running.size > 0) await Promise.allSettled([...running.values()]);
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      controller.abort(new Error('inventory stopping'));
      await current;
      await Promise.allSettled([...running.values()]);
      await lock.release().catch(() => undefined);
    },
  };
}
