/**
 * What `GET /eta` answers (get-eta.ts computes it): each unfinished rollout's time left. Types
 * only, with no import, so that the web console (src/console, built for the browser) reads the
 * very shape the server writes.
 */
export interface RolloutEta {
  id: string;
  /** Clock ms of upgrades left; absent without a duration measured yet or with nothing left. */
  etaMs?: number;
  /** The median duration (clock ms) and how many durations it is of. */
  medianMs?: number;
  samples: number;
  maxInFlight: number;
  /** What the rollout waits for now, not counted in `etaMs` (a pause, an approval, a bake...). */
  waitingFor?: string;
  parts: { org: string; etaMs?: number }[];
}

/** The body of `GET /eta`. */
export interface EtaAnswer {
  rollouts: RolloutEta[];
}
