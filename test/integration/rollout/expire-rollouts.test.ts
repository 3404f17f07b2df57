/**
 * Retention (src/rollout/operator/expire-rollouts.ts) on a real Redis: finished rollouts are removed with
 * every key of theirs `retention` after they finished; running ones, recent ones and ones whose
 * Collectors still hold a slot are kept.
 */
import { describe, expect, it } from 'vitest';
import { createState } from '../../../src/cli/boot/create-state.js';
import { createManualClock } from '../../../src/lib/clock.js';
import type { RolloutSettings } from '../../../src/rollout/life/index.js';
import { expireRollouts } from '../../../src/rollout/operator/index.js';
import { captureLogger } from '../../support/capture-logger.js';
import { useTestRedis } from '../../support/redis.js';
import { TEST_SETTINGS } from '../../support/rollout-settings.js';
import { newRecord, seedCollector } from '../../support/seed-collector.js';

const ctx = useTestRedis();
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 5, 9, 0, 0);
const SETTINGS: RolloutSettings = { ...TEST_SETTINGS, pollJitter: 0, maxBackoffMs: 1_800_000 };

describe('expireRollouts', () => {
  it('removes finished rollouts older than the retention, and nothing else', async () => {
    const state = createState(ctx.redis, ctx.prefix);
    const clock = createManualClock(T0);
    const deps = { ...state, clock, logger: captureLogger('warn').logger };
    const start = async (policy: string, build: string, states: Parameters<typeof seedCollector>[2][]) => {
      const { rollout } = await state.rollouts.start({
        policy,
        target: 'latest',
        build,
        maxInFlight: 5,
        settings: SETTINGS,
        now: clock.now(),
      });
      for (const [i, s] of states.entries())
        await seedCollector(
          { store: state.store, rolloutId: rollout.id, settings: SETTINGS, now: clock.now() },
          newRecord({ id: i + 1, name: `c${i}`, collectorVersion: '19.400-5' }, build, clock.now()),
          s,
        );
      return rollout;
    };
    const old = await start('old', '19.470-4', ['succeeded', 'failed']);
    await state.rollouts.move(old, 'converge', clock.now());
    const busy = await start('busy', '19.470-4', ['pending']);
    await state.rollouts.move(busy, 'abort', clock.now(), 'test');
    const running = await start('running', '19.470-4', ['queued']);
    clock.advance(31 * DAY);
    const recent = await start('recent', '19.470-4', ['succeeded']);
    await state.rollouts.move(recent, 'converge', clock.now());

    const keysOf = async (id: string) => (await ctx.redis.keys(`${ctx.prefix}*${id}*`)).length;
    expect(await keysOf(old.id)).toBeGreaterThanOrEqual(3);
    const expired = await expireRollouts(deps, 30 * DAY, clock.now());
    expect(expired).toEqual([old.id]);
    expect(await keysOf(old.id)).toBe(0);
    expect(await state.rollouts.get(old.id)).toBeUndefined();
    // The aborted one still holds a slot (its task may run): kept until it is given back.
    expect(await state.rollouts.get(busy.id)).toBeDefined();
    expect(await state.rollouts.get(running.id)).toBeDefined();
    expect(await state.rollouts.get(recent.id)).toBeDefined();
  });
});
