/**
 * The failure gate as judged (src/rollout/gates/failure-gate.ts) on gates parsed by the policy's schema
 * (src/policy/failure-gate.ts, so the defaults are the real ones): the legacy ratio of bad
 * outcomes with minOutcomes; criteria per outcome type with a ratio, a max and a minSample; the
 * rollout judged before each wave, the first criterion that trips named with its scope and
 * counts; baselines recorded at a resume, clamped at 0; not_alive judged only where named; and
 * what a trip does.
 */
import { describe, expect, it } from 'vitest';
import { FailureGate } from '../../../src/policy/failure-gate.js';
import type { StateCounts } from '../../../src/rollout/collector/index.js';
import { judgeGate } from '../../../src/rollout/gates/index.js';

const gate = (input: Record<string, unknown>) => FailureGate.parse(input);

describe('judgeGate without a gate', () => {
  it('never trips, and a trip would pause', () => {
    expect(judgeGate(undefined, { failed: 1000 })).toEqual({ onTrip: 'pause' });
    expect(judgeGate(undefined, { failed: 5 }, { waves: [{ failed: 5 }] })).toEqual({ onTrip: 'pause' });
  });
});

describe('judgeGate: the legacy ratio (maxFailureRatio with minOutcomes)', () => {
  const legacy = gate({ maxFailureRatio: 0.2, minOutcomes: 10 });

  it('is not judged before minOutcomes outcomes are in', () => {
    // 9 outcomes, all bad: too few to judge.
    expect(judgeGate(legacy, { failed: 5, timed_out: 2, error: 2, queued: 100 })).toEqual({
      onTrip: 'pause',
    });
  });

  it('trips above the ratio, counting failed, timed_out and error as bad', () => {
    expect(judgeGate(legacy, { failed: 1, timed_out: 1, error: 1, succeeded: 7, pending: 40 })).toEqual({
      trip: "over the rollout, 3 of 10 outcomes failed, timed out, ended in error or unhealthy (30%), above the gate's 20%",
      onTrip: 'pause',
    });
  });

  it('holds at exactly the ratio', () => {
    expect(judgeGate(legacy, { failed: 2, succeeded: 8 }).trip).toBeUndefined();
  });

  it('counts not_alive and rejected in the sample only; active, skipped and aborted not at all', () => {
    // 2 bad of 10 outcomes (2 failed, 3 succeeded, 3 not_alive, 2 rejected) = 20%: holds.
    const counts: StateCounts = {
      failed: 2,
      succeeded: 3,
      not_alive: 3,
      rejected: 2,
      skipped: 50,
      aborted: 50,
      queued: 9,
      waiting_retry: 9,
      admitted: 9,
      creating: 9,
      pending: 9,
      progressing: 9,
      reconciling: 9,
    };
    expect(judgeGate(legacy, counts).trip).toBeUndefined();
    // One more failure: 3 of 11.
    expect(judgeGate(legacy, { ...counts, failed: 3 }).trip).toBe(
      "over the rollout, 3 of 11 outcomes failed, timed out, ended in error or unhealthy (27%), above the gate's 20%",
    );
    // Without not_alive and rejected in the sample there would not be enough outcomes.
    expect(judgeGate(legacy, { failed: 3, succeeded: 3, skipped: 50, aborted: 50 }).trip).toBeUndefined();
  });

  it('shows small shares with one decimal', () => {
    const strict = gate({ maxFailureRatio: 0.01, minOutcomes: 100 });
    expect(judgeGate(strict, { failed: 5, succeeded: 195 }).trip).toBe(
      "over the rollout, 5 of 200 outcomes failed, timed out, ended in error or unhealthy (2.5%), above the gate's 1.0%",
    );
  });
});

describe('judgeGate: criteria per outcome type', () => {
  it('max trips when more Collectors than it ended that way, whatever the sample', () => {
    const g = gate({ timed_out: { max: 2 } });
    expect(judgeGate(g, { timed_out: 2 }).trip).toBeUndefined();
    expect(judgeGate(g, { timed_out: 3 }).trip).toBe(
      "over the rollout, timed_out: 3 Collectors, above the gate's max of 2",
    );
    // max 0: the first one trips.
    expect(judgeGate(gate({ rejected: { max: 0 } }), { rejected: 1, succeeded: 500 }).trip).toBe(
      "over the rollout, rejected: 1 Collector, above the gate's max of 0",
    );
  });

  it('ratio trips above its share of the outcomes once minSample outcomes are in (default 10)', () => {
    const g = gate({ failed: { ratio: 0.1 } });
    expect(g.failed?.minSample).toBe(10);
    // 9 outcomes: not judged.
    expect(judgeGate(g, { failed: 5, succeeded: 4 }).trip).toBeUndefined();
    expect(judgeGate(g, { failed: 5, succeeded: 5 }).trip).toBe(
      "over the rollout, failed: 5 of 10 outcomes (50%), above the gate's 10%",
    );
    // Exactly at the ratio holds.
    expect(judgeGate(g, { failed: 1, succeeded: 9 }).trip).toBeUndefined();
    const sampled = gate({ failed: { ratio: 0.1, minSample: 3 } });
    expect(judgeGate(sampled, { failed: 1, succeeded: 1 }).trip).toBeUndefined();
    expect(judgeGate(sampled, { failed: 1, succeeded: 2 }).trip).toBe(
      "over the rollout, failed: 1 of 3 outcomes (33%), above the gate's 10%",
    );
  });

  it('a type counts only its own state: other bad outcomes add to the sample, not to it', () => {
    const g = gate({ error: { ratio: 0.3, minSample: 5 } });
    expect(judgeGate(g, { failed: 8, timed_out: 1, error: 1 }).trip).toBeUndefined();
    expect(judgeGate(g, { failed: 1, error: 4 }).trip).toBe(
      "over the rollout, error: 4 of 5 outcomes (80%), above the gate's 30%",
    );
  });

  it('with both, max is judged before the ratio', () => {
    const g = gate({ failed: { ratio: 0.1, max: 3, minSample: 1 } });
    expect(judgeGate(g, { failed: 4, succeeded: 1 }).trip).toBe(
      "over the rollout, failed: 4 Collectors, above the gate's max of 3",
    );
    expect(judgeGate(g, { failed: 2, succeeded: 1 }).trip).toBe(
      "over the rollout, failed: 2 of 3 outcomes (67%), above the gate's 10%",
    );
  });

  it('names the first criterion that trips: the legacy ratio, then failed, timed_out, error, rejected, not_alive', () => {
    const all = gate({
      maxFailureRatio: 0.5,
      minOutcomes: 1,
      failed: { max: 0 },
      timed_out: { max: 0 },
      error: { max: 0 },
      rejected: { max: 0 },
      not_alive: { max: 0 },
    });
    const counts: StateCounts = { failed: 1, timed_out: 1, error: 1, rejected: 1, not_alive: 1 };
    expect(judgeGate(all, counts).trip).toMatch(/^over the rollout, 3 of 5 outcomes failed/);
    expect(judgeGate(all, { ...counts, succeeded: 10 }).trip).toBe(
      "over the rollout, failed: 1 Collector, above the gate's max of 0",
    );
    expect(judgeGate(all, { timed_out: 1, error: 1, rejected: 1, not_alive: 1, succeeded: 10 }).trip).toMatch(
      /^over the rollout, timed_out:/,
    );
    expect(judgeGate(all, { error: 1, rejected: 1, not_alive: 1, succeeded: 10 }).trip).toMatch(
      /^over the rollout, error:/,
    );
    expect(judgeGate(all, { rejected: 1, not_alive: 1, succeeded: 10 }).trip).toMatch(
      /^over the rollout, rejected:/,
    );
    expect(judgeGate(all, { not_alive: 1, succeeded: 10 }).trip).toMatch(/^over the rollout, not_alive:/);
    expect(judgeGate(all, { succeeded: 10 }).trip).toBeUndefined();
  });

  it('judges not_alive only where it is named', () => {
    const unnamed = gate({ failed: { ratio: 0.5, minSample: 1 }, maxFailureRatio: 0.5, minOutcomes: 1 });
    expect(judgeGate(unnamed, { not_alive: 100, succeeded: 1 }).trip).toBeUndefined();
    // ...though it is part of every sample: 1 failed of 1 succeeded + 1 not_alive + 1 failed.
    expect(judgeGate(unnamed, { failed: 1, succeeded: 1, not_alive: 1 }).trip).toBeUndefined();
    const named = gate({ not_alive: { ratio: 0.5, minSample: 4 } });
    expect(judgeGate(named, { not_alive: 3, succeeded: 1 }).trip).toBe(
      "over the rollout, not_alive: 3 of 4 outcomes (75%), above the gate's 50%",
    );
  });
});

describe('judgeGate: per wave and over the rollout', () => {
  const g = gate({ failed: { ratio: 0.2, minSample: 5 } });

  it('trips in a wave whose share is above the gate while the rollout’s is not, naming the wave (1-based)', () => {
    const waves: StateCounts[] = [{ succeeded: 50 }, { succeeded: 38 }, { failed: 4, succeeded: 6 }];
    const counts: StateCounts = { succeeded: 94, failed: 4, queued: 100 };
    expect(judgeGate(g, counts).trip).toBeUndefined();
    expect(judgeGate(g, counts, { waves })).toEqual({
      trip: "in wave 3, failed: 4 of 10 outcomes (40%), above the gate's 20%",
      onTrip: 'pause',
      wave: 2,
    });
  });

  it('judges the rollout first, then the waves in order', () => {
    const waves: StateCounts[] = [
      { failed: 3, succeeded: 2 },
      { failed: 5, succeeded: 0 },
    ];
    expect(judgeGate(g, { failed: 8, succeeded: 2 }, { waves }).trip).toBe(
      "over the rollout, failed: 8 of 10 outcomes (80%), above the gate's 20%",
    );
    expect(judgeGate(g, { failed: 8, succeeded: 100 }, { waves }).trip).toBe(
      "in wave 1, failed: 3 of 5 outcomes (60%), above the gate's 20%",
    );
  });

  it('a wave too small for minSample is not judged on its ratio; its max is', () => {
    const waves: StateCounts[] = [{ failed: 4 }];
    expect(judgeGate(g, { failed: 4, succeeded: 100 }, { waves }).trip).toBeUndefined();
    const capped = gate({ failed: { ratio: 0.2, max: 3, minSample: 5 } });
    // Over the rollout 4 > 3 trips first; the wave's own max is named when the rollout's is not judged.
    expect(judgeGate(capped, { failed: 4, succeeded: 100 }, { waves }).trip).toBe(
      "over the rollout, failed: 4 Collectors, above the gate's max of 3",
    );
  });
});

describe('judgeGate: baselines after a resume', () => {
  const g = gate({ maxFailureRatio: 0.2, minOutcomes: 5 });

  it('judges only what came after the baseline, over the rollout', () => {
    const baseline = { failed: 8, succeeded: 2, queued: 90 };
    expect(judgeGate(g, { failed: 8, succeeded: 2, queued: 90 }).trip).toBeDefined();
    expect(judgeGate(g, { failed: 8, succeeded: 6, queued: 86 }, { baseline }).trip).toBeUndefined();
    expect(judgeGate(g, { failed: 10, succeeded: 6, queued: 84 }, { baseline }).trip).toBe(
      "over the rollout, 2 of 6 outcomes failed, timed out, ended in error or unhealthy (33%), above the gate's 20%",
    );
  });

  it('clamps at 0 a state that has fewer Collectors than at the resume (an operator’s retry took them out)', () => {
    // At the resume 8 failed; an operator retried 6 of them: 2 failed now, -6 since would hide new failures.
    const baseline = { failed: 8, succeeded: 2 };
    expect(judgeGate(g, { failed: 2, succeeded: 2, waiting_retry: 6 }, { baseline }).trip).toBeUndefined();
    const counts: StateCounts = { failed: 4, succeeded: 5 };
    // failed: max(0, 4 - 8) = 0; succeeded 3 since: holds (and is below minOutcomes).
    expect(judgeGate(g, counts, { baseline }).trip).toBeUndefined();
    const perType = gate({ timed_out: { max: 1 } });
    expect(judgeGate(perType, { timed_out: 1 }, { baseline: { timed_out: 5 } }).trip).toBeUndefined();
    expect(judgeGate(perType, { timed_out: 7 }, { baseline: { timed_out: 5 } }).trip).toBe(
      "over the rollout, timed_out: 2 Collectors, above the gate's max of 1",
    );
  });

  it('judges each wave against its own baseline; a wave begun after the resume has none', () => {
    // At the resume wave 1 had 5 failed of 100 (tripped, say, on its own); 20 more succeeded
    // since, and wave 2 began: 3 failed of 5.
    const waves: StateCounts[] = [
      { failed: 5, succeeded: 115 },
      { failed: 3, succeeded: 2 },
    ];
    const counts: StateCounts = { failed: 8, succeeded: 117 };
    const baseline = { failed: 5, succeeded: 95 };
    // Over the rollout: 3 of 25 since the resume (12%) holds; wave 1: 0 of 20 holds; wave 2 trips.
    expect(judgeGate(g, counts, { waves, baseline, waveBaseline: [{ failed: 5, succeeded: 95 }] }).trip).toBe(
      "in wave 2, 3 of 5 outcomes failed, timed out, ended in error or unhealthy (60%), above the gate's 20%",
    );
    expect(
      judgeGate(g, counts, {
        waves,
        baseline,
        waveBaseline: [
          { failed: 5, succeeded: 95 },
          { failed: 3, succeeded: 2 },
        ],
      }).trip,
    ).toBeUndefined();
    // Without the wave's baseline, its failures before the resume count again.
    const one: StateCounts = { failed: 5, succeeded: 15 };
    const before = { failed: 5, succeeded: 5 };
    expect(judgeGate(g, one, { waves: [one], baseline: before }).trip).toBe(
      "in wave 1, 5 of 20 outcomes failed, timed out, ended in error or unhealthy (25%), above the gate's 20%",
    );
    expect(
      judgeGate(g, one, { waves: [one], baseline: before, waveBaseline: [before] }).trip,
    ).toBeUndefined();
  });
});

describe('judgeGate: what a trip does', () => {
  it('says the gate’s onTrip, whether it trips or not', () => {
    const abort = gate({ failed: { max: 0 }, onTrip: 'abort' });
    expect(judgeGate(abort, { failed: 1 })).toEqual({
      trip: "over the rollout, failed: 1 Collector, above the gate's max of 0",
      onTrip: 'abort',
    });
    expect(judgeGate(abort, { succeeded: 1 })).toEqual({ onTrip: 'abort' });
    expect(judgeGate(gate({ failed: { max: 0 } }), { failed: 1 }).onTrip).toBe('pause');
  });
});
