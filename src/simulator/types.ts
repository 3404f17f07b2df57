/** The simulator's in-memory records: a Collector as the service holds it, and an upgrade task. */
import type { FailureCause, Outcome } from './schema.js';

/** Task status codes of the interface (section 3). */
export const TaskStatus = { notStarted: 0, pending: 1, succeeded: 2, failed: 3, progressing: 6 } as const;
export type TaskStatus = (typeof TaskStatus)[keyof typeof TaskStatus];

export interface SimTask {
  id: number;
  collectorId: number;
  accessId: string;
  fromVersion: string;
  toVersion: string;
  requestTime: number;
  status: TaskStatus;
  message: string;
  /** Builds the Collector moves through, the last being toVersion (one entry when not incremental). */
  steps: string[];
  /** Index of the next step to carry out. */
  nextStep: number;
  /** Outcome drawn at creation; a forced outcome on the Collector overrides it. */
  drawnOutcome: Outcome;
  /** The Collector went offline during the upgrade: the task stays unfinished until the time-out. */
  stalled: boolean;
  /** A step event is in the queue (false while a stuck task waits). */
  stepScheduled: boolean;
  finishTime?: number;
  /** How the task ended: drives tasksByOutcome. */
  result?: 'succeeded' | 'failed' | 'timedOut';
  /** Cause of a failed task (not of a time-out); null when the Collector's own message was used. */
  cause?: FailureCause | null;
}

/** A stop of a Collector's heartbeats: after an upgrade (`afterTask`) or by /_sim. */
export interface SimStop {
  at: number;
  /** The succeeded task after which it stopped; null for a stop by /_sim. */
  afterTask: number | null;
  restartedAt: number | null;
}

export interface SimCollector {
  id: number;
  name: string;
  hostName: string;
  timeZone: string;
  ephemeral: boolean;
  sourceSyncMode: string;
  type: 'Installable' | 'Hosted';
  version: string;
  osVersion: string;
  osName: string;
  osArch: string;
  alive: boolean;
  /**
   * Simulated ms of the last heartbeat while offline; running Collectors beat every
   * heartbeatSeconds (see FleetModel.lastSeenAlive).
   */
  offlineSince: number;
  /** Phase of this Collector's heartbeat within the heartbeat period, in ms. */
  heartbeatPhase: number;
  outcome?: Outcome;
  upgradeSeconds?: number;
  failureMessage?: string;
  failureCause?: FailureCause;
  /** Stops heartbeating some time after each successful upgrade (override or drawn at start). */
  stopsAfterUpgrade: boolean;
  /** Set while the Collector's heartbeats are stopped (its process is down): when they stopped. */
  stoppedAt?: number;
  /** When a stop after a successful upgrade is due, and after which task. */
  stopDue?: { at: number; afterTask: number };
  /** Every stop so far, oldest first. */
  stops: SimStop[];
  flap: boolean;
  /** Shown by the inventory (GET /collectors) only. */
  category: string;
  description: string;
  fields: Readonly<Record<string, string>>;
  current?: SimTask;
  tasks: SimTask[];
  /** Every change of `alive` since the start, oldest first (unset until the first): the truth a test judges `not_alive` and `unhealthy` by. */
  aliveChanges?: { at: number; alive: boolean }[];
  /** Every create refused for this Collector (unset until the first), oldest first, with the vendor's code. */
  refusals?: { at: number; code: string }[];
}
