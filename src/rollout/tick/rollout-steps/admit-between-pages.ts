/**
 * Admission between two pages of a listing: during a rollout's first scan, the Collectors of each
 * page may start at once, rather than after the whole listing (at 4 requests/s, 100,000
 * Collectors take 25 s to list), within the room of the waves planned on the Collectors found so
 * far (a share of fewer is never more); during a listing pass, the slots of the tasks a page
 * showed ended are filled before the next page. Within the calendar, as every admission. Answers
 * the Collectors it admitted: their tasks take them off the listing, and a scan's walk steps back
 * for them so that it skips none of the rest.
 */
import { calendarState } from '../../../policy/calendar/calendar-state.js';
import { wavePlan } from '../../../policy/wave-limits.js';
import { admit, outsideWaves, progressWaves } from '../../admit/index.js';
import { COLLECTOR_STATES, type CollectorKey, keyOf, sumStates } from '../../collector/index.js';
import { admits } from '../../life/index.js';
import type { RolloutRound } from '../rollout-round.js';
import type { TickContext } from '../tick-context.js';
import { waitingNow } from './waiting-now.js';

export type BetweenPagesDeps = Pick<TickContext, 'store' | 'queue' | 'logger' | 'clock' | 'rollouts'>;

export async function admitBetweenPages(ctx: BetweenPagesDeps, round: RolloutRound): Promise<CollectorKey[]> {
  const { policy, draft } = round;
  const now = ctx.clock.now();
  const rollout = draft.view;
  if (!admits(rollout.phase)) return [];
  const open = calendarState(policy, now).open;
  const outside = await outsideWaves(ctx.store, rollout);
  // While the calendar is closed, only Collectors below minimumBuild may start.
  if (!open && outside.queued === 0) return [];
  const counts = await ctx.store.counts(rollout.id);
  const total = sumStates(counts, COLLECTOR_STATES) - outside.total;
  const plan = wavePlan(policy.waves, total, rollout.canaries, policy.analysis);
  const step = progressWaves({ plan, progress: rollout.wave, counts, now, outside });
  // A wave that ends (or must bake, await approval or its analysis) is moved by the round's own
  // step (move-waves.ts), which writes it: no admission before that.
  if (step.changed) return [];
  const slotsHeld = (await ctx.store.slotHolders(rollout.policy)).length;
  const admitted = await admit(ctx, {
    rollout,
    policy,
    counts,
    slotsHeld,
    now,
    room: step.room,
    ...(open ? {} : { onlyBelowMinimum: true }),
    belowMinimumQueued: outside.queued,
    waiting: new Set([...(await waitingNow(ctx, round)), ...round.probes]),
    lengths: round.lengths,
  });
  return admitted.records.map(keyOf);
}
