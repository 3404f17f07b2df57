/**
 * Rollback: Collectors of a rollout go back to the build they had before it (their record's
 * `from`, the build the listing showed when the rollout found them, before its first attempt).
 * Two ways in:
 * - `fleet-upgrade rollback ROLLOUT [--only STATES | --all]` (and POST /rollouts/ID/rollback)
 *   files a request (`requestRollback`); it needs only Redis;
 * - a failure gate with `onTrip: rollback-wave` halts the rollout and takes back the tripped
 *   wave's upgraded and unhealthy Collectors.
 * The scheduler carries a request out (`carryOutRollback`): the chosen Collectors, grouped by
 * previous build, become one-off rollouts of their own (one-off-policies.ts, `rollback-...`),
 * run like any policy (budget, slots, records, verification, gate, report), downgrading (or
 * upgrading, after a downgrade) with one task each. A previous build the service no longer offers
 * is reported on the source rollout and in an event, never guessed.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { BuildTarget } from '../../api/index.js';
import type { Logger } from '../../lib/logger.js';
import type { Policy, PolicyInput } from '../../policy/schema.js';
import {
  type CollectorRecord,
  type CollectorState,
  type CollectorStore,
  DEFAULT_ORG,
  DEFAULT_ROLLBACK_STATES,
  isCollectorState,
  type Move,
  orgOf,
  ROLLBACK_STATES,
  transition,
} from '../collector/index.js';
import {
  buildOf,
  type EventSource,
  orgsOf,
  type RollbackEntry,
  type RolloutNews,
  type RolloutRecord,
  type RolloutSettings,
  type RolloutStore,
} from '../life/index.js';
import { ONE_OFF_MAX_COLLECTORS, type OneOffPolicies, rollbackDescription } from '../one-off/index.js';
import { type ControlDeps, ControlError, type ControlResult } from './control.js';

export { DEFAULT_ROLLBACK_STATES, ROLLBACK_STATES };
/** Ids listed per build that is no longer offered (the rest are counted). */
export const ROLLBACK_IDS_SHOWN = 100;
/** Rollback entries kept on a rollout. */
const ENTRIES_KEPT = 50;

export interface RollbackRequest {
  id: string;
  states: CollectorState[];
  /** Only Collectors of this organization (`rollback --org`). */
  org?: string;
  /** Only Collectors first admitted in this wave (0-based). */
  wave?: number;
  by: string;
  source: EventSource;
  at: number;
  reason: string;
}

/** `--only a,b` → states, refusing any that cannot be rolled back. */
export function parseRollbackStates(text: string): CollectorState[] {
  const states = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = states.filter((s) => !isCollectorState(s) || !ROLLBACK_STATES.includes(s));
  if (states.length === 0 || bad.length)
    throw new ControlError(
      'invalid',
      `--only takes ${ROLLBACK_STATES.join(', ')}${bad.length ? `; not ${bad.join(', ')}` : ''}`,
    );
  return [...new Set(states)] as CollectorState[];
}

/** The states `--only` / `--all` (or neither: what went wrong) choose. */
export function rollbackStates(choice: { only?: readonly string[]; all?: boolean }): CollectorState[] {
  if (choice.all) return [...ROLLBACK_STATES];
  if (choice.only) return parseRollbackStates(choice.only.join(','));
  return [...DEFAULT_ROLLBACK_STATES];
}

/** Files a rollback of a rollout's Collectors in `states`; the daemon carries it out at its next tick. */
export async function requestRollback(
  deps: ControlDeps,
  id: string,
  actor: string,
  states: readonly CollectorState[],
  scope: { org?: string } = {},
): Promise<ControlResult> {
  const rollout = await deps.rollouts.get(id);
  if (!rollout) throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
  const { org } = scope;
  if (org !== undefined && !orgsOf(rollout).includes(org))
    throw new ControlError(
      'invalid',
      `rollout ${id} covers no organization '${org}' (${orgsOf(rollout).join(', ')})`,
    );
  const counts =
    org === undefined ? await deps.store.counts(id) : ((await deps.store.orgCounts(id)).get(org) ?? {});
  const chosen = states.reduce((n, s) => n + (counts[s] ?? 0), 0);
  if (chosen === 0)
    throw new ControlError(
      'conflict',
      `rollout ${id} has no Collector${org ? ` of org ${org}` : ''} in ${states.join(', ')}: nothing to roll back`,
    );
  const now = deps.clock.now();
  const request: RollbackRequest = {
    id: randomBytes(6).toString('hex'),
    states: [...states],
    ...(org === undefined ? {} : { org }),
    by: actor,
    source: 'operator',
    at: now,
    reason: `rollback by ${actor}`,
  };
  // The request is filed with its event, in one step, only while the rollout exists.
  const written = await deps.rollouts.write(
    rollout,
    {
      rollbackRequest: JSON.stringify(request),
      news: [
        {
          type: 'rollback.requested',
          source: 'operator',
          actor,
          states,
          collectors: chosen,
          ...(org === undefined ? {} : { org }),
        },
      ],
    },
    now,
  );
  if (!written) throw new ControlError('not_found', `no rollout '${id}' (it was forgotten meanwhile)`);
  const event = written.events[0];
  return { rollout: id, message: event?.message ?? '', request: request.id, ...(event ? { event } : {}) };
}

/** A rollback request as stored, or undefined when it cannot be read. */
export function parseRollbackRequest(json: string): RollbackRequest | undefined {
  try {
    const r = JSON.parse(json) as RollbackRequest;
    if (typeof r.id !== 'string' || !Array.isArray(r.states) || !r.states.every(isCollectorState))
      return undefined;
    return r;
  } catch {
    return undefined;
  }
}

export interface RollbackDeps {
  store: CollectorStore;
  rollouts: RolloutStore;
  oneOffs: OneOffPolicies;
  logger: Logger;
}

/**
 * Carries out a rollback request of `source`: one one-off rollout per previous build (at most
 * ONE_OFF_MAX_COLLECTORS Collectors each), built from the source's settings and its policy's
 * gate, API budget and page size when the policy is known. Returns what it recorded.
 */
export async function carryOutRollback(
  deps: RollbackDeps,
  source: RolloutRecord,
  request: RollbackRequest,
  options: {
    policy?: Policy;
    /** The builds each organization's service offers (undefined: not known now). */
    targets: (org: string) => readonly BuildTarget[] | undefined;
    now: number;
  },
): Promise<RollbackEntry[] | 'wait'> {
  const done = (source.rollbacks ?? []).filter((e) => e.request === request.id);
  if (done.length) return done; // carried out before a crash: nothing twice
  const chosen: CollectorRecord[] = [];
  for await (const r of deps.store.all(source.id))
    if (
      request.states.includes(r.state) &&
      (request.wave === undefined || r.wave === request.wave) &&
      (request.org === undefined || orgOf(r) === request.org)
    )
      chosen.push(r);
  // An organization whose builds are not known now (its service has a problem): the whole request
  // waits for it, so that it is carried out once, whole.
  if (chosen.some((r) => !options.targets(orgOf(r)))) return 'wait';
  // One under verification is taken back before its verification ends: it stays a success.
  await endVerification(deps.store, source, chosen, options.now);
  // Grouped by organization (a Collector's id is its organization's) and previous build.
  const groups = new Map<string, { org: string; build: string; ids: number[] }>();
  chosen.sort((a, b) => a.id - b.id);
  for (const r of chosen) {
    const org = orgOf(r);
    if (r.from === buildOf(source, org)) continue;
    const key = `${org}|${r.from}`;
    const group = groups.get(key) ?? { org, build: r.from, ids: [] };
    group.ids.push(r.id);
    groups.set(key, group);
  }
  const entries: RollbackEntry[] = [];
  const news: RolloutNews[] = [];
  const base = { request: request.id, at: options.now, by: request.by, reason: request.reason };
  for (const { org, build, ids } of groups.values()) {
    const where = org === DEFAULT_ORG ? {} : { org };
    const targets = options.targets(org) ?? [];
    if (!targets.some((t) => t.version === build)) {
      const shown = ids.slice(0, ROLLBACK_IDS_SHOWN);
      entries.push({ ...base, ...where, build, collectors: ids.length, ids: shown, state: 'unavailable' });
      news.push({
        type: 'rollback.unavailable',
        source: request.source,
        build,
        collectors: ids.length,
        ids: shown,
        ...where,
      });
      continue;
    }
    for (let i = 0; i < ids.length; i += ONE_OFF_MAX_COLLECTORS) {
      const part = ids.slice(i, i + ONE_OFF_MAX_COLLECTORS);
      // The same name when a crash makes the scheduler carry the request out again: written once.
      const tag = createHash('sha256').update(`${request.id}|${org}|${build}|${i}`).digest('hex').slice(0, 6);
      const policy = await deps.oneOffs.addPolicy(
        'rollback',
        (name) => rollbackPolicy(name, source, build, part, options.policy, org),
        request.by,
        request.at,
        tag,
      );
      entries.push({ ...base, ...where, policy, build, collectors: part.length, state: 'started' });
      news.push({
        type: 'rollback.started',
        source: request.source,
        build,
        collectors: part.length,
        policy,
        states: request.states,
        reason: request.reason,
        ...where,
      });
    }
  }
  const kept = [...(source.rollbacks ?? []), ...entries].slice(-ENTRIES_KEPT);
  await deps.rollouts.write(source, { patch: { rollbacks: kept }, news }, options.now);
  deps.logger.info(
    { rollout: source.id, request: request.id, chosen: chosen.length, entries: entries.length },
    'rollback carried out',
  );
  return entries;
}

async function endVerification(
  store: CollectorStore,
  source: RolloutRecord,
  chosen: readonly CollectorRecord[],
  now: number,
) {
  const moves: Move[] = [];
  for (const r of chosen) {
    if (r.state !== 'verifying') continue;
    const t = transition(
      r,
      { type: 'supersede', message: 'taken back by a rollback' },
      { now, settings: source.settings },
    );
    if (t.ok) moves.push(t.move);
  }
  if (moves.length) await store.apply(source.id, moves);
}

const ms = (n: number) => `${Math.round(n)}ms`;

/**
 * The one-off policy of a rollback: the Collectors `ids` to `build` (down or up), in one wave,
 * with the source rollout's in-flight limit, poll, time-out, retries and verification, and its
 * policy's failure gate (a trip pauses: a rollback is not rolled back), API budget and page size.
 * No windows, schedule or freeze: a rollback mends what is broken now.
 */
export function rollbackPolicy(
  name: string,
  source: RolloutRecord,
  build: string,
  ids: readonly number[],
  policy?: Policy,
  org: string = DEFAULT_ORG,
): PolicyInput {
  const s: RolloutSettings = source.settings;
  const gate = policy?.failureGate;
  return {
    name,
    description: rollbackDescription(source.id),
    // The ids are this organization's: the rollback covers it alone.
    orgs: [org],
    target: build,
    allowDowngrade: true,
    select: { ids: [...ids] },
    maxInFlight: Math.max(1, Math.min(source.maxInFlight || 10, ids.length)),
    poll: { initial: ms(s.pollInitialMs), max: ms(s.pollMaxMs), jitter: s.pollJitter },
    taskTimeout: ms(s.taskTimeoutMs),
    retry: {
      notAlive: { attempts: s.notAliveAttempts, backoff: ms(s.notAliveBackoffMs) },
      errors: { attempts: s.errorAttempts, backoff: ms(s.errorBackoffMs) },
      transient: { attempts: s.transientAttempts, backoff: ms(s.transientBackoffMs) },
    },
    verify: s.verify
      ? { within: ms(s.verify.withinMs), bake: ms(s.verify.bakeMs), interval: ms(s.verify.intervalMs) }
      : false,
    ...(gate ? { failureGate: { ...gate, onTrip: gate.onTrip === 'abort' ? 'abort' : 'pause' } } : {}),
    ...(policy ? { api: policy.api, pageSize: policy.pageSize } : {}),
  };
}
