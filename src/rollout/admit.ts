/**
 * The one admitter: the only way into a state that holds an in-flight slot. Every attempt of a
 * Collector, the first and every retry, comes through here, so that every rule applies to each:
 * - the rollout admits (running or converged: not halted, paused or superseded);
 * - the policy holds fewer than `maxInFlight` slots (taken atomically with the record's move);
 * - the Collector's maintenance window is open in its time zone;
 * - first attempts only within the current wave: at a wave's boundary the next wave waits until
 *   every Collector of the earlier ones has an outcome; retries belong to a wave already started.
 * Retries that are due come first (oldest due first), then queued Collectors in discovery order.
 * Each admitted Collector gets the job of its admission (src/queue/upgrade-job.ts).
 */
import type { Logger } from '../lib/logger.js';
import { isWindowOpen } from '../policy/is-window-open.js';
import type { Policy } from '../policy/schema.js';
import { waveLimits } from '../policy/wave-limits.js';
import { enqueueUpgrades, type UpgradeJobData, type UpgradeQueue } from '../queue/upgrade-job.js';
import {
  COLLECTOR_STATES,
  type CollectorRecord,
  type Move,
  STARTED_ACTIVE_STATES,
  type StateCounts,
  sumStates,
  transition,
} from './collector-state.js';
import type { CollectorStore } from './collector-store.js';
import { admits } from './rollout-phase.js';
import type { RolloutRecord } from './rollout-store.js';

export interface AdmitDeps {
  store: CollectorStore;
  queue: UpgradeQueue;
  logger: Logger;
}

export interface AdmitInput {
  rollout: RolloutRecord;
  policy: Pick<Policy, 'waves' | 'windows'>;
  counts: StateCounts;
  /** Slots of the rollout's policy held now (by all its rollouts). */
  slotsHeld: number;
  now: number;
}

/** How many first attempts the waves allow now. */
export function waveRoom(waves: Policy['waves'], counts: StateCounts): number {
  const total = sumStates(counts, COLLECTOR_STATES);
  const queued = counts.queued ?? 0;
  if (queued === 0) return 0;
  const started = total - queued;
  const limits = waveLimits(waves, total);
  // At a wave's boundary, the next wave waits until every Collector of the earlier ones is done.
  if (limits.includes(started) && sumStates(counts, STARTED_ACTIVE_STATES) > 0) return 0;
  return (limits.find((l) => l > started) ?? total) - started;
}

/** Admits what the rules allow; returns the Collectors admitted. */
export async function admit(deps: AdmitDeps, input: AdmitInput): Promise<CollectorRecord[]> {
  const { rollout, policy, counts, now } = input;
  if (!admits(rollout.phase)) return [];
  const free = rollout.maxInFlight - input.slotsHeld;
  if (free <= 0) return [];
  let newRoom = waveRoom(policy.waves, counts);
  if (newRoom === 0 && (counts.waiting_retry ?? 0) === 0) return [];
  const chosen: CollectorRecord[] = [];
  const open = (r: CollectorRecord) => isWindowOpen(policy.windows, now, r.timeZone);
  for (const r of await deps.store.candidates(rollout.id, now, Math.max(free * 4, 100))) {
    if (chosen.length >= free) break;
    if (r.state === 'waiting_retry' && (r.nextAttemptAt ?? 0) <= now && open(r)) chosen.push(r);
    else if (r.state === 'queued' && newRoom > 0 && open(r)) {
      chosen.push(r);
      newRoom--;
    }
  }
  if (chosen.length === 0) return [];
  const moves: Move[] = [];
  for (const r of chosen) {
    const t = transition(r, { type: 'admit' }, { now, settings: rollout.settings });
    if (t.ok) moves.push(t.move);
  }
  const outcomes = await deps.store.apply(rollout.id, moves, { limit: rollout.maxInFlight });
  const admitted = moves.filter((_, i) => outcomes[i] === 'written').map((m) => m.next);
  const jobs: UpgradeJobData[] = admitted.map((r) => ({
    rolloutId: rollout.id,
    collectorId: r.id,
    admission: r.admissions,
  }));
  await enqueueUpgrades(deps.queue, jobs);
  if (admitted.length) deps.logger.debug({ rollout: rollout.id, admitted: admitted.length }, 'admitted');
  return admitted;
}
