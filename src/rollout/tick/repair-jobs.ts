/**
 * The safety net under the job contract: every Collector that a job drives (collector-state.ts
 * `needsJob`: admitted, creating, pending, progressing) has a live job, whatever a crash did
 * between an admission and its enqueue, or to a job that failed unexpectedly. It reads only the
 * policies' slot holders (at most maxInFlight each), never the whole rollout.
 */
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import { ensureJobs, jobFor, type UpgradeJobData, type UpgradeQueue } from '../../queue/upgrade-job.js';
import { type CollectorKey, type CollectorStore, collectorKey, needsJob } from '../collector/index.js';

export async function repairJobs(
  deps: { store: CollectorStore; queue: UpgradeQueue; redis: Redis; logger: Logger },
  policies: Iterable<string>,
): Promise<number> {
  const { store } = deps;
  let repaired = 0;
  for (const policy of policies) {
    const byRollout = new Map<string, CollectorKey[]>();
    for (const h of await store.slotHolders(policy))
      byRollout.set(h.rolloutId, [...(byRollout.get(h.rolloutId) ?? []), h.key]);
    for (const [rolloutId, keys] of byRollout) {
      const records = await store.getMany(rolloutId, keys);
      const jobs: UpgradeJobData[] = [...records.values()]
        .filter((r) => needsJob(r.state))
        .map((r) => jobFor(rolloutId, r));
      const stillNeeded = async (job: UpgradeJobData) => {
        const r = await store.get(job.rolloutId, collectorKey(job.org, job.collectorId));
        return r !== undefined && needsJob(r.state) && r.admissions === job.admission;
      };
      const n = await ensureJobs(deps.queue, deps.redis, jobs, stillNeeded);
      if (n > 0) deps.logger.warn({ rollout: rolloutId, repaired: n }, 'jobs re-enqueued');
      repaired += n;
    }
  }
  return repaired;
}
