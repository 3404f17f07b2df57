/**
 * Pages through the service's upgradable Collectors for a build and keeps those a policy selects
 * and would move (planMove: downgrades only when allowed). New ones are recorded as `queued` and
 * put in the admission order; ones already known are left alone (a failed Collector is listed
 * again, but gets no second task in the same rollout).
 */

import type { Redis } from 'ioredis';
import type { Collector, CollectorUpgradeClient } from '../api/index.js';
import { planMove } from '../policy/plan-move.js';
import type { Policy } from '../policy/schema.js';
import { compileSelection } from '../policy/select-collectors.js';
import type { Keys } from './keys.js';
import type { CollectorResult, ResultStore } from './result-store.js';

export interface ScanResult {
  /** Selected Collectors the listing offered (no unfinished task, not on the build). */
  listed: Set<number>;
  /** Of those, the ones seen for the first time. */
  added: number[];
}

export function newRecord(c: Collector, to: string, now: number): CollectorResult {
  return {
    id: c.id,
    name: c.name,
    hostName: c.hostName ?? '',
    timeZone: c.timeZone,
    from: c.collectorVersion,
    to,
    state: 'queued',
    attempts: 0,
    statusReads: 0,
    discoveredAt: now,
  };
}

export async function scanUpgradable(
  deps: {
    api: Pick<CollectorUpgradeClient, 'collectorPages'>;
    results: ResultStore;
    redis: Redis;
    keys: Keys;
  },
  rolloutId: string,
  policy: Policy,
  build: string,
  now: number,
  /** Policies that come first: a Collector they select is theirs, not this policy's. */
  earlier: readonly Policy[] = [],
): Promise<ScanResult> {
  const own = compileSelection(policy);
  const taken = earlier.map((p) => compileSelection(p));
  const matches = (c: Collector) => own(c) && !taken.some((t) => t(c));
  const listed = new Set<number>();
  const added: number[] = [];
  let order = await deps.redis.zcard(deps.keys.waiting(rolloutId));
  for await (const page of deps.api.collectorPages({ toVersion: build, limit: policy.pageSize })) {
    const fresh: CollectorResult[] = [];
    for (const c of page) {
      if (c.collectorType !== 'Installable' || !matches(c)) continue;
      if (planMove(policy, c.collectorVersion, build).kind === 'skip') continue;
      listed.add(c.id);
      fresh.push(newRecord(c, build, now));
    }
    const ids = await deps.results.addNew(rolloutId, fresh);
    if (ids.length > 0) {
      // Discovery order is the admission order; scores grow across scans.
      const args: (string | number)[] = [];
      for (const id of ids) args.push(order++, String(id));
      await deps.redis.zadd(deps.keys.waiting(rolloutId), 'NX', ...args);
      added.push(...ids);
    }
  }
  return { listed, added };
}

/**
 * Current builds of Collectors without an unfinished task, read from the listing for another
 * build (a Collector on build B is offered for any other build). Used to learn whether a
 * Collector whose task id we lost reached the rollout's build.
 */
export async function observeVersions(
  api: Pick<CollectorUpgradeClient, 'collectorPages'>,
  otherBuild: string,
  wanted: ReadonlySet<number>,
  pageSize: number,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for await (const page of api.collectorPages({ toVersion: otherBuild, limit: pageSize })) {
    for (const c of page) if (wanted.has(c.id)) out.set(c.id, c.collectorVersion);
    if (out.size === wanted.size) break;
  }
  return out;
}
