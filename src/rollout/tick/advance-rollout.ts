/**
 * One scheduler tick of one policy's current rollout, as an ordered list of steps (argo-rollouts'
 * reconcile: each facet a file of its own over one context, the new status gathered during the
 * pass and written once). Each step (rollout-steps/) declares the few members of the tick's context it
 * needs, and reads and leaves what the round carries (rollout-round.ts):
 * 1. the scan of the listings when due (discovery, catch-up, evidence for tasks of unknown id);
 * 2. whether the rollout watches its tasks, and a pass over the listings when due;
 * 3. the gates: the failure gate halts, aborts or rolls back, the cohort gate quarantines;
 * 4. the waves: a completed wave bakes, runs its analysis gate, awaits approval, or opens the next;
 * 5. the in-flight limit for the Collectors found so far;
 * 6. the calendar and the one admitter (Collectors below `minimumBuild` first, even while closed);
 * 7. convergence (or reopening);
 * 8. durations learned, failures reported in bulk.
 * A phase move and its event are one atomic write; the rest of the round gathers a typed patch on
 * the rollout's draft, written once at the end.
 */
import { learnDurations } from './learn-first-read.js';
import { reportFailures } from './report-failures.js';
import { openRound } from './rollout-round.js';
import { admitStep } from './rollout-steps/admit-step.js';
import { convergeStep } from './rollout-steps/converge-step.js';
import { gateStep } from './rollout-steps/gate-step.js';
import { limitStep } from './rollout-steps/limit-step.js';
import { listingStep } from './rollout-steps/listing-step.js';
import { scanStep } from './rollout-steps/scan-step.js';
import { waveStep } from './rollout-steps/wave-step.js';
import type { RolloutPass, TickContext } from './tick-context.js';

export async function advanceRollout(ctx: TickContext, pass: RolloutPass): Promise<void> {
  const round = await openRound(ctx, pass);
  await scanStep(ctx, round);
  await listingStep(ctx, round);
  await gateStep(ctx, round);
  await waveStep(ctx, round);
  limitStep(round);
  await admitStep(ctx, round);
  await convergeStep(ctx, round);
  await learnDurations(ctx, round.draft, round.counts);
  await reportFailures(ctx, round.draft, round.counts, round.now);
  await round.draft.flush(ctx.rollouts, round.now, round.log);
}
