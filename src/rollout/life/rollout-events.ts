/**
 * What happens to a rollout, as events: their types, who makes them happen, the facts each one
 * carries (their sentences are made in one place: describe-event.ts). An event is recorded only
 * in the same atomic step as the change it tells of (rollout-store.ts `write`): its history entry and its
 * outbox entry (delivered to webhooks at least once by src/notify) exist exactly when the change
 * does.
 */
import type { StateCounts } from '../collector/index.js';
import type { RolloutPhase } from './rollout-phase.js';
import type { UnmatchedCollector } from './rollout-record.js';

export const ROLLOUT_EVENT_TYPES = [
  'rollout.started',
  'rollout.superseded',
  'wave.started',
  'wave.completed',
  'rollout.baking',
  'rollout.awaiting_approval',
  'rollout.promoted',
  'rollout.approved',
  'rollout.halted',
  'rollout.paused',
  'rollout.resumed',
  'rollout.aborted',
  'rollout.converged',
  'rollout.reopened',
  'rollout.retried',
  'collectors.failed',
  'collectors.unmatched',
  'rollback.requested',
  'rollback.started',
  'rollback.unavailable',
  'cohort.quarantined',
  'analysis.started',
  'analysis.passed',
  'analysis.failed',
  'analysis.inconclusive',
  'org.waiting',
  'org.recovered',
  'ring.waiting',
  'ring.released',
  'ring.paused',
  'ring.resumed',
  'daemon.problem',
  'daemon.problem_ended',
] as const;
export type RolloutEventType = (typeof ROLLOUT_EVENT_TYPES)[number];

/** Who made it happen: an operator (CLI or HTTP), a gate, the scheduler, or a policy file. */
export type EventSource = 'operator' | 'gate' | 'scheduler' | 'policy';

/** A recorded event of a rollout, as its history and the webhooks carry it. */
export interface RolloutEvent {
  type: RolloutEventType;
  rollout: string;
  policy: string;
  build: string;
  /** Clock ms (the deployment's shared clock). */
  at: number;
  source: EventSource;
  /** The operator (user@host, or the HTTP client's token name), when an operator acted. */
  actor?: string;
  /** One sentence for a person: what happened and, when something waits, what to do. */
  message: string;
  /** Facts for machines (counts, wave, criterion, ...). */
  detail?: Record<string, unknown>;
}

export interface RecordedEvent extends RolloutEvent {
  /** Unique id of the event, for receivers to de-duplicate deliveries. */
  id: string;
}

/** A wave, 1-based, of a plan of `of` waves. */
export interface WaveFacts {
  wave: number;
  of: number;
}
export interface AnalysisFacts {
  wave: number;
  verdict: string;
  queries: unknown;
  /** Why, in words: the verdict's reason. */
  reason: string;
}

/** The facts each type of event carries (what its sentence and detail are made of). */
export interface EventFacts {
  'rollout.started': { policy: string; build: string; replaced?: string };
  'rollout.superseded': { by: string };
  'wave.started': WaveFacts;
  'wave.completed': WaveFacts & { counts: StateCounts };
  'rollout.baking': WaveFacts & { until: number };
  'rollout.awaiting_approval': WaveFacts;
  'analysis.started': WaveFacts;
  'rollout.promoted': {
    full: boolean;
    /** The wave that opens (1-based) of `of`. */
    wave: number;
    of: number;
    ended: 'bake' | 'analysis' | 'approval' | null;
    /** The rollout waits for a resume (its analysis stopped it). */
    afterResume: boolean;
  };
  'rollout.approved': {
    /** The wave that opens once approved (1-based) of `of`. */
    wave: number;
    of: number;
    /** Who approved so far, this one included. */
    approvers: readonly string[];
    /** Approvals still needed (0: the wave opens now). */
    needed: number;
  };
  'rollout.halted': {
    criterion: string;
    counts: StateCounts;
    onTrip: string;
    /** The tripped wave (1-based) whose Collectors go back (onTrip: rollback-wave). */
    rollbackWave?: number;
  };
  'rollout.paused': { reason: string; org?: string };
  'rollout.resumed':
    | { released: 'abort' }
    | { released: 'halted' | 'paused'; what: string }
    | { released: 'policy' }
    | { released: 'org'; org: string };
  'rollout.aborted': { aborted: number; reason: string };
  'rollout.converged': { counts: StateCounts };
  'rollout.reopened': { counts: StateCounts; active: number };
  'rollout.retried': {
    retried: number;
    only: readonly string[];
    byState: Record<string, number>;
    released: readonly string[];
    /** The rollout is halted or paused: the attempts start once it is resumed. */
    waits: boolean;
    org?: string;
  };
  'collectors.failed': {
    new: number;
    total: number;
    byState: Record<string, number>;
    /**
     * The same Collectors by failure class (the record's `failureClass`: disk_space, network,
     * health:<tracker> …; its end state where it has none), the most frequent first, at most
     * FAILURE_CLASSES_KEPT of them.
     */
    byClass: Record<string, number>;
  };
  /** A one-off's first scan did not find Collectors it names: none of them is upgraded by it. */
  'collectors.unmatched': { collectors: readonly UnmatchedCollector[] };
  'rollback.requested': { states: readonly string[]; collectors: number; org?: string };
  'rollback.started': {
    build: string;
    collectors: number;
    policy: string;
    states: readonly string[];
    reason: string;
    org?: string;
  };
  'rollback.unavailable': { build: string; collectors: number; ids: readonly number[]; org?: string };
  'cohort.quarantined': { cohort: string; held: number; reason: string };
  'analysis.passed': AnalysisFacts;
  'analysis.failed': AnalysisFacts & { phase: RolloutPhase };
  'analysis.inconclusive': AnalysisFacts & { phase: RolloutPhase };
  /** An organization's part waits: its service has a problem (orgs/org-health.ts). */
  'org.waiting': { org: string; reason: string; since: number };
  /** ... and goes on: its service answers again. */
  'org.recovered': { org: string; reason: string; since: number };
  /**
   * The build waits to start in this policy: the ring it follows (`after`) has not released it,
   * `text` says why (`19.480-2 soaks in canary until 2026-11-27 10:00 (UTC)`); `until` when it may
   * go by itself. Told when the wait begins and each time its reason changes.
   */
  'ring.waiting': { after: string; reason: string; text: string; until?: number };
  /** The ring it follows released the build (converged, soaked, requirements met): it starts here. */
  'ring.released': { after: string; convergedAt: number };
  /** The build turned bad in the ring this one follows (halted, aborted, rolled back): this rollout pauses. */
  'ring.paused': { after: string; reason: string; text: string };
  /** ... and the earlier ring runs it again: this rollout goes on. */
  'ring.resumed': { after: string };
  /**
   * A problem of the daemon (problems/: its `kind` and `subject`) has lasted 5 minutes
   * (tick/tell-problems.ts): told in the rollouts it concerns.
   */
  'daemon.problem': DaemonProblemFacts;
  /** ... and is gone (fixed): told in the same rollouts. */
  'daemon.problem_ended': DaemonProblemFacts;
}

/** A daemon problem as its events tell it. */
export interface DaemonProblemFacts {
  kind: string;
  subject: string;
  reason: string;
  fix: string;
  /** When it began (clock ms). */
  since: number;
}

/** An event about to be recorded: its type, who made it happen, and its facts. */
export type RolloutNews = {
  [T in RolloutEventType]: { type: T; source: EventSource; actor?: string } & EventFacts[T];
}[RolloutEventType];
