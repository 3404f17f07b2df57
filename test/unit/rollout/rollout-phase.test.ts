/**
 * A rollout's own life (src/rollout/rollout-phase.ts): the phase every event leads to from every
 * phase (and none where it does not apply), which phases admit Collectors, and the phase as
 * `status` shows it.
 */
import { describe, expect, it } from 'vitest';
import {
  admits,
  describePhase,
  nextPhase,
  PAUSE_REASONS,
  ROLLOUT_PHASES,
  type RolloutEvent,
  type RolloutPhase,
} from '../../../src/rollout/rollout-phase.js';

const EVENTS = ['converge', 'reopen', 'halt', 'resume', 'pause', 'unpause', 'supersede', 'restart'] as const;
// Every event of the type is listed above (a new one fails to compile until it is).
type Unlisted = Exclude<RolloutEvent, (typeof EVENTS)[number]>;
const allListed: [Unlisted] extends [never] ? true : false = true;

/** The phase table as the module's header draws it; every pair not named here leads nowhere. */
const EXPECTED: Partial<Record<RolloutPhase, Partial<Record<RolloutEvent, RolloutPhase>>>> = {
  running: { converge: 'converged', halt: 'halted', pause: 'paused', supersede: 'superseded' },
  converged: { reopen: 'running', halt: 'halted', pause: 'paused', supersede: 'superseded' },
  halted: { resume: 'running', supersede: 'superseded' },
  paused: { unpause: 'running', supersede: 'superseded' },
  superseded: { restart: 'running' },
};

describe('nextPhase', () => {
  it('knows the five phases', () => {
    expect(allListed).toBe(true);
    expect([...ROLLOUT_PHASES]).toEqual(['running', 'converged', 'paused', 'halted', 'superseded']);
  });

  const cases = ROLLOUT_PHASES.flatMap((phase) =>
    EVENTS.map((event) => [phase, event, EXPECTED[phase]?.[event]] as const),
  );
  it.each(cases)('%s on %s → %s', (phase, event, expected) => {
    expect(nextPhase(phase, event)).toBe(expected);
  });

  it('supersede applies to every phase but superseded; restart only there', () => {
    for (const p of ROLLOUT_PHASES) {
      expect(nextPhase(p, 'supersede') !== undefined).toBe(p !== 'superseded');
      expect(nextPhase(p, 'restart') !== undefined).toBe(p === 'superseded');
    }
  });

  it('every phase can be left and reached again', () => {
    for (const p of ROLLOUT_PHASES) {
      expect(EVENTS.some((e) => nextPhase(p, e) !== undefined)).toBe(true);
      expect(ROLLOUT_PHASES.some((q) => EVENTS.some((e) => nextPhase(q, e) === p))).toBe(true);
    }
  });
});

describe('admits', () => {
  it.each(ROLLOUT_PHASES)('%s', (phase) => {
    expect(admits(phase)).toBe(phase === 'running' || phase === 'converged');
  });
});

describe('describePhase', () => {
  it('says why a paused rollout is paused', () => {
    expect(describePhase('paused', PAUSE_REASONS.policyDisabled)).toBe('paused (policy disabled)');
    expect(describePhase('paused', PAUSE_REASONS.policyRemoved)).toBe('paused (policy removed)');
    expect(describePhase('paused', 'operator')).toBe('paused (operator)');
  });

  it('is the bare phase otherwise', () => {
    expect(describePhase('paused')).toBe('paused');
    expect(describePhase('paused', '')).toBe('paused');
    for (const p of ROLLOUT_PHASES.filter((x) => x !== 'paused')) {
      expect(describePhase(p)).toBe(p);
      expect(describePhase(p, 'some reason')).toBe(p);
    }
  });
});
