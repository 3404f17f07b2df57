/**
 * What a policy asks for one Collector once its target has resolved to a build: an upgrade, a
 * downgrade (only when the policy allows it), or nothing, with the reason. Used by the scheduler
 * before admitting a Collector and by `plan` to explain each row. Builds compare numerically.
 */
import { compareBuildVersions, isBuildVersion } from '../../lib/version.js';
import type { Policy } from '../schema.js';

export type SkipReason =
  /** Already on the target build. */
  | 'at-target'
  /** On a build above the target, and the policy does not allow downgrades. */
  | 'above-target'
  /** The record carries no well-formed build, so the direction of the move is unknown. */
  | 'unknown-version';

export type PlannedMove =
  | { kind: 'upgrade'; from: string; to: string }
  | { kind: 'downgrade'; from: string; to: string }
  | { kind: 'skip'; reason: SkipReason };

/** The move `policy` asks for a Collector on `from` when its target resolved to build `to`. */
export function planMove(
  policy: Pick<Policy, 'allowDowngrade'>,
  from: string | undefined,
  to: string,
): PlannedMove {
  if (!isBuildVersion(to)) throw new RangeError(`target is not a build version: ${JSON.stringify(to)}`);
  if (from === undefined || !isBuildVersion(from)) return { kind: 'skip', reason: 'unknown-version' };
  const order = compareBuildVersions(from, to);
  if (order === 0) return { kind: 'skip', reason: 'at-target' };
  if (order < 0) return { kind: 'upgrade', from, to };
  return policy.allowDowngrade ? { kind: 'downgrade', from, to } : { kind: 'skip', reason: 'above-target' };
}
