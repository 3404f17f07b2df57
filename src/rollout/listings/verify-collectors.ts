/**
 * Verification of successes (policy `verify`, src/policy/verify.ts). The interface gives one view
 * of a Collector after its upgrade: a Collector on build B appears in the listing for any other
 * build, with `collectorVersion`, `alive` and `lastSeenAlive`. So a pass reads listing pages of
 * one other build, shared by every Collector of the rollout whose look is due, and stops as soon
 * as it has found them all. Per Collector in `verifying`:
 * - first look(s): listed alive on the build → `seen_on_build` (its lastSeenAlive is the mark),
 *   looked at again after `bake`; not yet → looked at again next pass, until `within` after the
 *   task's success, then `unhealthy` with what was seen;
 * - after the bake: still listed on the build, alive, its lastSeenAlive past the mark and no more
 *   than STALE_AFTER_MS older than the freshest heartbeat on its page → `verified` (succeeded);
 *   otherwise `unhealthy`. Heartbeats come every 15 s, so a stale one means it stopped.
 * Only the service's own timestamps are compared with each other (our clock and the service's may
 * differ, and do in rehearsals on an accelerated simulator). Then the service's health events
 * have their word (`verify.healthEvents`, health-verdicts.ts, read-health-view.ts): a new event
 * of a counted kind makes it `unhealthy`, and the heartbeat's `verified` waits for a read that
 * covers the whole bake. A Collector missing from the pages
 * proves nothing by itself (offset paging over a list that changes can skip one): it is judged
 * missing only once its deadline passed.
 */
import type { BuildTarget, Collector } from '../../api/index.js';
import { formatDuration } from '../../lib/duration.js';
import type { Logger } from '../../lib/logger.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  type CollectorStore,
  DEFAULT_ORG,
  type Move,
  parseCollectorKey,
  transition,
} from '../collector/index.js';
import { buildOf, type RolloutRecord } from '../life/index.js';
import { awaitingHealth, healthVerdicts } from './health-verdicts.js';
import { type HealthViewDeps, readHealthView } from './read-health-view.js';
import { type ScanDeps, timedPages } from './scan-upgradable.js';

/** A heartbeat this much older than the freshest on its listing page: the Collector stopped (8 missed). */
export const STALE_AFTER_MS = 2 * 60_000;
/** Collectors looked at in one pass at most (the others wait for the next). */
export const MAX_PER_PASS = 10_000;

export interface VerifyDeps extends ScanDeps {
  api: ScanDeps['api'] & HealthViewDeps['api'];
  logger: Logger;
  /** The scheduler's memory of health events (read-health-view.ts); absent: heartbeat only. */
  health?: HealthViewDeps['health'];
}

export interface VerifyPass {
  looked: number;
  verified: number;
  unhealthy: number;
  /** Listing pages read. */
  pages: number;
}

export interface Sighting {
  collector: Collector;
  /** The freshest lastSeenAlive of an alive Collector on the same page (the service's "now"). */
  freshest: number;
}

/**
 * The build whose listing shows the Collectors: any build but the rollout's, preferably one none
 * of them came from (a Collector back on its old build is then listed too, and told apart).
 */
export function listingBuild(
  targets: readonly BuildTarget[],
  build: string,
  records: readonly CollectorRecord[],
): string | undefined {
  const others = targets.map((t) => t.version).filter((v) => v !== build);
  const from = new Map<string, number>();
  for (const r of records) from.set(r.from, (from.get(r.from) ?? 0) + 1);
  return [...others].sort((a, b) => (from.get(a) ?? 0) - (from.get(b) ?? 0))[0];
}

export interface ListingSighting extends Sighting {
  /** Clock time at which its page was requested. */
  requestedAt: number;
}

/**
 * Pages of `build`'s listing until every one of `wanted` was seen (or the listing ends): each
 * page's sightings of `wanted`, as it comes.
 */
export async function* listingPages(
  deps: Pick<ScanDeps, 'api' | 'clock'>,
  build: string,
  wanted: ReadonlySet<number>,
  pageSize: number,
): AsyncGenerator<Map<number, ListingSighting>> {
  const seen = new Set<number>();
  for await (const { page, requestedAt } of timedPages(deps.api, deps.clock, build, pageSize)) {
    let freshest = 0;
    for (const c of page) if (c.alive && (c.lastSeenAlive ?? 0) > freshest) freshest = c.lastSeenAlive ?? 0;
    const sightings = new Map<number, ListingSighting>();
    for (const c of page) if (wanted.has(c.id)) sightings.set(c.id, { collector: c, freshest, requestedAt });
    for (const id of sightings.keys()) seen.add(id);
    yield sightings;
    if (seen.size >= wanted.size) break;
  }
}

/** Pages of `build`'s listing until every one of `wanted` was seen (or the listing ends). */
export async function readListing(
  deps: Pick<ScanDeps, 'api' | 'clock'>,
  build: string,
  wanted: ReadonlySet<number>,
  pageSize: number,
): Promise<{ sightings: Map<number, ListingSighting>; pages: number }> {
  const sightings = new Map<number, ListingSighting>();
  let pages = 0;
  for await (const page of listingPages(deps, build, wanted, pageSize)) {
    pages++;
    for (const [id, s] of page) sightings.set(id, s);
  }
  return { sightings, pages };
}

/**
 * Collectors of the rollout's organization `org` in `verifying` whose look is due (all of them
 * when verification is off).
 */
export async function dueForVerification(
  store: CollectorStore,
  rollout: RolloutRecord,
  now: number,
  org: string = DEFAULT_ORG,
): Promise<CollectorRecord[]> {
  const keys = (
    rollout.settings.verify
      ? await store.dueVerifying(rollout.id, now, MAX_PER_PASS)
      : await store.indexed(rollout.id, 'verifying')
  ).filter((k) => parseCollectorKey(k).org === org);
  if (keys.length === 0) return [];
  return [...(await store.getMany(rollout.id, keys)).values()].filter((r) => r.state === 'verifying');
}

/**
 * What verification decides of `records` from the listing's `sightings` (undefined: no listing
 * could be read, because verification is off or no other build is offered: the task's word).
 */
export function verificationEvents(
  records: readonly CollectorRecord[],
  sightings: ReadonlyMap<number, Sighting> | undefined,
  rollout: RolloutRecord,
  now: number,
  build: string = rollout.build,
): Map<number, CollectorEvent> {
  const events = new Map<number, CollectorEvent>();
  const verify = rollout.settings.verify;
  for (const r of records) {
    // The heartbeat verified it through its bake already: only the health events' word is awaited.
    if (verify && awaitingHealth(r)) events.set(r.id, { type: 'verified' });
    else if (!verify || !sightings) {
      const message = verify
        ? `unverified: the service offers no build but ${build} to list it under`
        : 'unverified: verification was turned off';
      events.set(r.id, { type: 'verified', message });
    } else events.set(r.id, judge(r, sightings.get(r.id), build, verify, now));
  }
  return events;
}

/**
 * What verification decides of `records`: the heartbeat's word (verificationEvents), then the
 * health events' (health-verdicts.ts).
 */
export async function judgedEvents(
  deps: Pick<VerifyDeps, 'api' | 'clock' | 'logger' | 'health'>,
  rollout: RolloutRecord,
  records: readonly CollectorRecord[],
  sightings: ReadonlyMap<number, ListingSighting> | undefined,
  at: { now: number; build: string; org: string },
): Promise<Map<number, CollectorEvent>> {
  const events = verificationEvents(records, sightings, rollout, at.now, at.build);
  const view = await readHealthView(deps, rollout, at.org, at.build, records, events, sightings?.values());
  return healthVerdicts(records, events, view, rollout.settings.verify, at.build, deps.clock.now());
}

/** Writes the verification's moves; counts and reports them. */
export async function applyVerification(
  deps: VerifyDeps,
  rollout: RolloutRecord,
  records: readonly CollectorRecord[],
  events: ReadonlyMap<number, CollectorEvent>,
  now: number,
  pass: VerifyPass,
): Promise<void> {
  const ctx = { now, settings: rollout.settings };
  const moves: Move[] = [];
  // A new health event's verdicts are counted on the rollout (`healthUnhealthy`) in the same step.
  const byHealth: Move[] = [];
  for (const r of records) {
    const event = events.get(r.id);
    if (!event) continue;
    const t = transition(r, event, ctx);
    if (!t.ok) continue;
    if (event.type === 'unhealthy' && event.failureClass?.startsWith('health:')) byHealth.push(t.move);
    else moves.push(t.move);
  }
  const outcomes = [
    ...(await deps.store.apply(rollout.id, moves)),
    ...(byHealth.length
      ? await deps.store.apply(rollout.id, byHealth, { countWritten: 'healthUnhealthy' })
      : []),
  ];
  moves.push(...byHealth);
  moves.forEach((m, i) => {
    if (outcomes[i] !== 'written') return;
    if (m.next.state === 'succeeded') pass.verified++;
    if (m.next.state === 'unhealthy') {
      pass.unhealthy++;
      deps.logger.warn(
        { rollout: rollout.id, collector: m.next.id, message: m.next.message },
        'upgrade not verified: unhealthy',
      );
    }
  });
}

/**
 * A verification pass alone over organization `org`'s listing (`deps.api` is its client;
 * listing-pass.ts also watches tasks under way in the same pages).
 */
export async function verifyCollectors(
  deps: VerifyDeps,
  rollout: RolloutRecord,
  options: { targets: readonly BuildTarget[]; pageSize: number; org?: string },
): Promise<VerifyPass> {
  const pass: VerifyPass = { looked: 0, verified: 0, unhealthy: 0, pages: 0 };
  const org = options.org ?? DEFAULT_ORG;
  const build = buildOf(rollout, org);
  const records = await dueForVerification(deps.store, rollout, deps.clock.now(), org);
  if (records.length === 0) return pass;
  pass.looked = records.length;
  const looked = records.filter((r) => !awaitingHealth(r));
  const other =
    rollout.settings.verify && looked.length ? listingBuild(options.targets, build, records) : undefined;
  let sightings: Map<number, ListingSighting> | undefined;
  if (other) {
    const read = await readListing(deps, other, new Set(looked.map((r) => r.id)), options.pageSize);
    sightings = read.sightings;
    pass.pages = read.pages;
  }
  const now = deps.clock.now();
  await applyVerification(
    deps,
    rollout,
    records,
    await judgedEvents(deps, rollout, records, sightings, { now, build, org }),
    now,
    pass,
  );
  if (pass.verified || pass.unhealthy)
    deps.logger.info({ rollout: rollout.id, ...pass }, 'verification pass');
  return pass;
}

/** What one look at a Collector under verification decides. */
export function judge(
  r: CollectorRecord,
  sighting: Sighting | undefined,
  build: string,
  verify: { withinMs: number; bakeMs: number; intervalMs: number },
  now: number,
): CollectorEvent {
  const c = sighting?.collector;
  const onBuild = c !== undefined && c.collectorVersion === build && c.alive;
  const seenAs = !c
    ? 'not listed'
    : c.collectorVersion !== build
      ? `listed on ${c.collectorVersion}`
      : c.alive
        ? 'listed alive on the build'
        : 'listed on the build, not alive';
  const later = (message: string, deadline: number): CollectorEvent => ({
    type: 'verify_later',
    message,
    dueAt: Math.min(now + verify.intervalMs, Math.max(deadline, now + 1)),
  });
  if (r.seenOnBuildAt === undefined || r.seenAliveMark === undefined) {
    const deadline = (r.succeededAt ?? now) + verify.withinMs;
    if (onBuild && c)
      return { type: 'seen_on_build', mark: c.lastSeenAlive ?? 0, dueAt: now + verify.bakeMs };
    if (now >= deadline)
      return {
        type: 'unhealthy',
        message: `not seen alive on ${build} within ${formatDuration(verify.withinMs)} of its task's success: ${seenAs}`,
      };
    return later(`awaiting a listing that shows it alive on ${build} (${seenAs})`, deadline);
  }
  const mark = r.seenAliveMark;
  if (!c) {
    // Missing from the pages proves nothing until the deadline (paging can skip one).
    const deadline = r.seenOnBuildAt + verify.bakeMs + verify.withinMs;
    if (now >= deadline)
      return {
        type: 'unhealthy',
        message: `no longer listed since it was seen alive on ${build}: stopped, or taken by another task`,
      };
    return later(`not on the last listing pages; looking again`, deadline);
  }
  if (c.collectorVersion !== build)
    return { type: 'unhealthy', message: `seen on ${build}, then listed on ${c.collectorVersion}` };
  if (!c.alive) return { type: 'unhealthy', message: `listed on ${build} but not alive` };
  // A service that leaves lastSeenAlive out: being listed alive is all there is to go by.
  if (c.lastSeenAlive === undefined)
    return { type: 'verified', message: 'verified by `alive` (no lastSeenAlive listed)' };
  if (c.lastSeenAlive <= mark)
    return {
      type: 'unhealthy',
      message: `stopped heartbeating on ${build}: its lastSeenAlive did not move in the ${formatDuration(now - r.seenOnBuildAt)} after it was first seen`,
    };
  const behind = (sighting?.freshest ?? c.lastSeenAlive) - c.lastSeenAlive;
  if (behind > STALE_AFTER_MS)
    return {
      type: 'unhealthy',
      message: `stopped heartbeating on ${build}: its last heartbeat is ${formatDuration(behind)} older than the freshest on its listing page`,
    };
  return { type: 'verified' };
}
