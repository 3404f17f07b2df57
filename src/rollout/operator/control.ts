/**
 * What the operator actions on a rollout share (one verb a file, as graphile-worker's one
 * operation a file: pause.ts, resume.ts, abort.ts, promote.ts, retry.ts, forget.ts, approve.ts,
 * rollback.ts): the deps they are given, the error that says why one was refused, and `act`, which
 * writes an action with its event in one step. Each action is an event of the rollout's state
 * machine (rollout-phase.ts; phase moves are compare-and-sets, so an action and a scheduler tick
 * never undo each other) and of its Collectors' (collector-state.ts), recorded in the rollout's
 * history with who did it. They need only Redis: they work while the daemon is down, and the
 * daemon acts on them at its next tick.
 */
import type { Clock } from '../../lib/clock.js';
import { FleetError } from '../../lib/errors.js';
import type { Policy } from '../../policy/schema.js';
import type { CollectorStore } from '../collector/index.js';
import type { Keys } from '../keys.js';
import {
  orgsOf,
  type RecordedEvent,
  type RolloutRecord,
  type RolloutStore,
  type RolloutWrite,
  type Written,
} from '../life/index.js';

/**
 * Why an action was refused: `not_found` (exit 64), `conflict` (the rollout's phase; exit 3),
 * `invalid` (64), `forbidden` (the person may not: exit 77).
 */
export type ControlErrorKind = 'not_found' | 'conflict' | 'invalid' | 'forbidden';

export class ControlError extends FleetError {
  constructor(
    readonly kind: ControlErrorKind,
    message: string,
  ) {
    super(`FLEET_ERR_CONTROL_${kind.toUpperCase()}`, message);
    this.name = 'ControlError';
  }
}

export interface ControlDeps {
  rollouts: RolloutStore;
  store: CollectorStore;
  clock: Clock;
  keys: Keys;
  /**
   * The policies in force (the daemon's, or the files `run` reads), for `forget`'s guard; a
   * function that answers undefined when they cannot be read now (then the daemon's last choice
   * in Redis decides alone). Absent: no policy guard (retention, tests of the store).
   */
  policies?: () => readonly PolicyView[] | undefined;
}

/** What `forget` needs of a policy. */
export type PolicyView = Pick<Policy, 'name' | 'enabled' | 'target'>;

export interface ControlResult {
  rollout: string;
  /** One sentence: what was done (and what it released). */
  message: string;
  /** A rollback's request id (`rollback --wait` follows its account). */
  request?: string;
  event?: RecordedEvent;
}

export async function load(deps: ControlDeps, id: string): Promise<RolloutRecord> {
  const rollout = await deps.rollouts.get(id);
  if (!rollout) throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
  return rollout;
}

/**
 * Writes an operator's action on a rollout with its event, in one step (the store's `write`);
 * `refused` says why when the rollout changed so that the action no longer applies.
 */
export async function act(
  deps: ControlDeps,
  rollout: RolloutRecord,
  change: RolloutWrite,
  refused: () => ControlError,
): Promise<ControlResult> {
  const written = await deps.rollouts.write(rollout, change, deps.clock.now());
  if (!written) {
    const now = await deps.rollouts.get(rollout.id);
    throw now
      ? refused()
      : new ControlError('not_found', `no rollout '${rollout.id}' (it was forgotten meanwhile)`);
  }
  return result(written);
}

export const result = (written: Written): ControlResult => {
  const event = written.events[0];
  return { rollout: written.rollout.id, message: event?.message ?? '', ...(event ? { event } : {}) };
};

export const conflict = (rollout: RolloutRecord, what: string) =>
  new ControlError('conflict', `rollout ${rollout.id} is ${rollout.phase}: ${what}`);

/** The organization an action is scoped to, when given: it must be one of the rollout's. */
export function checkOrg(rollout: RolloutRecord, org: string | undefined): void {
  if (org !== undefined && !orgsOf(rollout).includes(org))
    throw new ControlError(
      'invalid',
      `rollout ${rollout.id} covers no organization '${org}' (it covers ${orgsOf(rollout).join(', ')})`,
    );
}
