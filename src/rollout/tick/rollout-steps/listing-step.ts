/**
 * Step 2 of a round: whether the rollout watches its tasks through the listings (watch-step.ts),
 * and a pass over the listings when watching or verification is due; the slots it sees freed are
 * filled page by page, not after the pass. Leaves the Collectors active after it.
 */
import { ACTIVE_STATES, sumStates } from '../../collector/index.js';
import { type RolloutRound, rereadRound } from '../rollout-round.js';
import type { TickContext } from '../tick-context.js';
import { decideWatch, listingDue } from '../watch-step.js';
import { admitBetweenPages } from './admit-between-pages.js';

type ListingStepDeps = Pick<
  TickContext,
  'store' | 'clock' | 'logger' | 'onTaskEnded' | 'memory' | 'queue' | 'rollouts' | 'orgFailed'
>;

export async function listingStep(ctx: ListingStepDeps, round: RolloutRound): Promise<void> {
  const { draft, policy, now } = round;
  await decideWatch(ctx, draft, round.counts, policy.pageSize, now);
  const admitNow = () => admitBetweenPages(ctx, round);
  if (await listingDue(ctx, draft.view, round.counts, round.orgs, policy.pageSize, now, admitNow))
    await rereadRound(ctx, round);
  round.active = sumStates(round.counts, ACTIVE_STATES);
  if (round.active > 0) ctx.memory.idleScanned.delete(draft.view.id);
}
