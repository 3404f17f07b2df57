/**
 * A step of a policy's round: an aborted rollout stays aborted, for the build it was of, until it
 * is released (resumed, or its policy changed). Meanwhile its Collectors still waiting are
 * aborted (a crash may have left some), its tasks of unknown id resolved, and its verification
 * goes on. True when the rollout stays aborted (the round ends there).
 */

import type { CurrentRollout } from '../../life/index.js';
import { abortWaiting } from '../../operator/index.js';
import type { PolicyContext } from './policy-context.js';

export async function followAborted(
  ctx: Pick<PolicyContext, 'rollouts' | 'store' | 'clock' | 'keys' | 'reconcileNow' | 'verifyNow'>,
  cur: CurrentRollout,
  how: { build: string; hash: string; pageSize: number; now: number },
): Promise<boolean> {
  const { rollout, counts } = cur;
  if (rollout.phase !== 'aborted') return false;
  const released = rollout.releasedAt !== undefined || rollout.policyHash !== how.hash;
  if (released && rollout.build !== how.build) return false;
  const waiting = (counts.queued ?? 0) + (counts.waiting_retry ?? 0);
  if (waiting > 0) await abortWaiting(ctx, rollout, rollout.abortReason ?? 'aborted', how.now);
  if ((counts.reconciling ?? 0) > 0) await ctx.reconcileNow(rollout, how.now, how.pageSize);
  await ctx.verifyNow(cur, how.now, how.pageSize);
  return true;
}
