/**
 * Step 6 of a round: the calendar (schedule and freezes) and the one admitter (admit/admit.ts).
 * Open: free slots filled within what the waves allow, each Collector only when its upgrade fits
 * in its maintenance window. Closed: only Collectors below the policy's `minimumBuild`, in a wave
 * of their own (admit/outside-waves.ts), and a schedule that ended with `abort` aborts the
 * rollout. What holds the rollout back is kept on it (`holding`).
 */
import { calendarState } from '../../../policy/calendar/calendar-state.js';
import { type AdmitInput, admit } from '../../admit/index.js';
import { keyOf, orgOf } from '../../collector/index.js';
import { admits } from '../../life/index.js';
import { abortRollout } from '../../operator/index.js';
import type { RolloutRound } from '../rollout-round.js';
import type { TickContext } from '../tick-context.js';
import { waitingNow } from './waiting-now.js';

type AdmitStepDeps = Pick<TickContext, 'store' | 'queue' | 'logger' | 'clock' | 'rollouts' | 'probed'>;

export async function admitStep(ctx: AdmitStepDeps, round: RolloutRound): Promise<void> {
  const { draft, policy, now } = round;
  const id = draft.view.id;
  const calendar = calendarState(policy, now);
  const holding: string[] = [];
  // Below minimumBuild: a wave of their own, admitted first, whatever the calendar says.
  const belowMinimumQueued = draft.view.belowMinimum ? await ctx.store.queuedBelowMinimum(id) : 0;
  const input = async (): Promise<AdmitInput> => ({
    rollout: draft.view,
    policy,
    counts: round.counts,
    slotsHeld: round.slotsHeld,
    // The time of the admission itself (the round's passes may have taken seconds).
    now: ctx.clock.now(),
    room: round.room,
    belowMinimumQueued,
    waiting: await waitingNow(ctx, round),
    probes: round.probes,
    lengths: round.lengths,
  });
  if (!calendar.open) {
    holding.push(calendar.detail);
    if (belowMinimumQueued > 0 || (draft.view.belowMinimum ?? 0) > 0)
      await admit(ctx, { ...(await input()), room: 0, onlyBelowMinimum: true });
    if (
      calendar.reason === 'after_schedule' &&
      calendar.endBehavior === 'abort' &&
      admits(draft.view.phase)
    ) {
      const how = { actor: 'the schedule', reason: `its schedule ended (${calendar.detail})` };
      const aborted = await abortRollout(ctx, draft.view, {
        ...how,
        source: 'scheduler',
        counts: round.counts,
      });
      if (aborted) draft.took(aborted.rollout);
    }
  } else {
    const admitted = await admit(ctx, await input());
    for (const r of admitted.records)
      if (round.probes.has(orgOf(r))) await ctx.probed(orgOf(r), id, String(keyOf(r)));
    if (admitted.heldByWindow > 0 && admitted.records.length === 0)
      holding.push(admitted.windowDetail ?? 'maintenance windows closed');
  }
  if ((draft.view.holding ?? '') !== holding.join('; ')) draft.set({ holding: holding.join('; ') });
}
