/**
 * The cohort gate of a rollout (policy `cohorts`), judged by the scheduler at each tick from the
 * counts per cohort and state that the store keeps (one HGETALL): failures are the states the
 * failure gate counts as bad (failed, timed_out, error, unhealthy), outcomes those plus
 * succeeded and verifying (a task ended well, its verification under way). A cohort that judge-cohorts.ts finds significantly above the limit is quarantined:
 * recorded on the rollout first (so the admitter holds its Collectors from then on, whatever
 * happens next), then its waiting Collectors (queued, waiting_retry) move to `quarantined`, and
 * a `cohort.quarantined` event says so. Tasks under way finish. An operator's
 * `retry --only quarantined` releases the cohort for the rest of the rollout.
 */
import type { Cohorts } from '../../policy/cohorts.js';
import {
  COLLECTOR_STATES,
  type CollectorStore,
  gateClass,
  type Move,
  type StateCounts,
  transition,
} from '../collector/index.js';
import type { CohortQuarantine, RolloutDraft, RolloutStore } from '../life/index.js';
import { type CohortStats, judgeCohorts } from './judge-cohorts.js';

const BAD_STATES = COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad');
const BATCH = 1000;

export interface CohortGateDeps {
  store: CollectorStore;
  rollouts: RolloutStore;
}

/** Failures and outcomes of each cohort, from its counts per state. */
export function cohortStats(counts: ReadonlyMap<string, StateCounts>): Map<string, CohortStats> {
  const out = new Map<string, CohortStats>();
  for (const [key, c] of counts) {
    const failures = BAD_STATES.reduce((n, s) => n + (c[s] ?? 0), 0);
    // A Collector under verification finished its task well: counted with the successes. Left
    // out, every success waited the verification's bake while a failure (which ends at its first
    // step) counted at once, and a healthy cohort's first outcomes were mostly its failures.
    // Counted, the bound stays a lower bound: a verified Collector can only add failures later.
    out.set(key, { failures, outcomes: failures + (c.succeeded ?? 0) + (c.verifying ?? 0) });
  }
  return out;
}

/**
 * Judges the cohorts; quarantines those found bad. The quarantine and its events are written
 * first, in one step (so the admitter holds the cohort's Collectors from then on, whatever
 * happens next; each event counts the Collectors that wait then, which are the ones held);
 * then the waiting Collectors move to `quarantined`. Returns the Collectors held now.
 */
export async function judgeCohortGate(
  deps: CohortGateDeps,
  draft: RolloutDraft,
  cohorts: Cohorts,
  now: number,
): Promise<number> {
  const rollout = draft.view;
  const done = new Set([
    ...(rollout.quarantined ?? []).map((q) => q.cohort),
    ...(rollout.cohortsReleased ?? []),
  ]);
  const perCohort = await deps.store.cohortCounts(rollout.id);
  const stats = cohortStats(perCohort);
  for (const key of done) stats.delete(key);
  const { quarantined } = judgeCohorts(stats, cohorts);
  if (quarantined.length === 0) return 0;
  const added: CohortQuarantine[] = quarantined.map((q) => {
    const c = perCohort.get(q.key) ?? {};
    return { cohort: q.key, reason: q.reason, at: now, held: (c.queued ?? 0) + (c.waiting_retry ?? 0) };
  });
  const written = await deps.rollouts.write(
    rollout,
    {
      patch: { quarantined: [...(rollout.quarantined ?? []), ...added] },
      news: added.map((q) => ({
        type: 'cohort.quarantined' as const,
        source: 'gate' as const,
        cohort: q.cohort,
        held: q.held,
        reason: q.reason,
      })),
    },
    now,
  );
  if (!written) return 0;
  draft.took(written.rollout);
  const held = await holdCohorts(deps, rollout, new Set(added.map((q) => q.cohort)), now);
  return [...held.values()].reduce((a, b) => a + b, 0);
}

/** Moves the waiting Collectors of `cohorts` to `quarantined`; returns how many per cohort. */
export async function holdCohorts(
  deps: Pick<CohortGateDeps, 'store'>,
  rollout: Pick<RolloutDraft['view'], 'id' | 'settings'>,
  cohorts: ReadonlySet<string>,
  now: number,
): Promise<Map<string, number>> {
  const { store } = deps;
  const held = new Map<string, number>();
  for (const index of ['queued', 'retries'] as const) {
    const ids = await store.indexed(rollout.id, index);
    for (let i = 0; i < ids.length; i += BATCH) {
      const records = await store.getMany(rollout.id, ids.slice(i, i + BATCH));
      const moves: Move[] = [];
      for (const r of records.values()) {
        if (!r.cohort || !cohorts.has(r.cohort)) continue;
        const t = transition(
          r,
          { type: 'quarantine', message: `cohort ${r.cohort} quarantined` },
          { now, settings: rollout.settings },
        );
        if (t.ok) moves.push(t.move);
      }
      const outcomes = await store.apply(rollout.id, moves);
      moves.forEach((m, j) => {
        if (outcomes[j] !== 'written') return;
        const key = m.next.cohort as string;
        held.set(key, (held.get(key) ?? 0) + 1);
      });
    }
  }
  return held;
}
