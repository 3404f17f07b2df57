/**
 * Step 7 of a round: convergence, or reopening. A running rollout converges when nothing is
 * active and a scan that ran this round, over a fleet already idle, added nothing; an organization
 * whose part waits is not known, so its rollout has not converged. A converged rollout with
 * Collectors active again (a scan caught up with some) runs again.
 */
import type { RolloutRound } from '../rollout-round.js';
import type { TickContext } from '../tick-context.js';

export async function convergeStep(ctx: Pick<TickContext, 'rollouts'>, round: RolloutRound): Promise<void> {
  const { draft, now, counts, active, scan, log } = round;
  const phase = draft.view.phase;
  if (
    phase === 'running' &&
    active === 0 &&
    scan.ran &&
    scan.added === 0 &&
    scan.idle &&
    round.waiting.size === 0
  ) {
    const news = [{ type: 'rollout.converged' as const, source: 'scheduler' as const, counts }];
    if (await draft.move(ctx.rollouts, 'converge', now, { news })) log.info({ counts }, 'rollout converged');
  } else if (phase === 'converged' && active > 0) {
    const news = [{ type: 'rollout.reopened' as const, source: 'scheduler' as const, counts, active }];
    if (await draft.move(ctx.rollouts, 'reopen', now, { news }))
      log.info({ counts }, 'rollout running again');
  }
}
