/**
 * The organizations that wait now: the round's (problems, operators' pauses as the round began)
 * and those an operator paused since (`pause --org` during the round's passes), read again before
 * each admission, so that nothing of an organization starts once its pause has been answered.
 */
import type { RolloutPass, TickContext } from '../tick-context.js';

export async function waitingNow(
  ctx: Pick<TickContext, 'rollouts'>,
  pass: Pick<RolloutPass, 'draft' | 'waiting'>,
): Promise<ReadonlySet<string>> {
  const stored = await ctx.rollouts.get(pass.draft.view.id);
  const paused = (stored?.pausedOrgs ?? []).map((p) => p.org);
  return paused.length ? new Set([...pass.waiting, ...paused]) : pass.waiting;
}
