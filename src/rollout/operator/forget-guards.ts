/**
 * The guards of `forget` (issue 20): a rollback request not carried out yet, and a policy that
 * still selects the rollout's build, refuse it unless forced; what it says of the cohorts it
 * keeps held.
 */
import { PAUSE_REASONS, type RolloutRecord } from '../life/index.js';

import { type ControlDeps, ControlError } from './control.js';

export const pendingRollback = (id: string) =>
  new ControlError(
    'conflict',
    `rollout ${id} has a rollback request the daemon has not carried out yet: forgetting it now would drop the rollback. ` +
      `Wait until \`fleet-upgrade status\` shows its rollback, or pass --force to drop the request with the rollout`,
  );

/** What `forget` says of the cohorts it keeps held. */
export function heldNote(rollout: RolloutRecord): string {
  const held = rollout.quarantined ?? [];
  if (held.length === 0) return '';
  return `; its quarantined cohort${held.length === 1 ? '' : 's'} (${held.map((q) => q.cohort).join('; ')}) stay${held.length === 1 ? 's' : ''} held if the rollout starts again`;
}

/**
 * Why the rollout's policy still wants it (enabled, and selecting its build), in words with what
 * to do; undefined when it does not, or when no policies are known (`deps.policies` absent).
 */
export async function selectedByPolicy(
  deps: ControlDeps,
  rollout: RolloutRecord,
): Promise<string | undefined> {
  if (!deps.policies) return undefined;
  // Orphaned: the daemon saw its policy gone.
  if (rollout.phase === 'paused' && rollout.pauseReason === PAUSE_REASONS.policyRemoved) return undefined;
  // One-offs (`upgrade`, rollbacks) go with their rollout: nothing starts them again.
  if (await deps.rollouts.oneOffs.isOneOff(rollout.policy)) return undefined;
  const policies = deps.policies();
  const policy = policies?.find((p) => p.name === rollout.policy);
  if (policies && !policy?.enabled) return undefined;
  const current = (await deps.rollouts.currentOf(rollout.policy)) === rollout.id;
  if (!current && policy?.target !== rollout.build) return undefined;
  const known = policies ? '' : ' (its policy files cannot be read here: the daemon’s last choice decides)';
  return (
    `rollout ${rollout.id} is what its policy ${rollout.policy} still selects: the policy is enabled and selects ${rollout.build}${known}. ` +
    `Forgotten, it would be started again under the same id from scratch. Change the policy's target or remove its file ` +
    `(the daemon then supersedes or orphans the rollout), then forget it; or pass --force`
  );
}
