/**
 * Step 3 of a round: the gates (gates/), while the rollout admits. The failure gate (per type, per
 * wave and overall) halts the rollout, aborts it, or halts it and rolls the wave back; the cohort
 * gate quarantines a cohort that fails significantly above its limit (the counts read again).
 */
import { judgeCohortGate, tripFailureGate } from '../../gates/index.js';
import { admits } from '../../life/index.js';
import type { RolloutRound } from '../rollout-round.js';
import type { TickContext } from '../tick-context.js';

type GateStepDeps = Pick<TickContext, 'store' | 'rollouts' | 'logger' | 'queue' | 'clock'>;

export async function gateStep(ctx: GateStepDeps, round: RolloutRound): Promise<void> {
  const { draft, policy, now } = round;
  if (admits(draft.view.phase)) await tripFailureGate(ctx, draft, policy.failureGate, round.counts, now);
  if (admits(draft.view.phase) && policy.cohorts && (await judgeCohortGate(ctx, draft, policy.cohorts, now)))
    round.counts = await ctx.store.counts(draft.view.id);
}
