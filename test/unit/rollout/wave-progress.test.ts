/**
 * Where a rollout's waves stand (src/rollout/admit/wave-progress.ts), step by step: the room a wave
 * leaves for first attempts while it is open; completion only once every started Collector has an
 * outcome; a bake, then the next wave at bakeUntil; an approval that waits for promote; both;
 * `full`; the last wave with nothing after it; the news of each step in order; and `promoted`.
 */
import { describe, expect, it } from 'vitest';
import type { PlannedWave } from '../../../src/policy/wave-limits.js';
import { progressWaves, promoted } from '../../../src/rollout/admit/index.js';
import type { StateCounts } from '../../../src/rollout/collector/index.js';
import type { WaveProgress } from '../../../src/rollout/life/index.js';

const NOW = Date.UTC(2025, 0, 6, 9, 0, 0);
const HOUR = 3_600_000;

/** Three waves: 10, then 50, then all 100. */
const PLAN: PlannedWave[] = [{ cap: 10 }, { cap: 50 }, { cap: 100 }];

const at = (index: number, extra: Partial<WaveProgress> = {}): WaveProgress => ({ index, seq: 7, ...extra });

/** `started` Collectors of 100 with an outcome (succeeded) except `active` in `state`. */
function counts(started: number, active = 0, state: keyof StateCounts = 'pending', total = 100): StateCounts {
  return {
    queued: total - started,
    succeeded: started - active,
    ...(active ? { [state]: active } : {}),
  };
}

describe('progressWaves: an open wave', () => {
  it('leaves room for first attempts up to its cap: cap − started', () => {
    expect(progressWaves({ plan: PLAN, progress: at(0), counts: counts(0), now: NOW })).toEqual({
      progress: at(0),
      changed: false,
      news: [],
      room: 10,
    });
    expect(progressWaves({ plan: PLAN, progress: at(0), counts: counts(4, 4), now: NOW }).room).toBe(6);
    expect(progressWaves({ plan: PLAN, progress: at(1), counts: counts(30, 2), now: NOW }).room).toBe(20);
    // Never below 0 (the plan shrank below what was started).
    expect(
      progressWaves({ plan: [{ cap: 5 }, { cap: 100 }], progress: at(0), counts: counts(8, 8), now: NOW })
        .room,
    ).toBe(0);
  });

  it('counts every Collector that left queued as started: outcomes, retries and slots alike', () => {
    const c: StateCounts = { queued: 95, waiting_retry: 1, admitted: 1, not_alive: 1, failed: 1, skipped: 1 };
    expect(progressWaves({ plan: PLAN, progress: at(0), counts: c, now: NOW }).room).toBe(5);
  });
});

describe('progressWaves: completion', () => {
  it('waits while any started Collector has no outcome, whatever its state', () => {
    for (const state of [
      'admitted',
      'creating',
      'pending',
      'progressing',
      'reconciling',
      'waiting_retry',
    ] as const) {
      const step = progressWaves({ plan: PLAN, progress: at(0), counts: counts(10, 1, state), now: NOW });
      expect(step, state).toEqual({ progress: at(0), changed: false, news: [], room: 0 });
    }
  });

  it('waits until the cap is reached', () => {
    expect(progressWaves({ plan: PLAN, progress: at(0), counts: counts(9), now: NOW })).toMatchObject({
      progress: at(0),
      changed: false,
      room: 1,
    });
  });

  it('with every started Collector settled (outcomes of every kind), opens the next wave at once', () => {
    const settled: StateCounts = {
      queued: 90,
      succeeded: 4,
      failed: 1,
      timed_out: 1,
      not_alive: 1,
      rejected: 1,
      error: 1,
      skipped: 1,
    };
    expect(progressWaves({ plan: PLAN, progress: at(0), counts: settled, now: NOW })).toEqual({
      progress: at(1),
      changed: true,
      news: [
        { type: 'wave.completed', wave: 1 },
        { type: 'wave.started', wave: 2 },
      ],
      room: 40,
    });
  });

  it('moves through several waves in one step when they are all done, news in order', () => {
    const plan: PlannedWave[] = [{ cap: 5 }, { cap: 10 }, { cap: 20 }, { cap: 100 }];
    expect(progressWaves({ plan, progress: at(0), counts: counts(12), now: NOW })).toEqual({
      progress: at(2),
      changed: true,
      news: [
        { type: 'wave.completed', wave: 1 },
        { type: 'wave.started', wave: 2 },
        { type: 'wave.completed', wave: 2 },
        { type: 'wave.started', wave: 3 },
      ],
      room: 8,
    });
  });

  it('the last wave has nothing after it: no completion news, the progress stays', () => {
    expect(progressWaves({ plan: PLAN, progress: at(2), counts: counts(100), now: NOW })).toEqual({
      progress: at(2),
      changed: false,
      news: [],
      room: 0,
    });
    // A single-wave plan, all done.
    expect(
      progressWaves({
        plan: [{ cap: 3, bakeMs: HOUR, approval: 'manual' }],
        progress: at(0),
        counts: counts(3, 0, 'pending', 3),
        now: NOW,
      }),
    ).toMatchObject({
      progress: at(0),
      changed: false,
      news: [],
    });
  });

  it('an index past the plan (the plan shrank) is read as the last wave', () => {
    const step = progressWaves({
      plan: [{ cap: 10 }, { cap: 100 }],
      progress: at(4),
      counts: counts(20, 1),
      now: NOW,
    });
    expect(step).toEqual({ progress: at(1), changed: false, news: [], room: 80 });
  });
});

describe('progressWaves: bake', () => {
  const plan: PlannedWave[] = [{ cap: 10, bakeMs: HOUR }, { cap: 100 }];

  it('after the wave’s last outcome, bakes until now + bakeMs, admitting nothing new', () => {
    expect(progressWaves({ plan, progress: at(0), counts: counts(10), now: NOW })).toEqual({
      progress: at(0, { waitingFor: 'bake', bakeUntil: NOW + HOUR }),
      changed: true,
      news: [
        { type: 'wave.completed', wave: 1 },
        { type: 'rollout.baking', wave: 1, until: NOW + HOUR },
      ],
      room: 0,
    });
  });

  it('keeps baking before bakeUntil, with no news; opens the next wave at bakeUntil', () => {
    const baking = at(0, { waitingFor: 'bake', bakeUntil: NOW + HOUR });
    expect(progressWaves({ plan, progress: baking, counts: counts(10), now: NOW + HOUR - 1 })).toEqual({
      progress: baking,
      changed: false,
      news: [],
      room: 0,
    });
    expect(progressWaves({ plan, progress: baking, counts: counts(10), now: NOW + HOUR })).toEqual({
      progress: at(1),
      changed: true,
      news: [{ type: 'wave.started', wave: 2 }],
      room: 90,
    });
  });
});

describe('progressWaves: approval', () => {
  const plan: PlannedWave[] = [{ cap: 10, approval: 'manual' }, { cap: 100 }];

  it('after the wave’s last outcome, awaits approval and stays there', () => {
    const step = progressWaves({ plan, progress: at(0), counts: counts(10), now: NOW });
    expect(step).toEqual({
      progress: at(0, { waitingFor: 'approval' }),
      changed: true,
      news: [
        { type: 'wave.completed', wave: 1 },
        { type: 'rollout.awaiting_approval', wave: 1 },
      ],
      room: 0,
    });
    // Days later: still waiting, nothing new.
    expect(
      progressWaves({ plan, progress: step.progress, counts: counts(10), now: NOW + 72 * HOUR }),
    ).toEqual({
      progress: step.progress,
      changed: false,
      news: [],
      room: 0,
    });
  });

  it('opens the next wave once promoted', () => {
    const waiting = at(0, { waitingFor: 'approval' });
    const next = promoted(waiting, plan.length, false);
    expect(next).toEqual(at(1));
    expect(progressWaves({ plan, progress: next as WaveProgress, counts: counts(10), now: NOW })).toEqual({
      progress: at(1),
      changed: false,
      news: [],
      room: 90,
    });
  });
});

describe('progressWaves: bake and approval', () => {
  const plan: PlannedWave[] = [{ cap: 10, bakeMs: HOUR, approval: 'manual' }, { cap: 50 }, { cap: 100 }];

  it('bakes first, then awaits approval', () => {
    const first = progressWaves({ plan, progress: at(0), counts: counts(10), now: NOW });
    expect(first.progress).toEqual(at(0, { waitingFor: 'bake', bakeUntil: NOW + HOUR }));
    expect(first.news.map((n) => n.type)).toEqual(['wave.completed', 'rollout.baking']);
    const baked = progressWaves({ plan, progress: first.progress, counts: counts(10), now: NOW + HOUR });
    expect(baked).toEqual({
      progress: at(0, { waitingFor: 'approval' }),
      changed: true,
      news: [{ type: 'rollout.awaiting_approval', wave: 1 }],
      room: 0,
    });
    // A promote during the bake skips both.
    expect(promoted(first.progress, plan.length, false)).toEqual(at(1));
  });
});

describe('progressWaves: full', () => {
  it('opens every remaining wave: room up to every Collector, no waiting, no news', () => {
    const plan: PlannedWave[] = [{ cap: 10, bakeMs: HOUR }, { cap: 50, approval: 'manual' }, { cap: 100 }];
    const full = at(2, { full: true });
    expect(progressWaves({ plan, progress: full, counts: counts(10, 2), now: NOW })).toEqual({
      progress: full,
      changed: false,
      news: [],
      room: 90,
    });
    expect(progressWaves({ plan, progress: at(0, { full: true }), counts: counts(50), now: NOW }).room).toBe(
      50,
    );
  });
});

describe('promoted', () => {
  it('is undefined when nothing waits (and not full)', () => {
    expect(promoted(at(0), 3, false)).toBeUndefined();
    expect(promoted(at(2), 3, false)).toBeUndefined();
  });

  it('ends a bake or an approval wait: the next wave, the wait cleared, the seq kept', () => {
    expect(promoted(at(0, { waitingFor: 'bake', bakeUntil: NOW + HOUR, of: 3 }), 3, false)).toEqual(at(1));
    expect(promoted(at(1, { waitingFor: 'approval' }), 3, false)).toEqual(at(2));
    // Never past the last wave.
    expect(promoted(at(2, { waitingFor: 'approval' }), 3, false)).toEqual(at(2));
  });

  it('full: every remaining wave, from anywhere, waiting or not', () => {
    expect(promoted(at(0), 3, true)).toEqual(at(2, { full: true }));
    expect(promoted(at(1, { waitingFor: 'bake', bakeUntil: NOW }), 3, true)).toEqual(at(2, { full: true }));
    expect(promoted(at(2), 3, true)).toEqual(at(2, { full: true }));
  });
});
