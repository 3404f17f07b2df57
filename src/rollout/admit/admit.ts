/**
 * The one admitter: the only way into a state that holds an in-flight slot. Every attempt of a
 * Collector, the first and every retry, comes through here, so that every rule applies to each:
 * - the rollout admits (running or converged: not halted, paused or superseded);
 * - the policy holds fewer than `maxInFlight` slots (taken atomically with the record's move), and,
 *   with `maxInFlightPerOrg`, the Collector's organization fewer than that (an organization at its
 *   cap is passed over: the next in the order of the others' take the free slots);
 * - the Collector's organization answers (its part of the rollout waits while it has a problem:
 *   orgs/org-health.ts);
 * - the Collector's maintenance window is open in its time zone, and its upgrade (the learned 95th
 *   percentile of its kind, OS × build distance, else of all, else taskTimeout) ends before it closes;
 * - the Collector's cohort is not quarantined (cohort-gate.ts; one that is moves to `quarantined`);
 * - no known issue of the build matches it (policy `knownIssues`; one that does moves to `skipped`
 *   or `manual` with the issue's note, and never gets a task for the build);
 * - first attempts only within the room the waves give (wave-progress.ts: a wave's cap, none while
 *   a wave bakes or awaits approval); retries belong to a wave already started and need no room.
 * Collectors found below the policy's `minimumBuild` go first, in a wave of their own
 * (outside-waves.ts): they need no wave room and no open window, and with `onlyBelowMinimum` (the
 * calendar closed: windows, freezes, schedule) they alone are admitted; the in-flight limit, the
 * phase (a halt, a pause), quarantines and known issues hold for them as for any.
 * Retries that are due come first (oldest due first), then queued Collectors, the longest expected
 * upgrade first (admit/upgrade-length.ts; below the minimum, then canaries, before all), in
 * discovery order among equals.
 * Each admitted Collector gets the job of its admission (src/queue/upgrade-job.ts).
 */
import type { Logger } from '../../lib/logger.js';
import { formatInstant } from '../../policy/calendar/format-instant.js';
import { nextWindowChange } from '../../policy/calendar/next-window-change.js';
import { windowFits } from '../../policy/calendar/window-fits.js';
import type { Policy } from '../../policy/schema.js';
import { enqueueUpgrades, jobFor, type UpgradeJobData, type UpgradeQueue } from '../../queue/upgrade-job.js';
import type { CollectorStore } from '../collector/index.js';
import {
  type CollectorRecord,
  knownIssueHold,
  type Move,
  orgOf,
  type StateCounts,
  transition,
  writeKnownIssueHolds,
} from '../collector/index.js';
import type { RolloutRecord } from '../life/index.js';
import { admits } from '../life/index.js';
import type { LengthModel } from './upgrade-length.js';

export interface AdmitDeps {
  store: CollectorStore;
  queue: UpgradeQueue;
  logger: Logger;
}

export interface AdmitInput {
  rollout: RolloutRecord;
  policy: Pick<Policy, 'windows' | 'maxInFlightPerOrg' | 'knownIssues'>;
  /** The calendar is closed: only Collectors below the policy's minimumBuild may start. */
  onlyBelowMinimum?: boolean;
  /** Collectors below the minimum still queued (outside-waves.ts): they need no wave room. */
  belowMinimumQueued?: number;
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
  /** What the rollout learned of its upgrades' lengths: the window fit asks for a Collector's kind's. */
  lengths?: LengthModel;
}

export interface Admitted {
  records: CollectorRecord[];
  /** Candidates held back because their upgrade would not fit in an open maintenance window. */
  heldByWindow: number;
  /** When the first of them can start, in words (`maintenance window opens at ...`). */
  windowDetail?: string;
}

const NONE: Admitted = { records: [], heldByWindow: 0 };
/** Windows of candidates read at most in one admission when organizations' Collectors are passed over. */
const MAX_CANDIDATE_WINDOWS = 10;

/** Admits what the rules allow; returns the Collectors admitted, and those their windows held. */
export async function admit(deps: AdmitDeps, input: AdmitInput): Promise<Admitted> {
  const { rollout, policy, counts, now } = input;
  if (!admits(rollout.phase)) return NONE;
  const free = rollout.maxInFlight - input.slotsHeld;
  if (free <= 0) return NONE;
  const urgent = input.belowMinimumQueued ?? 0;
  let newRoom = input.onlyBelowMinimum ? 0 : Math.min(input.room, (counts.queued ?? 0) - urgent);
  if (newRoom <= 0 && urgent <= 0 && (counts.waiting_retry ?? 0) === 0) return NONE;
  const chosen: CollectorRecord[] = [];
  // An upgrade starts only if it is expected to end before its window closes.
  const expected = rollout.expectedMs ?? rollout.settings.taskTimeoutMs;
  const held: CollectorRecord[] = [];
  const fits = (r: CollectorRecord) => {
    const ok = windowFits(policy.windows, now, r.timeZone, input.lengths?.p95(r.kind) ?? expected);
    if (!ok) held.push(r);
    return ok;
  };
  // Collectors of a quarantined cohort (cohort-gate.ts) are held, not admitted.
  const quarantined = new Set((rollout.quarantined ?? []).map((q) => q.cohort));
  const hold: Move[] = [];
  // Moves of Collectors a known issue holds: from queued (never started: outside the waves) and from a retry.
  const known = { skip: [] as Move[], manual: [] as Move[], retried: [] as Move[] };
  const waiting = input.waiting ?? new Set<string>();
  const probing = new Set(input.probes ?? []);
  // With maxInFlightPerOrg, each organization's slots held now: one at its cap is passed over
  // (its Collectors at the head of the order must not keep the others' from free slots).
  const perOrg = policy.maxInFlightPerOrg;
  const orgHeld = new Map<string, number>();
  if (perOrg)
    for (const h of await deps.store.slotHolders(rollout.policy))
      orgHeld.set(h.org, (orgHeld.get(h.org) ?? 0) + 1);
  const window = Math.max(free * 4, 100);
  for (let offset = 0, page = 0; chosen.length < free && page < MAX_CANDIDATE_WINDOWS; page++) {
    const candidates = await deps.store.candidates(rollout.id, now, window, offset);
    offset += window;
    let passedOver = 0;
    for (const r of candidates) {
      if (chosen.length >= free) break;
      const org = orgOf(r);
      if (waiting.has(org) || (perOrg && (orgHeld.get(org) ?? 0) >= perOrg)) {
        passedOver++;
        continue;
      }
      if (consider(r)) orgHeld.set(org, (orgHeld.get(org) ?? 0) + 1);
    }
    // Another window only when this one was full and some were passed over for their organization.
    if (candidates.length < window || passedOver === 0) break;
  }
  function consider(r: CollectorRecord): boolean {
    if (input.onlyBelowMinimum && !r.belowMinimum) return false;
    const org = orgOf(r);
    if (input.probes?.has(org)) {
      // One Collector of the organization is its probe; the others wait for its answer.
      if (!probing.has(org)) return false;
      probing.delete(org);
    }
    if (r.cohort && quarantined.has(r.cohort)) {
      const t = transition(
        r,
        { type: 'quarantine', message: `cohort ${r.cohort} quarantined` },
        { now, settings: rollout.settings },
      );
      if (t.ok) hold.push(t.move);
      return false;
    }
    const held = knownIssueHold(
      policy,
      r,
      { ...r, org, collectorVersion: r.from },
      { now, settings: rollout.settings },
    );
    if (held) {
      if (held.move) (r.state === 'queued' ? known[held.action] : known.retried).push(held.move);
      return false;
    }
    if (r.state === 'waiting_retry' && (r.nextAttemptAt ?? 0) <= now && (r.belowMinimum || fits(r))) {
      chosen.push(r);
      return true;
    }
    if (r.state === 'queued' && r.belowMinimum) {
      chosen.push(r);
      return true;
    }
    if (r.state === 'queued' && newRoom > 0 && fits(r)) {
      chosen.push(r);
      newRoom--;
      return true;
    }
    return false;
  }
  const settle = async (moves: Move[]) => {
    if (moves.length === 0) return;
    // The store tells the outcomes it writes (the metrics count them there).
    await deps.store.apply(rollout.id, moves, {});
  };
  await settle(hold);
  await writeKnownIssueHolds(deps.store, rollout.id, known);
  await settle(known.retried);
  const heldByWindow = held.length;
  const windowDetail = heldByWindow ? windowWait(policy.windows, now, held[0] as CollectorRecord) : undefined;
  if (chosen.length === 0) return { records: [], heldByWindow, ...(windowDetail ? { windowDetail } : {}) };
  const moves: Move[] = [];
  for (const r of chosen) {
    // Below the minimum: a wave of their own, not judged as one of the policy's waves.
    const wave = r.belowMinimum ? {} : { wave: rollout.wave.index };
    const t = transition(r, { type: 'admit', ...wave }, { now, settings: rollout.settings });
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
