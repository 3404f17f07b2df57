/**
 * Compliance over time: a bounded series of each organization's compliance, one sample per
 * bucket of `bucketMs` (clock time), kept in Redis next to its inventory, a HASH per
 * organization (`<keys.inventory(org)>:history`, the same hash tag: cluster-safe) whose fields
 * are the buckets' start (clock ms) and whose values are the sample as JSON: each policy's build
 * it was judged against and its counts.
 *   - Written by the inventory's leader at every round (start-inventory.ts), from the judgement
 *     it just made. HSETNX: the first sample of a bucket stays, so that two daemons (a leader
 *     taking over mid-bucket) or two rounds in one bucket never double a point.
 *   - Capped by count and by age: when a bucket is new, the samples beyond `maxSamples` (the
 *     oldest first) and those older than `maxAgeMs` are deleted. A few hundred kilobytes at most
 *     whatever the fleet's size (the default: 5-min buckets, 7 days, 2,016 samples).
 *   - Read by `GET /fleet/history` (the console's chart) as one series per organization × policy.
 * A field that does not parse reads as absent: the series is the daemon's own, not an input.
 */
import type { Redis } from 'ioredis';
import { z } from 'zod';
import type { Keys } from '../rollout/index.js';
import type { ComplianceSeries } from './compliance-series.js';
import type { InventoryCompliance } from './inventory-store.js';

/** Default clock ms of a bucket: one sample every 5 minutes. */
export const DEFAULT_HISTORY_BUCKET_MS = 5 * 60_000;
/** Default age of the oldest sample kept (clock ms): 7 days. */
export const DEFAULT_HISTORY_MAX_AGE_MS = 7 * 24 * 3_600_000;
/** Default number of samples kept per organization: 7 days of 5-minute buckets. */
export const DEFAULT_HISTORY_MAX_SAMPLES = 2_016;

export interface HistoryLimits {
  bucketMs: number;
  maxAgeMs: number;
  maxSamples: number;
}

export const DEFAULT_HISTORY_LIMITS: HistoryLimits = {
  bucketMs: DEFAULT_HISTORY_BUCKET_MS,
  maxAgeMs: DEFAULT_HISTORY_MAX_AGE_MS,
  maxSamples: DEFAULT_HISTORY_MAX_SAMPLES,
};

/** One policy's point in a sample: [compliant, selected, behind, unknown] and its target build. */
const PolicyPoint = z.object({
  target: z.string().nullable(),
  counts: z.tuple([z.number(), z.number(), z.number(), z.number()]),
});
const Sample = z.record(z.string(), PolicyPoint);
type Sample = z.infer<typeof Sample>;

export class ComplianceHistory {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Pick<Keys, 'inventory'>,
    readonly limits: HistoryLimits = DEFAULT_HISTORY_LIMITS,
  ) {}

  key(org: string): string {
    return `${this.keys.inventory(org)}:history`;
  }

  /** The bucket (its start, clock ms) that `at` falls in. */
  bucketOf(at: number): number {
    return Math.floor(at / this.limits.bucketMs) * this.limits.bucketMs;
  }

  /**
   * Records `compliance` as the sample of the bucket of `now`, unless that bucket has one.
   * Returns whether it wrote one.
   */
  async record(org: string, compliance: InventoryCompliance, now: number): Promise<boolean> {
    const sample: Sample = {};
    for (const [policy, p] of Object.entries(compliance.policies)) {
      const { compliant, selected, behind, unknown } = p.counts;
      sample[policy] = { target: p.target, counts: [compliant, selected, behind, unknown] };
    }
    const key = this.key(org);
    const added = await this.redis.hsetnx(key, String(this.bucketOf(now)), JSON.stringify(sample));
    if (added === 1) await this.trim(key, now);
    return added === 1;
  }

  /** Deletes the samples beyond the count (oldest first) and those older than the age. */
  private async trim(key: string, now: number): Promise<void> {
    const { maxSamples, maxAgeMs } = this.limits;
    const buckets = (await this.redis.hkeys(key)).map(Number).sort((a, b) => a - b);
    const oldestKept = now - maxAgeMs;
    const excess = Math.max(0, buckets.length - maxSamples);
    const gone = buckets.filter((b, i) => i < excess || b < oldestKept || !Number.isFinite(b));
    if (gone.length > 0) await this.redis.hdel(key, ...gone.map(String));
  }

  /** Each organization × policy's series, oldest point first; `since` (clock ms) drops older ones. */
  async read(orgs: readonly string[], since = 0): Promise<ComplianceSeries[]> {
    if (orgs.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const org of orgs) pipe.hgetall(this.key(org));
    const replies = (await pipe.exec()) ?? [];
    const out: ComplianceSeries[] = [];
    orgs.forEach((org, i) => {
      const [err, value] = replies[i] ?? [null, null];
      if (err) throw err;
      const byPolicy = new Map<string, ComplianceSeries>();
      const fields = Object.entries((value as Record<string, string> | null) ?? {})
        .map(([at, text]) => [Number(at), text] as const)
        .filter(([at]) => Number.isFinite(at) && at >= since)
        .sort((a, b) => a[0] - b[0]);
      for (const [at, text] of fields) {
        const sample = parseSample(text);
        if (!sample) continue;
        for (const [policy, p] of Object.entries(sample)) {
          const series = byPolicy.get(policy) ?? { org, policy, points: [] };
          byPolicy.set(policy, series);
          const [compliant, selected, behind, unknown] = p.counts;
          series.points.push({ at, target: p.target, compliant, selected, behind, unknown });
        }
      }
      out.push(...[...byPolicy.values()].sort((a, b) => a.policy.localeCompare(b.policy)));
    });
    return out;
  }
}

function parseSample(text: string): Sample | undefined {
  try {
    const parsed = Sample.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
