/**
 * Step 4 of a round: the waves (move-waves.ts), while the rollout admits: a completed wave bakes,
 * runs its analysis gate, awaits approval, or opens the next. Leaves the room the waves allow;
 * a bake's end and the next retry due are rounds of their own.
 */
import { admits } from '../../life/index.js';
import { moveWaves } from '../move-waves.js';
import type { RolloutRound } from '../rollout-round.js';
import { dueAt, type TickContext } from '../tick-context.js';

export async function waveStep(
  ctx: Pick<TickContext, 'rollouts' | 'logger' | 'store' | 'memory'>,
  round: RolloutRound,
): Promise<void> {
  const { draft, now } = round;
  round.room = admits(draft.view.phase) ? await moveWaves(ctx, draft, round, round.counts) : 0;
  if (draft.view.wave.waitingFor === 'bake') dueAt(ctx.memory, draft.view.wave.bakeUntil);
  if (round.nextRetryAt !== undefined && round.nextRetryAt > now) dueAt(ctx.memory, round.nextRetryAt);
}
