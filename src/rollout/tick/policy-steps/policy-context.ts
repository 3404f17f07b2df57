/**
 * The context of one policy's round (scheduler.ts, tickPolicy): the tick's, with the scheduler's
 * parts that decide which rollout the policy drives (its organizations' service, the chooser of
 * builds, the targets not offered, the one-off pins) and the tick's live rollouts. Each step of the
 * round (policy-steps/) declares the few members it needs.
 */
import type { CurrentRollout, RolloutRecord } from '../../life/index.js';
import type { OneOffPolicies } from '../../one-off/index.js';
import type { OrgService } from '../org-service.js';
import type { TargetChooser } from '../target-chooser.js';
import type { TickContext } from '../tick-context.js';
import type { UnofferedTargets } from '../unoffered-targets.js';

export interface PolicyContext extends TickContext {
  orgService: OrgService;
  chooser: TargetChooser;
  unoffered: UnofferedTargets;
  oneOffs: OneOffPolicies;
  /** The live rollouts of this tick (told of an organization's problem); a rollout started joins them. */
  live: RolloutRecord[];
  /** Resolves tasks of unknown id of a rollout that no longer moves on, now and then. */
  reconcileNow(rollout: RolloutRecord, now: number, pageSize: number): Promise<void>;
  /** Verification and the watching of tasks go on in a rollout that admits nothing. */
  verifyNow(cur: CurrentRollout, now: number, pageSize: number): Promise<void>;
}
