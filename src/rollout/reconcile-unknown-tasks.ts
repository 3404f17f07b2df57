/**
 * Resolution of Collectors in `reconciling`: the service holds (or held) a task for them whose id
 * we lost, so only the listings tell what became of it. Run after a scan of the rollout's build:
 * - offered for the build again → no task is running and the build was not reached: `queued`;
 * - on the build (seen through another build's listing) → `succeeded`;
 * - neither → still upgrading, until the local deadline passes → `timed_out`.
 * A resolved Collector gives its in-flight slot back.
 */
import type { Redis } from 'ioredis';
import type { BuildTarget, CollectorUpgradeClient } from '../api/index.js';
import type { Logger } from '../lib/logger.js';
import type { Policy } from '../policy/schema.js';
import type { InflightSlots } from './inflight-slots.js';
import type { Keys } from './keys.js';
import type { CollectorResult, ResultStore } from './result-store.js';
import type { RolloutRecord } from './rollout-store.js';
import { observeVersions } from './scan-upgradable.js';

export interface ReconcileDeps {
  api: Pick<CollectorUpgradeClient, 'collectorPages'>;
  redis: Redis;
  keys: Keys;
  results: ResultStore;
  slots: InflightSlots;
  logger: Logger;
  onFinal?(rolloutId: string, record: CollectorResult): void;
}

/**
 * Resolves the rollout's `reconciling` Collectors from `listed` (the ones the scan of the
 * rollout's build offered) and, for the others, from the listing of another of `targets`.
 */
export async function reconcileUnknownTasks(
  deps: ReconcileDeps,
  rollout: RolloutRecord,
  policy: Policy,
  listed: Set<number>,
  targets: readonly BuildTarget[],
  now: number,
): Promise<void> {
  const { results, slots, redis, keys } = deps;
  const open: CollectorResult[] = [];
  for await (const r of results.all(rollout.id)) if (r.state === 'reconciling') open.push(r);
  const unresolved = new Set(open.filter((r) => !listed.has(r.id)).map((r) => r.id));
  const other = targets.find((t) => t.version !== rollout.build)?.version;
  const versions =
    other && unresolved.size
      ? await observeVersions(deps.api, other, unresolved, policy.pageSize)
      : new Map();
  for (const r of open) {
    let next: CollectorResult | undefined;
    if (listed.has(r.id)) {
      next = {
        ...r,
        state: 'queued',
        message: 'an earlier task of unknown id ended without reaching the build',
      };
    } else if (versions.get(r.id) === rollout.build) {
      next = { ...r, state: 'succeeded', message: '', finishedAt: now };
    } else if (now - (r.reconcilingSince ?? now) > rollout.settings.taskTimeoutMs) {
      next = {
        ...r,
        state: 'timed_out',
        message: 'the task of unknown id did not end in time',
        finishedAt: now,
      };
    }
    if (!next || !(await results.put(rollout.id, next, 'reconciling'))) continue;
    await slots.release(rollout.id, r.id);
    if (next.state === 'queued') await redis.zadd(keys.waiting(rollout.id), 'NX', -now, String(r.id));
    else deps.onFinal?.(rollout.id, next);
    deps.logger.info({ rollout: rollout.id, collector: r.id, state: next.state }, 'reconciled');
  }
}
