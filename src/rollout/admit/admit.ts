/**
 * The one admitter: the only way into a state that holds an in-flight slot. Every attempt of a
 * Collector, the first and every retry, comes through here, so that every rule applies to each:
 * - the rollout admits (running or converged: not halted, paused or superseded);
 * - the policy holds fewer than `maxInFlight` slots (taken atomically with the record's move), and,
 *   with `maxInFlightPerOrg`, the Collector's organization fewer than that;
 * - the Collector's organization answers (its part of the rollout waits while it has a problem:
 *   orgs/org-health.ts);
 * - the Collector's maintenance window is open in its time zone, and its upgrade (the rollout's
 *   learned 95th percentile, else taskTimeout) ends before it closes;
 * - the Collector's cohort is not quarantined (cohort-gate.ts; one that is moves to `quarantined`);
 * - first attempts only within the room the waves give (wave-progress.ts: a wave's cap, none while
 *   a wave bakes or awaits approval); retries belong to a wave already started and need no room.
 * Retries that are due come first (oldest due first), then queued Collectors in discovery order.
 * Each admitted Collector gets the job of its admission (src/queue/upgrade-job.ts).
 */
import type { Logger } from '../../lib/logger.js';
import { formatInstant } from '../../policy/calendar/format-instant.js';
import { nextWindowChange } from '../../policy/calendar/next-window-change.js';
import { windowFits } from '../../policy/calendar/window-fits.js';
import type { Policy } from '../../policy/schema.js';
import { enqueueUpgrades, jobFor, type UpgradeJobData, type UpgradeQueue } from '../../queue/upgrade-job.js';
import type { CollectorStore } from '../collector/index.js';
import { type CollectorRecord, type Move, orgOf, type StateCounts, transition } from '../collector/index.js';
import type { RolloutRecord } from '../life/index.js';
import { admits } from '../life/index.js';

export interface AdmitDeps {
  store: CollectorStore;
  queue: UpgradeQueue;
  logger: Logger;
  /** A Collector reached an outcome (here: held by its cohort's quarantine). */
  onOutcome?(rolloutId: string, record: CollectorRecord): void;
}

export interface AdmitInput {
  rollout: RolloutRecord;
  policy: Pick<Policy, 'windows' | 'maxInFlightPerOrg'>;
  /** Organizations whose part waits: their Collectors are not admitted now. */
  waiting?: ReadonlySet<string>;
  /** Organizations whose problem is probed by one create now: one Collector of each is let through. */
  probes?: ReadonlySet<string>;
  counts: StateCounts;
  /** First attempts the waves allow now (wave-progress.ts); retries need no room. */
  room: number;
  /** Slots of the rollout's policy held now (by all its rollouts). */
  slotsHeld: number;
  now: number;
}

export interface Admitted {
  records: CollectorRecord[];
  /** Candidates held back because their upgrade would not fit in an open maintenance window. */
  heldByWindow: number;
  /** When the first of them can start, in words (`maintenance window opens at ...`). */
  windowDetail?: string;
}

const NONE: Admitted = { records: [], heldByWindow: 0 };

/** Admits what the rules allow; returns the Collectors admitted, and those their windows held. */
export async function admit(deps: AdmitDeps, input: AdmitInput): Promise<Admitted> {
  const { rollout, policy, counts, now } = input;
  if (!admits(rollout.phase)) return NONE;
  const free = rollout.maxInFlight - input.slotsHeld;
  if (free <= 0) return NONE;
  let newRoom = Math.min(input.room, counts.queued ?? 0);
  if (newRoom <= 0 && (counts.waiting_retry ?? 0) === 0) return NONE;
  const chosen: CollectorRecord[] = [];
  // An upgrade starts only if it is expected to end before its window closes.
  const expected = rollout.expectedMs ?? rollout.settings.taskTimeoutMs;
  const held: CollectorRecord[] = [];
  const fits = (r: CollectorRecord) => {
    const ok = windowFits(policy.windows, now, r.timeZone, expected);
    if (!ok) held.push(r);
    return ok;
  };
  // Collectors of a quarantined cohort (cohort-gate.ts) are held, not admitted.
  const quarantined = new Set((rollout.quarantined ?? []).map((q) => q.cohort));
  const hold: Move[] = [];
  const waiting = input.waiting ?? new Set<string>();
  const probing = new Set(input.probes ?? []);
  for (const r of await deps.store.candidates(rollout.id, now, Math.max(free * 4, 100))) {
    if (chosen.length >= free) break;
    const org = orgOf(r);
    if (waiting.has(org)) continue;
    if (input.probes?.has(org)) {
      // One Collector of the organization is its probe; the others wait for its answer.
      if (!probing.has(org)) continue;
      probing.delete(org);
    }
    if (r.cohort && quarantined.has(r.cohort)) {
      const t = transition(
        r,
        { type: 'quarantine', message: `cohort ${r.cohort} quarantined` },
        { now, settings: rollout.settings },
      );
      if (t.ok) hold.push(t.move);
      continue;
    }
    if (r.state === 'waiting_retry' && (r.nextAttemptAt ?? 0) <= now && fits(r)) chosen.push(r);
    else if (r.state === 'queued' && newRoom > 0 && fits(r)) {
      chosen.push(r);
      newRoom--;
    }
  }
  if (hold.length) {
    const outcomes = await deps.store.apply(rollout.id, hold);
    hold.forEach((m, i) => {
      if (outcomes[i] === 'written') deps.onOutcome?.(rollout.id, m.next);
    });
  }
  const heldByWindow = held.length;
  const windowDetail = heldByWindow ? windowWait(policy.windows, now, held[0] as CollectorRecord) : undefined;
  if (chosen.length === 0) return { records: [], heldByWindow, ...(windowDetail ? { windowDetail } : {}) };
  const moves: Move[] = [];
  for (const r of chosen) {
    const t = transition(r, { type: 'admit', wave: rollout.wave.index }, { now, settings: rollout.settings });
    if (t.ok) moves.push(t.move);
  }
  const outcomes = await deps.store.apply(rollout.id, moves, {
    limit: rollout.maxInFlight,
    ...(policy.maxInFlightPerOrg ? { orgLimit: policy.maxInFlightPerOrg } : {}),
  });
  const admitted = moves.filter((_, i) => outcomes[i] === 'written').map((m) => m.next);
  const jobs: UpgradeJobData[] = admitted.map((r) => jobFor(rollout.id, r));
  await enqueueUpgrades(deps.queue, jobs);
  if (admitted.length) deps.logger.debug({ rollout: rollout.id, admitted: admitted.length }, 'admitted');
  return { records: admitted, heldByWindow, ...(windowDetail ? { windowDetail } : {}) };
}

/** `maintenance window closed until 2026-06-05 22:00 Europe/Berlin` for a Collector held back. */
function windowWait(windows: Policy['windows'], now: number, r: CollectorRecord): string {
  const change = nextWindowChange(windows, now, r.timeZone);
  if (change.open) return 'the open maintenance windows close before an upgrade would end';
  return change.until === undefined
    ? 'no maintenance window opens within 8 days'
    : `maintenance window closed until ${formatInstant(change.until, change.timeZone)}`;
}
