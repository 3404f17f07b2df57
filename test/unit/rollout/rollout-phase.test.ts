/**
 * A rollout's own life (src/rollout/life/rollout-phase.ts): the phase every event leads to from every
 * phase (and none where it does not apply), which phases admit Collectors, which pauses come
 * from the policy files, and the phase as `status` shows it.
 */
import { describe, expect, it } from 'vitest';
import {
  admits,
  describePhase,
  isPolicyPause,
  nextPhase,
  PAUSE_REASONS,
  type PhaseEvent,
  ROLLOUT_PHASES,
  type RolloutPhase,
} from '../../../src/rollout/life/index.js';

const EVENTS = [
  'converge',
  'reopen',
  'halt',
  'resume',
  'pause',
  'unpause',
  'abort',
  'supersede',
  'restart',
] as const;
// Every event of the type is listed above (a new one fails to compile until it is).
type Unlisted = Exclude<PhaseEvent, (typeof EVENTS)[number]>;
const allListed: [Unlisted] extends [never] ? true : false = true;

/** The phase table as the module's header draws it; every pair not named here leads nowhere. */
const EXPECTED: Partial<Record<RolloutPhase, Partial<Record<PhaseEvent, RolloutPhase>>>> = {
  running: {
    converge: 'converged',
    halt: 'halted',
    pause: 'paused',
    abort: 'aborted',
    supersede: 'superseded',
  },
  converged: {
    reopen: 'running',
    halt: 'halted',
    pause: 'paused',
    abort: 'aborted',
    supersede: 'superseded',
  },
  halted: { resume: 'running', abort: 'aborted', supersede: 'superseded' },
  paused: { resume: 'running', unpause: 'running', abort: 'aborted', supersede: 'superseded' },
  superseded: { restart: 'running' },
  // aborted: for good, nothing leads out of it (a resume releases its policy, not the rollout).
};

describe('nextPhase', () => {
  it('knows the six phases', () => {
    expect(allListed).toBe(true);
    expect([...ROLLOUT_PHASES]).toEqual([
      'running',
      'converged',
      'paused',
      'halted',
      'aborted',
      'superseded',
    ]);
  });

  const cases = ROLLOUT_PHASES.flatMap((phase) =>
    EVENTS.map((event) => [phase, event, EXPECTED[phase]?.[event]] as const),
  );
  it.each(cases)('%s on %s → %s', (phase, event, expected) => {
    expect(nextPhase(phase, event)).toBe(expected);
  });

  it('supersede and abort apply to every phase but superseded and aborted; restart only to superseded', () => {
    for (const p of ROLLOUT_PHASES) {
      const ended = p === 'superseded' || p === 'aborted';
      expect(nextPhase(p, 'supersede') !== undefined).toBe(!ended);
      expect(nextPhase(p, 'abort')).toBe(ended ? undefined : 'aborted');
      expect(nextPhase(p, 'restart') !== undefined).toBe(p === 'superseded');
    }
  });

  it('resume goes on from halted or paused only', () => {
    expect(ROLLOUT_PHASES.filter((p) => nextPhase(p, 'resume') !== undefined)).toEqual(['paused', 'halted']);
  });

  it('aborted is for good: no event leaves it; every other phase can be left; every phase can be reached', () => {
    for (const p of ROLLOUT_PHASES) {
      expect(EVENTS.some((e) => nextPhase(p, e) !== undefined)).toBe(p !== 'aborted');
      expect(ROLLOUT_PHASES.some((q) => EVENTS.some((e) => nextPhase(q, e) === p))).toBe(true);
    }
  });
});

describe('admits', () => {
  it.each(ROLLOUT_PHASES)('%s', (phase) => {
    expect(admits(phase)).toBe(phase === 'running' || phase === 'converged');
  });
});

describe('isPolicyPause', () => {
  it('is true only for the pauses the policy files cause', () => {
    expect(isPolicyPause(PAUSE_REASONS.policyDisabled)).toBe(true);
    expect(isPolicyPause(PAUSE_REASONS.policyRemoved)).toBe(true);
    for (const reason of [undefined, '', 'by ops@host', 'policy', 'Policy disabled', 'policy disabled '])
      expect(isPolicyPause(reason), String(reason)).toBe(false);
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
