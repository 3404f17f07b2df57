/**
 * A rollout's own life: its phases and the events that move it. Every change of phase goes
 * through `nextPhase`, so that operator actions, the failure gate, the policy files and the
 * scheduler are all events of one machine.
 *
 *   running ──converge──► converged ──reopen──► running
 *   running | converged ──halt (failure gate)──► halted ──resume (operator)──► running
 *   running | converged ──pause (policy disabled or removed)──► paused ──unpause──► running
 *   any but superseded ──supersede (a newer build)──► superseded ──restart (the build is the target again)──► running
 */

export const ROLLOUT_PHASES = ['running', 'converged', 'paused', 'halted', 'superseded'] as const;
export type RolloutPhase = (typeof ROLLOUT_PHASES)[number];

export type RolloutEvent =
  | 'converge'
  | 'reopen'
  | 'halt'
  | 'resume'
  | 'pause'
  | 'unpause'
  | 'supersede'
  | 'restart';

const TABLE: readonly (readonly [RolloutPhase, RolloutEvent, RolloutPhase])[] = [
  ['running', 'converge', 'converged'],
  ['converged', 'reopen', 'running'],
  ['running', 'halt', 'halted'],
  ['converged', 'halt', 'halted'],
  ['halted', 'resume', 'running'],
  ['running', 'pause', 'paused'],
  ['converged', 'pause', 'paused'],
  ['paused', 'unpause', 'running'],
  ['running', 'supersede', 'superseded'],
  ['converged', 'supersede', 'superseded'],
  ['paused', 'supersede', 'superseded'],
  ['halted', 'supersede', 'superseded'],
  ['superseded', 'restart', 'running'],
];

/** The phase `event` leads to from `phase`, or undefined when it does not apply there. */
export function nextPhase(phase: RolloutPhase, event: RolloutEvent): RolloutPhase | undefined {
  return TABLE.find(([from, e]) => from === phase && e === event)?.[2];
}

/** Whether the admitter may give slots to this rollout's Collectors (first attempts and retries). */
export function admits(phase: RolloutPhase): boolean {
  return phase === 'running' || phase === 'converged';
}

/** Why a paused rollout is paused, as `status` shows it: `paused (policy disabled)`. */
export const PAUSE_REASONS = {
  policyDisabled: 'policy disabled',
  policyRemoved: 'policy removed',
} as const;

/** The phase as a person reads it. */
export function describePhase(phase: RolloutPhase, reason?: string): string {
  return phase === 'paused' && reason ? `paused (${reason})` : phase;
}
