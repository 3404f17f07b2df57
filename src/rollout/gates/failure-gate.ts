/**
 * The policy's failure gate (src/policy/failure-gate.ts), judged on the counts per state since
 * the last resume, over the whole rollout and per wave. Which states are bad, good or only part
 * of the sample is collector-state.ts's `gateClass`: failed, timed_out, error and unhealthy are bad;
 * succeeded is good; not_alive and rejected only add to the number of outcomes (they are not the
 * build's fault); active, skipped, aborted, manual (the worklist) and quarantined Collectors are
 * not judged. A criterion per outcome
 * type counts Collectors in that state: a new attempt an operator asked for leaves the state, so
 * a Collector counts once, never as a new one.
 */
import type { FailureGate, OutcomeCriterion } from '../../policy/failure-gate.js';
import { GATED_OUTCOMES } from '../../policy/failure-gate.js';
import { COLLECTOR_STATES, gateClass, type StateCounts } from '../collector/collector-state.js';

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
  if (c.max !== undefined && n > c.max) return `${name}: ${n} Collectors, above the gate's max of ${c.max}`;
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
