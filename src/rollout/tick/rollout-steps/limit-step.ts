/**
 * Step 5 of a round: the in-flight limit as the policy says it for the Collectors found so far
 * (a percentage grows with them), kept on the rollout for its admissions.
 */
import { maxInFlightOf, resolveMaxInFlight } from '../../../policy/max-in-flight.js';
import { COLLECTOR_STATES, sumStates } from '../../collector/index.js';
import type { RolloutRound } from '../rollout-round.js';

export function limitStep(round: RolloutRound): void {
  const { draft, policy } = round;
  const limit = resolveMaxInFlight(maxInFlightOf(policy), sumStates(round.counts, COLLECTOR_STATES));
  if (limit !== draft.view.maxInFlight) draft.set({ maxInFlight: limit });
}
