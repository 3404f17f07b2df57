/**
 * The compliance history in Redis (src/inventory/compliance-history.ts): one sample per bucket
 * however many writers (two daemons, two rounds), capped by count and by age, read back as one
 * series per organization × policy, oldest first; a field that does not parse is skipped.
 */
import { describe, expect, it, onTestFinished } from 'vitest';
import { ComplianceHistory, type InventoryCompliance } from '../../../src/inventory/index.js';
import { createKeys } from '../../../src/rollout/index.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const MIN = 60_000;

function judged(compliant: number, selected = 10): InventoryCompliance {
  return {
    at: 0,
    passAt: 0,
    policies: {
      linux: {
        targetText: 'latest',
        target: '19.470-4',
        targetFrom: 'rollout',
        counts: { selected, compliant, behind: selected - compliant, unknown: 0 },
      },
    },
  };
}

describe('the compliance history', () => {
  it('keeps the first sample of a bucket, whoever writes it and however often', async () => {
    const keys = createKeys(ctx.prefix);
    const limits = { bucketMs: 5 * MIN, maxAgeMs: 60 * MIN, maxSamples: 100 };
    // Two daemons on one Redis, each with its own client.
    const a = new ComplianceHistory(ctx.redis, keys, limits);
    const other = ctx.redis.duplicate();
    onTestFinished(async () => {
      await other.quit();
    });
    const b = new ComplianceHistory(other, keys, limits);
    const t0 = 1_000 * MIN;
    const writes = await Promise.all([
      a.record('emea', judged(2), t0 + 1),
      b.record('emea', judged(3), t0 + 2),
      a.record('emea', judged(4), t0 + 4 * MIN),
    ]);
    expect(writes.filter(Boolean)).toHaveLength(1);
    expect(await b.record('emea', judged(5), t0 + 5 * MIN)).toBe(true);
    const [series, ...others] = await a.read(['emea', 'apac']);
    expect(others).toEqual([]);
    expect(series?.org).toBe('emea');
    expect(series?.policy).toBe('linux');
    expect(series?.points.map((p) => p.at)).toEqual([t0, t0 + 5 * MIN]);
    expect(series?.points[1]).toEqual({
      at: t0 + 5 * MIN,
      target: '19.470-4',
      compliant: 5,
      selected: 10,
      behind: 5,
      unknown: 0,
    });
  });

  it('drops the samples beyond the count and the age, and skips one that does not parse', async () => {
    const keys = createKeys(ctx.prefix);
    const history = new ComplianceHistory(ctx.redis, keys, {
      bucketMs: MIN,
      maxAgeMs: 30 * MIN,
      maxSamples: 5,
    });
    const t0 = 2_000 * MIN;
    for (let i = 0; i < 8; i++) await history.record('emea', judged(i), t0 + i * MIN);
    const kept = (await history.read(['emea']))[0]?.points ?? [];
    expect(kept.map((p) => p.compliant)).toEqual([3, 4, 5, 6, 7]);
    expect(await ctx.redis.hlen(history.key('emea'))).toBe(5);
    // An hour later: everything older than 30 minutes goes when the next bucket is written.
    await history.record('emea', judged(9), t0 + 67 * MIN);
    expect((await history.read(['emea']))[0]?.points.map((p) => p.compliant)).toEqual([9]);
    await ctx.redis.hset(history.key('emea'), String(t0 + 68 * MIN), '{"linux":{"counts":"many"}}');
    expect((await history.read(['emea']))[0]?.points).toHaveLength(1);
  });
});
