/**
 * The status snapshot of `status`, `/status` and the metrics, read from a real Redis: every
 * rollout newest first, with counts per state, in-flight slots, total and done.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { closeRedis, createRedis, type Redis } from '../../../src/lib/redis.js';
import { InflightSlots } from '../../../src/rollout/inflight-slots.js';
import { createKeys } from '../../../src/rollout/keys.js';
import { readFleetStatus } from '../../../src/rollout/read-fleet-status.js';
import { type CollectorState, ResultStore } from '../../../src/rollout/result-store.js';
import { type RolloutSettings, RolloutStore } from '../../../src/rollout/rollout-store.js';
import { createUpgradeQueue, enqueueUpgrades } from '../../../src/worker/upgrade-queue.js';
import { useTestRedis } from '../../support/redis.js';

const ctx = useTestRedis();
const connections: Redis[] = [];

afterEach(async () => {
  await Promise.all(connections.splice(0).map((c) => closeRedis(c)));
});

const SETTINGS: RolloutSettings = {
  pollInitialMs: 60_000,
  pollMaxMs: 300_000,
  pollJitter: 0.2,
  taskTimeoutMs: 2_100_000,
  notAliveAttempts: 5,
  notAliveBackoffMs: 600_000,
};

describe('readFleetStatus', () => {
  it('reads every rollout with its counts, in-flight, total and done', async () => {
    const keys = createKeys(ctx.prefix);
    const rollouts = new RolloutStore(ctx.redis, keys);
    const results = new ResultStore(ctx.redis, keys);
    const slots = new InflightSlots(ctx.redis, keys);
    await rollouts.ensure('a', 'latest', '19.450-12', 5, SETTINGS, 1000);
    await rollouts.ensure('b', '19.470-4', '19.470-4', 2, SETTINGS, 2000);
    const states: [number, CollectorState][] = [
      [1, 'succeeded'],
      [2, 'failed'],
      [3, 'pending'],
      [4, 'queued'],
      [5, 'not_alive'],
      [6, 'skipped'],
    ];
    for (const [id, state] of states) {
      await results.put('a@19.450-12', {
        id,
        name: `c${id}`,
        hostName: '',
        from: '19.400-5',
        to: '19.450-12',
        state,
        attempts: 0,
        statusReads: 0,
        discoveredAt: 0,
      });
    }
    await slots.acquire('a@19.450-12', [3], 5);

    const status = await readFleetStatus({ rollouts, results, slots });
    expect(status.rollouts.map((r) => r.id)).toEqual(['b@19.470-4', 'a@19.450-12']);
    expect(status.queue).toEqual({});
    const a = status.rollouts[1];
    expect(a).toMatchObject({
      policy: 'a',
      phase: 'running',
      maxInFlight: 5,
      inflight: 1,
      total: 6,
      done: 4,
      counts: { succeeded: 1, failed: 1, pending: 1, queued: 1, not_alive: 1, skipped: 1 },
    });
    expect(status.rollouts[0]).toMatchObject({ total: 0, done: 0, inflight: 0, counts: {} });
  });

  it('adds the upgrade queue’s job counts when given the queue', async () => {
    const keys = createKeys(ctx.prefix);
    const connection = createRedis(ctx.url, { name: 'status-test', forBullmq: true });
    connections.push(connection);
    const queue = createUpgradeQueue(connection, keys.bullPrefix);
    try {
      await enqueueUpgrades(queue, 'a@1', [1, 2, 3]);
      const status = await readFleetStatus({
        rollouts: new RolloutStore(ctx.redis, keys),
        results: new ResultStore(ctx.redis, keys),
        slots: new InflightSlots(ctx.redis, keys),
        queue,
      });
      expect(status.queue).toMatchObject({ waiting: 3, active: 0, delayed: 0, failed: 0 });
    } finally {
      await queue.close();
    }
  });
});
