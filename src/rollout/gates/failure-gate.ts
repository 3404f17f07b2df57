/**
 * The policy's failure gate (src/policy/failure-gate.ts): judged here (`judgeGate`), and what a
 * trip does to the rollout (`tripFailureGate`, a step of the scheduler's tick). It is judged on the counts per state since
 * the last resume, over the whole rollout and per wave. Which states are bad, good or only part
 * of the sample is collector-state.ts's `gateClass`: failed, timed_out, error and unhealthy are bad;
 * succeeded is good; not_alive and rejected only add to the number of outcomes (they are not the
 * build's fault); active, skipped, aborted, manual (the worklist) and quarantined Collectors are
 * not judged. A criterion per outcome
 * type counts Collectors in that state: a new attempt an operator asked for leaves the state, so
 * a Collector counts once, never as a new one.
 */
import { createHash } from 'node:crypto';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import { plural } from '../../lib/plural.js';
import type { FailureGate, OutcomeCriterion } from '../../policy/failure-gate.js';
import { GATED_OUTCOMES } from '../../policy/failure-gate.js';
import {
  COLLECTOR_STATES,
  type CollectorStore,
  gateClass,
  type StateCounts,
  WAVE_ROLLBACK_STATES,
} from '../collector/index.js';
import type { RolloutDraft, RolloutStore } from '../life/index.js';
import { abortRollout, type RollbackRequest } from '../operator/index.js';

export interface GateVerdict {
  /** Why the gate trips (criterion, scope and counts), or undefined when it holds. */
  trip?: string;
  /** What a trip does. */
  onTrip: FailureGate['onTrip'];
  /** The wave (0-based) whose counts tripped it; undefined when the whole rollout's did. */
  wave?: number;
}

interface Tally {
  bad: number;
  outcomes: number;
  of(state: string): number;
}

function tally(counts: StateCounts, baseline: Readonly<Record<string, number>> = {}): Tally {
  const since = (s: string) => Math.max(0, ((counts as Record<string, number>)[s] ?? 0) - (baseline[s] ?? 0));
  let bad = 0;
  let outcomes = 0;
  for (const state of COLLECTOR_STATES) {
    const cls = gateClass(state);
    if (cls === 'bad') bad += since(state);
    if (cls !== 'none') outcomes += since(state);
  }
  return { bad, outcomes, of: since };
}

const percent = (x: number) => `${(x * 100).toFixed(x < 0.1 ? 1 : 0)}%`;

function judgeCriterion(name: string, c: OutcomeCriterion, t: Tally): string | undefined {
  const n = t.of(name);
  if (c.max !== undefined && n > c.max)
    return `${name}: ${plural(n, 'Collector')}, above the gate's max of ${c.max}`;
  if (c.ratio !== undefined && t.outcomes >= c.minSample && n / t.outcomes > c.ratio)
    return `${name}: ${n} of ${t.outcomes} outcomes (${percent(n / t.outcomes)}), above the gate's ${percent(c.ratio)}`;
  return undefined;
}

function judgeScope(gate: FailureGate, t: Tally): string | undefined {
  if (
    gate.maxFailureRatio !== undefined &&
    t.outcomes >= gate.minOutcomes &&
    t.bad / t.outcomes > gate.maxFailureRatio
  )
    return `${t.bad} of ${t.outcomes} outcomes failed, timed out, ended in error or unhealthy (${percent(t.bad / t.outcomes)}), above the gate's ${percent(gate.maxFailureRatio)}`;
  for (const type of GATED_OUTCOMES) {
    const c = gate[type];
    const why = c && judgeCriterion(type, c, t);
    if (why) return why;
  }
  return undefined;
}

/** Judges the gate over the rollout, then each wave; the first criterion that trips is named. */
export function judgeGate(
  gate: FailureGate | undefined,
  counts: StateCounts,
  options: {
    waves?: readonly StateCounts[];
    baseline?: Readonly<Record<string, number>>;
    waveBaseline?: readonly Readonly<Record<string, number>>[];
  } = {},
): GateVerdict {
  if (!gate) return { onTrip: 'pause' };
  const overall = judgeScope(gate, tally(counts, options.baseline));
  if (overall) return { trip: `over the rollout, ${overall}`, onTrip: gate.onTrip };
  for (const [i, wave] of (options.waves ?? []).entries()) {
    const why = judgeScope(gate, tally(wave, options.waveBaseline?.[i]));
    if (why) return { trip: `in wave ${i + 1}, ${why}`, onTrip: gate.onTrip, wave: i };
  }
  return { onTrip: gate.onTrip };
}

export interface FailureGateDeps {
  rollouts: RolloutStore;
  store: CollectorStore;
  clock: Clock;
  logger: Logger;
}

/**
 * Judges the gate and carries a trip out: the rollout is halted (onTrip: pause), aborted, or
 * halted with the tripped wave rolled back (onTrip: rollback-wave: the request is filed before the
 * halt, so a crash in between trips the gate again and files the same request, carried out once:
 * operator/rollback.ts). The halt and its `rollout.halted` event are one atomic write.
 */
export async function tripFailureGate(
  deps: FailureGateDeps,
  draft: RolloutDraft,
  gate: FailureGate | undefined,
  counts: StateCounts,
  now: number,
): Promise<void> {
  if (!gate) return;
  const rollout = draft.view;
  const waves = await deps.store.waveCounts(rollout.id);
  const verdict = judgeGate(gate, counts, {
    waves,
    ...(rollout.gateBaseline ? { baseline: rollout.gateBaseline } : {}),
    ...(rollout.waveBaseline ? { waveBaseline: rollout.waveBaseline } : {}),
  });
  if (!verdict.trip) return;
  deps.logger.warn(
    { rollout: rollout.id, reason: verdict.trip, onTrip: verdict.onTrip },
    'the failure gate tripped',
  );
  const wave = verdict.wave ?? rollout.wave.index;
  if (verdict.onTrip === 'rollback-wave') {
    const request: RollbackRequest = {
      // The same until an operator resumes (which moves the baseline): a re-trip after a crash files it again.
      id: `gate-wave-${wave + 1}-${createHash('sha256')
        .update(JSON.stringify(rollout.gateBaseline ?? {}))
        .digest('hex')
        .slice(0, 12)}`,
      states: [...WAVE_ROLLBACK_STATES],
      wave,
      by: 'the failure gate',
      source: 'gate',
      at: now,
      reason: `the failure gate tripped: ${verdict.trip}`,
    };
    await deps.rollouts.rollbacks.request(rollout.id, JSON.stringify(request));
  }
  if (verdict.onTrip === 'abort') {
    const aborted = await abortRollout(deps, draft.view, {
      actor: 'the failure gate',
      reason: `the failure gate: ${verdict.trip}`,
      source: 'gate',
      counts,
    });
    if (aborted) draft.took(aborted.rollout);
    return;
  }
  await draft.move(deps.rollouts, 'halt', now, {
    reason: verdict.trip,
    news: [
      {
        type: 'rollout.halted',
        source: 'gate',
        criterion: verdict.trip,
        counts,
        onTrip: verdict.onTrip,
        ...(verdict.onTrip === 'rollback-wave' ? { rollbackWave: wave + 1 } : {}),
      },
    ],
  });
}
