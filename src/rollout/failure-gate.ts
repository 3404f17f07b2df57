/**
 * The policy's failure gate, judged on the counts per state since the last resume. Which states
 * are bad, good or only part of the sample is collector-state.ts's `gateClass`: failed,
 * timed_out and error are bad; succeeded is good; not_alive and rejected only add to the sample
 * (they are not the build's fault); active and skipped Collectors are not judged.
 */
import type { FailureGate } from '../policy/schema.js';
import { COLLECTOR_STATES, gateClass, type StateCounts } from './collector-state.js';

export interface GateVerdict {
  bad: number;
  outcomes: number;
  /** Why the gate trips, or undefined when it holds. */
  trip?: string;
}

export function judgeGate(
  gate: FailureGate | undefined,
  counts: StateCounts,
  baseline: Readonly<Record<string, number>> = {},
): GateVerdict {
  let bad = 0;
  let outcomes = 0;
  for (const state of COLLECTOR_STATES) {
    const n = Math.max(0, (counts[state] ?? 0) - (baseline[state] ?? 0));
    const cls = gateClass(state);
    if (cls === 'bad') bad += n;
    if (cls !== 'none') outcomes += n;
  }
  if (!gate || outcomes < gate.minOutcomes || bad / outcomes <= gate.maxFailureRatio)
    return { bad, outcomes };
  return {
    bad,
    outcomes,
    trip: `${bad} of ${outcomes} outcomes failed, timed out or ended in error, above the gate's ${gate.maxFailureRatio}`,
  };
}
