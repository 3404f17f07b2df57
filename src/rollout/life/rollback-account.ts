/**
 * What became of a rollback (operator/rollback.ts), as `status`, `/status` and `report` show it:
 * for each request carried out, the Collectors it chose and, from the rollouts that take them
 * back (read now, so the account follows them to their end), how many
 *
 * - are back on their previous build (`back`: succeeded in the rollback's rollout);
 * - were on it already, so there was nothing to do (`onBuild`: a failed or timed-out upgrade
 *   leaves a Collector on its old build; the rollback's first scan finds it there);
 * - are not alive, so they cannot be moved now (`notAlive`: not alive when asked, or offline);
 * - did not go back (`failed`: failed, timed out, unhealthy on the previous build, refused, ...);
 * - are still under way (`underWay`: waiting, in flight, verifying, or not scanned yet);
 * - could not be taken back: their previous build is no longer offered (`unavailable`);
 * - cannot be told any more: the rollback's rollout was forgotten before it kept its tally
 *   (`unknown`); one forgotten since keeps what it had come to on the entry (`final`).
 *
 * Each rollout of a request is named with its phase (`waiting` before it started, `gone` once
 * forgotten). Pure: the caller reads the rollouts.
 */
import { type CollectorState, DEFAULT_ORG, SETTLED_STATES, type StateCounts } from '../collector/index.js';
import { rolloutId } from '../rollout-id.js';
import type { RollbackEntry, RollbackTally, RolloutRecord, UnmatchedCollector } from './rollout-record.js';
import type { RolloutStore } from './rollout-store.js';

/** A rollback's rollout as the account reads it. */
export interface RollbackRolloutView {
  phase: RolloutRecord['phase'];
  counts: StateCounts;
  unmatched?: readonly UnmatchedCollector[] | undefined;
}

export interface RollbackAccount {
  /** The request carried out, who asked and when (clock ms). */
  request: string;
  by: string;
  at: number;
  /** Collectors it chose. */
  requested: number;
  back: number;
  onBuild: number;
  notAlive: number;
  failed: number;
  underWay: number;
  unavailable: number;
  unknown: number;
  /** The rollouts that take them back: each one's policy, build, Collectors and phase now. */
  rollouts: {
    policy: string;
    build: string;
    org?: string;
    collectors: number;
    phase: RolloutRecord['phase'] | 'waiting' | 'gone';
  }[];
}

/** The phase a rollback entry's rollout is in now, for the entry as `status` and `report` show it. */
export type RollbackEntryPhase = RollbackAccount['rollouts'][number]['phase'];

const SETTLED: ReadonlySet<CollectorState> = new Set(SETTLED_STATES);

/** The id of the rollout that carries out a started entry. */
export function rollbackRolloutId(e: Pick<RollbackEntry, 'policy' | 'build'>): string | undefined {
  return e.policy === undefined ? undefined : rolloutId(e.policy, e.build);
}

/**
 * The accounts of a rollout's rollbacks, oldest request first. `find` answers a rollback rollout
 * by id (undefined when there is none); `waiting` says whether a one-off policy has not started
 * its rollout yet (else a missing rollout was forgotten).
 */
export function rollbackAccounts(
  entries: readonly RollbackEntry[],
  find: (id: string) => RollbackRolloutView | undefined,
  waiting: (policy: string) => boolean,
): RollbackAccount[] {
  const byRequest = new Map<string, RollbackAccount>();
  for (const e of entries) {
    const a = byRequest.get(e.request) ?? {
      request: e.request,
      by: e.by,
      at: e.at,
      requested: 0,
      back: 0,
      onBuild: 0,
      notAlive: 0,
      failed: 0,
      underWay: 0,
      unavailable: 0,
      unknown: 0,
      rollouts: [],
    };
    byRequest.set(e.request, a);
    a.requested += e.collectors;
    const id = rollbackRolloutId(e);
    if (e.state === 'unavailable' || id === undefined) {
      a.unavailable += e.collectors;
      continue;
    }
    const view = find(id);
    const phase: RollbackEntryPhase = view ? view.phase : waiting(e.policy as string) ? 'waiting' : 'gone';
    a.rollouts.push({
      policy: e.policy as string,
      build: e.build,
      ...(e.org === undefined ? {} : { org: e.org }),
      collectors: e.collectors,
      phase,
    });
    if (!view && !e.final) {
      if (phase === 'gone') a.unknown += e.collectors;
      else a.underWay += e.collectors;
      continue;
    }
    // Forgotten: what it had come to then.
    const part = view ? rollbackTally(view) : (e.final as RollbackTally);
    // What its scan has not looked at yet is still under way (never below zero: a Collector
    // found twice, e.g. after a retry, is counted once by state).
    const seen = part.back + part.onBuild + part.notAlive + part.failed + part.underWay;
    a.back += part.back;
    a.onBuild += part.onBuild;
    a.notAlive += part.notAlive;
    a.failed += part.failed;
    a.underWay += part.underWay + Math.max(0, e.collectors - seen);
  }
  return [...byRequest.values()];
}

/**
 * A rollout's rollbacks as a person of the `within` organizations reads them: the entries of those
 * organizations only, and each request's account over those entries alone (a request spans
 * organizations, one rollback rollout each). `find` answers a rollback rollout by id; a policy
 * whose rollout it lacks keeps the phase the whole account gave it (`waiting`, else gone).
 * Nothing when none of the rollbacks is theirs.
 */
export function scopeRollbacks(
  source: {
    rollbacks?: readonly (RollbackEntry & { phase?: RollbackEntryPhase })[] | undefined;
    rollbackAccounts?: readonly RollbackAccount[] | undefined;
  },
  within: ReadonlySet<string>,
  find: (id: string) => RollbackRolloutView | undefined,
): { rollbacks?: (RollbackEntry & { phase?: RollbackEntryPhase })[]; rollbackAccounts?: RollbackAccount[] } {
  const mine = (source.rollbacks ?? []).filter((e) => within.has(e.org ?? DEFAULT_ORG));
  if (mine.length === 0) return {};
  const phases = new Map(
    (source.rollbackAccounts ?? []).flatMap((a) => a.rollouts.map((x) => [x.policy, x.phase] as const)),
  );
  return {
    rollbacks: mine,
    ...(source.rollbackAccounts
      ? { rollbackAccounts: rollbackAccounts(mine, find, (p) => phases.get(p) === 'waiting') }
      : {}),
  };
}

/**
 * The accounts of one rollout's rollbacks, its rollback rollouts read from the store (for a reader
 * of one rollout: `GET /rollouts/{id}`), and its entries with their rollouts' phases.
 */
export async function readRollbackAccounts(
  rollouts: Pick<RolloutStore, 'readMany' | 'oneOffs'>,
  source: Pick<RolloutRecord, 'rollbacks'>,
): Promise<
  | {
      rollbacks: (RollbackEntry & { phase?: RollbackEntryPhase })[];
      rollbackAccounts: RollbackAccount[];
    }
  | undefined
> {
  const entries = source.rollbacks ?? [];
  if (entries.length === 0) return undefined;
  const ids = [...new Set(entries.map(rollbackRolloutId).filter((id): id is string => id !== undefined))];
  const views = new Map<string, RollbackRolloutView>();
  (await rollouts.readMany(ids)).forEach((v) => {
    if (v)
      views.set(v.rollout.id, { phase: v.rollout.phase, counts: v.counts, unmatched: v.rollout.unmatched });
  });
  const policies = [...new Set(entries.flatMap((e) => (e.policy === undefined ? [] : [e.policy])))];
  const waiting = new Set<string>();
  for (const p of policies) if ((await rollouts.oneOffs.unstarted(p)) !== undefined) waiting.add(p);
  const rollbackAccounts = rollbackAccountsOf(entries, views, waiting);
  const phases = new Map(
    rollbackAccounts.flatMap((a) => a.rollouts.map((x) => [x.policy, x.phase] as const)),
  );
  return {
    rollbacks: entries.map((e) => {
      const phase = e.policy === undefined ? undefined : phases.get(e.policy);
      return phase === undefined ? e : { ...e, phase };
    }),
    rollbackAccounts,
  };
}

function rollbackAccountsOf(
  entries: readonly RollbackEntry[],
  views: ReadonlyMap<string, RollbackRolloutView>,
  waiting: ReadonlySet<string>,
): RollbackAccount[] {
  return rollbackAccounts(
    entries,
    (id) => views.get(id),
    (p) => waiting.has(p),
  );
}

/** One rollback rollout's Collectors by category, from its counts and the ones its scan did not find. */
export function rollbackTally(view: RollbackRolloutView): RollbackTally {
  const out: RollbackTally = { back: 0, onBuild: 0, notAlive: 0, failed: 0, underWay: 0 };
  for (const [state, n] of Object.entries(view.counts) as [CollectorState, number | undefined][]) {
    if (!n) continue;
    if (state === 'succeeded') out.back += n;
    else if (state === 'not_alive') out.notAlive += n;
    else if (!SETTLED.has(state)) out.underWay += n;
    else out.failed += n;
  }
  for (const u of view.unmatched ?? []) {
    if (u.finding === 'on_build') out.onBuild += 1;
    else if (u.finding === 'offline') out.notAlive += 1;
    else out.failed += 1;
  }
  return out;
}

/**
 * `rollback of 9 Collectors requested: rolled back: 4, 3 already on their previous build (nothing
 * to do), 2 not alive (cannot be moved now)`, for `status`; those whose build is no longer offered
 * are said apart (with the ids in `report`).
 */
export function describeRollbackAccount(a: RollbackAccount): string {
  const n = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;
  const parts: string[] = [];
  if (a.back > 0) parts.push(`rolled back: ${a.back}`);
  if (a.onBuild > 0)
    parts.push(
      `${n(a.onBuild, 'already on its previous build', 'already on their previous build')} (nothing to do)`,
    );
  if (a.notAlive > 0) parts.push(`${a.notAlive} not alive (cannot be moved now)`);
  if (a.failed > 0) parts.push(`${a.failed} failed to go back`);
  if (a.underWay > 0) parts.push(`${a.underWay} under way`);
  if (a.unknown > 0) parts.push(`${a.unknown} unknown (its rollout was forgotten)`);
  if (a.back === 0 && a.underWay === 0) parts.unshift('none rolled back');
  return `rollback of ${n(a.requested, 'Collector', 'Collectors')} requested: ${parts.join(', ')}`;
}
