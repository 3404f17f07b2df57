/**
 * One rollout's round: its pass (tick-context.ts) as the steps of advance-rollout.ts go through
 * it. A step reads what it needs of the round and leaves what the next ones read (the counts read
 * again after a scan, the wave's room, whether the scan saw the whole fleet); the draft gathers
 * the rollout's patch, written once at the round's end.
 */
import type { Logger } from '../../lib/logger.js';
import type { LengthModel } from '../admit/index.js';
import { ACTIVE_STATES, sumStates } from '../collector/index.js';
import { learnLengths, longestFirst } from './learn-lengths.js';
import type { RolloutPass, TickContext } from './tick-context.js';

/** What a scan of the rollout's listings did this round (rollout-steps/scan-step.ts). */
export interface ScanOutcome {
  /** It ran, and every organization's listing was read whole. */
  ran: boolean;
  /** Collectors it added or caught up with. */
  added: number;
  /** No Collector was active when it began. */
  idle: boolean;
}

export interface RolloutRound extends RolloutPass {
  log: Logger;
  /** The queue goes longest first (learn-lengths.ts). */
  longest: boolean;
  /** What the rollout learned of its upgrades' lengths. */
  lengths: LengthModel;
  scan: ScanOutcome;
  /** Collectors active after the scan and the listing pass (convergence reads it). */
  active: number;
  /** First attempts the waves allow now (move-waves.ts). */
  room: number;
}

/** The round of a pass: the lengths its admissions read, learned first. */
export async function openRound(
  ctx: Pick<TickContext, 'store' | 'memory' | 'logger'>,
  pass: RolloutPass,
): Promise<RolloutRound> {
  const id = pass.draft.view.id;
  const longest = longestFirst(pass.policy, pass.draft.view, pass.counts);
  const lengths = await learnLengths(ctx, id, pass.counts, longest);
  const log = ctx.logger.child({ rollout: id });
  const idle = sumStates(pass.counts, ACTIVE_STATES) === 0;
  return { ...pass, log, longest, lengths, scan: { ran: false, added: 0, idle }, active: 0, room: 0 };
}

/**
 * The counts, and the slots the policy holds, read again: a scan and a listing pass admit between
 * their pages, so both change under the round.
 */
export async function rereadRound(ctx: Pick<TickContext, 'store'>, round: RolloutRound): Promise<void> {
  round.counts = await ctx.store.counts(round.draft.view.id);
  round.slotsHeld = (await ctx.store.slotHolders(round.policy.name)).length;
}
