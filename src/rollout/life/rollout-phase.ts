/**
 * A rollout's own life: its phases and the events that move it. Every change of phase goes
 * through `nextPhase`, so that operator actions (src/rollout/operator/: one verb a file), the failure gate, the
 * policy files and the scheduler are all events of one machine, recorded in the rollout's
 * history (event-log.ts).
 *
 *   running ──converge──► converged ──reopen──► running
 *   running | converged ──halt (the failure gate, onTrip: pause)──► halted ──resume──► running
 *   running | converged ──pause (an operator; a policy disabled or removed)──► paused ──resume | unpause──► running
 *   running | converged | paused | halted ──abort (an operator; the gate with onTrip: abort; a schedule's end)──► aborted
 *   running | converged | paused | halted ──supersede (a newer build)──► superseded ──restart──► running
 * `aborted` is for good: nothing more starts in that rollout. Its policy starts no newer build
 * until the policy file changes or an operator resumes the aborted rollout (which releases the
 * policy, not the rollout).
 */

export const ROLLOUT_PHASES = ['running', 'converged', 'paused', 'halted', 'aborted', 'superseded'] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

export type PhaseEvent =
  | 'converge'
  | 'reopen'
  | 'halt'
  | 'resume'
  | 'pause'
  | 'unpause'
  | 'abort'
  | 'supersede'
  | 'restart';

const TABLE: readonly (readonly [RolloutPhase, PhaseEvent, RolloutPhase])[] = [
  ['running', 'converge', 'converged'],
  ['converged', 'reopen', 'running'],
  ['running', 'halt', 'halted'],
  ['converged', 'halt', 'halted'],
  ['halted', 'resume', 'running'],
  ['paused', 'resume', 'running'],
  ['running', 'pause', 'paused'],
  ['converged', 'pause', 'paused'],
  ['paused', 'unpause', 'running'],
  ['running', 'abort', 'aborted'],
  ['converged', 'abort', 'aborted'],
  ['paused', 'abort', 'aborted'],
  ['halted', 'abort', 'aborted'],
  ['running', 'supersede', 'superseded'],
  ['converged', 'supersede', 'superseded'],
  ['paused', 'supersede', 'superseded'],
  ['halted', 'supersede', 'superseded'],
  ['superseded', 'restart', 'running'],
];

/** The phase `event` leads to from `phase`, or undefined when it does not apply there. */
export function nextPhase(phase: RolloutPhase, event: PhaseEvent): RolloutPhase | undefined {
  return TABLE.find(([from, e]) => from === phase && e === event)?.[2];
}

/** Whether the admitter may give slots to this rollout's Collectors (first attempts and retries). */
export function admits(phase: RolloutPhase): boolean {
  return phase === 'running' || phase === 'converged';
}

/** Why a paused rollout is paused when its policy paused it: `paused (policy disabled)`. */
export const PAUSE_REASONS = {
  policyDisabled: 'policy disabled',
  policyRemoved: 'policy removed',
} as const;

/** Whether a pause came from the policy files (and ends when the policy is back), not an operator. */
export function isPolicyPause(reason: string | undefined): boolean {
  return reason === PAUSE_REASONS.policyDisabled || reason === PAUSE_REASONS.policyRemoved;
}

/** A pause by the ring a policy follows (`after`): its reason begins so. */
export const RING_PAUSE_PREFIX = 'ring: ';

/** Whether the ring the policy follows paused the rollout (tick/target-chooser.ts), not an operator. */
export function isRingPause(reason: string | undefined): boolean {
  return reason?.startsWith(RING_PAUSE_PREFIX) ?? false;
}

/** The phase as a person reads it. */
export function describePhase(phase: RolloutPhase, reason?: string): string {
  return phase === 'paused' && reason ? `paused (${reason})` : phase;
}
