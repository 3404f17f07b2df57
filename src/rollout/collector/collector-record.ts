/**
 * What a rollout records of each of its Collectors (one JSON value per Collector in Redis): the
 * build it came from and goes to, its state (collector-state.ts), its attempts and what the
 * service answered to each, and the timestamps the scheduler and the workers reason on.
 */
import { DEFAULT_ORG } from './collector-key.js';
import type { CollectorState } from './collector-state.js';

/** What a rollout records of each of its Collectors (one JSON value per Collector in Redis). */
export interface CollectorRecord {
  id: number;
  /** The organization it belongs to (its id is unique there only); absent: the default one. */
  org?: string;
  name: string;
  hostName: string;
  /** The Collector's time zone, for maintenance windows read in it. */
  timeZone?: string;
  /** Build the Collector was on when the rollout found it. */
  from: string;
  /** Build of the rollout. */
  to: string;
  state: CollectorState;
  /** Task id of the current (or last) task, as the service gave it. */
  taskId?: string;
  /** Creates sent (a resend of an unanswered create within the ambiguity window is the same attempt). */
  attempts: number;
  /** Times the admitter gave it a slot; part of its job id. */
  admissions: number;
  /**
   * Found below the policy's `minimumBuild`: admitted first, outside the policy's waves, whatever
   * the windows, freezes and schedule (a security fix); still under the in-flight limit and the gates.
   */
  belowMinimum?: boolean;
  /** The wave (0-based) in which it was first admitted: the failure gate judges each wave. */
  wave?: number;
  /** New attempts an operator asked for (`retry`): an attempt, never a new Collector. */
  retries?: number;
  /** `collector.not.alive` answers since it was last seen alive. */
  notAliveAnswers: number;
  /** Create answers that were errors other than the vendor's codes (401, 403, 4xx, unreadable). */
  errorAnswers: number;
  /** Create answers that were transient errors (5xx, 429, network) after the client's own retries. */
  transientErrors: number;
  /** Status reads of this Collector's tasks. */
  statusReads: number;
  /** Status reads in a row that gave nothing usable (errors, task not found). */
  statusErrors: number;
  /** The service's message (failures), or ours (time-outs, errors). */
  message?: string;
  /** Epoch ms (the deployment's shared clock). */
  discoveredAt: number;
  admittedAt?: number;
  /** When a worker took up the job of its admission (our clock): from admittedAt, the queue's wait. */
  pickedAt?: number;
  createSentAt?: number;
  /**
   * When the first create of this attempt was sent (a resend of it keeps it): the earliest the
   * attempt's task can have started, so the service cannot have timed it out before 30 minutes after.
   */
  firstSentAt?: number;
  /** When the create was answered (our clock): the task's start as we measure it. */
  requestTime?: number;
  finishedAt?: number;
  /** waiting_retry: when the admitter may give it a slot again. */
  nextAttemptAt?: number;
  /** reconciling: since when only the listings can tell what became of its task. */
  reconcilingSince?: number;
  /** reconciling: a task of ours surely ran (the service took the create, or we had its id). */
  taskProven?: boolean;
  /** Last task status read (0, 1, 2, 3, 6). */
  lastStatus?: number;
  /** The process (host:pid) that created the task. */
  createdBy?: string;
  /** What predicts its upgrade's length: its OS and its build's distance to the target, `Linux|2` (admit/upgrade-length.ts). */
  kind?: string;
  /** osName, osArch of the Collector when found (cohorts), and its cohort's key under the policy's `cohorts.by`. */
  osName?: string;
  osArch?: string;
  cohort?: string;
  /** The class of its last failure's message (disk_space, network, ...: classify-failure.ts). */
  failureClass?: string;
  /** New attempts its failure class's `retry` action gave it. */
  causeRetries?: number;
  /** When a status read last found its task unfinished (our clock): the task ended after it. */
  lastUnfinishedAt?: number;
  /** verifying: when its task succeeded (our clock). */
  succeededAt?: number;
  /** verifying: the first listing that showed it alive on the build: our time, and its lastSeenAlive then. */
  seenOnBuildAt?: number;
  seenAliveMark?: number;
  /** verifying: when the next verification pass should look at it (our clock). */
  verifyDueAt?: number;
  /** Its latest attempts (at most ATTEMPT_LOG_SIZE), oldest first: what `report` shows of each. */
  attemptLog?: AttemptEntry[];
}

/** One create attempt of a Collector, as `report` shows it. */
export interface AttemptEntry {
  /** The attempt's number (the record's `attempts` when it was sent). */
  n: number;
  sentAt: number;
  /** What the service answered: created, not_alive, error, transient_error, rejected, unknown. */
  answer?: string;
  taskId?: string;
  /** How the attempt ended, when it ended the Collector's turn (a settled state). */
  outcome?: CollectorState;
  endedAt?: number;
}

/** Attempts kept per Collector: enough to read a story, small enough for 100,000 Collectors. */
export const ATTEMPT_LOG_SIZE = 5;

/** The record of a Collector a scan found: `queued`, from its current build to the rollout's. */
export function newRecord(
  c: {
    id: number;
    name: string;
    hostName?: string;
    timeZone?: string;
    collectorVersion: string;
    osName?: string;
    osArch?: string;
  },
  to: string,
  now: number,
  cohort?: string,
  org?: string,
): CollectorRecord {
  return {
    id: c.id,
    ...(org && org !== DEFAULT_ORG ? { org } : {}),
    name: c.name,
    hostName: c.hostName ?? '',
    ...(c.timeZone === undefined ? {} : { timeZone: c.timeZone }),
    ...(c.osName ? { osName: c.osName } : {}),
    ...(c.osArch ? { osArch: c.osArch } : {}),
    ...(cohort ? { cohort } : {}),
    from: c.collectorVersion,
    to,
    state: 'queued',
    attempts: 0,
    admissions: 0,
    notAliveAnswers: 0,
    errorAnswers: 0,
    transientErrors: 0,
    statusReads: 0,
    statusErrors: 0,
    discoveredAt: now,
  };
}
