/**
 * The rollout settings most tests start their rollouts with (the daemon's defaults of an earlier
 * release: first poll after a minute, a 35-minute task time-out, three tries for a Collector not
 * alive). A test that needs other values spreads this and names only what differs.
 */
import type { RolloutSettings } from '../../src/rollout/life/index.js';

export const TEST_SETTINGS: Readonly<RolloutSettings> = {
  pollInitialMs: 60_000,
  pollMaxMs: 300_000,
  pollJitter: 0.2,
  taskTimeoutMs: 35 * 60_000,
  notAliveAttempts: 3,
  notAliveBackoffMs: 600_000,
  errorAttempts: 3,
  errorBackoffMs: 60_000,
  transientAttempts: 5,
  transientBackoffMs: 10_000,
  maxBackoffMs: 3_600_000,
};
