/**
 * One pass over the listings for a rollout: pages of the listing of another build (a Collector
 * on build B is listed for any other build, and not while a task of it runs) serve at once
 * - the verification of successes (verify-collectors.ts), and
 * - when the rollout watches (`watchMs`), the tasks under way: a Collector listed again after its
 *   task's request has no task running any more. Listed on the rollout's build, its task
 *   succeeded: it moves on here (to verification) without a status read, and its job is woken to
 *   end. Listed on another build, its task ended without reaching the build: its job is woken to
 *   read the status once (the message says why, and how the failure's class is handled). Not
 *   listed: still running (or offline), its job sleeps on (with a fallback read, see
 *   poll-schedule.ts).
 * Whether to watch is decided by `watchDecision`: one pass costs the pages it reads, and it pays
 * when it costs fewer requests per finished task than status reads would.
 */
import type { BuildTarget } from '../../api/index.js';
import { jobFor, type UpgradeQueue, wakeUpgrades } from '../../queue/upgrade-job.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  DEFAULT_ORG,
  type Move,
  transition,
} from '../collector/index.js';
import { buildOf, type RolloutRecord } from '../life/index.js';
import { awaitingHealth } from './health-verdicts.js';
import {
  applyVerification,
  dueForVerification,
  judgedEvents,
  type ListingSighting,
  listingBuild,
  listingPages,
  type VerifyDeps,
  type VerifyPass,
} from './verify-collectors.js';

/** Watch when a pass costs less than this many requests per finished task (a status read costs one or more). */
export const WATCH_ON_BELOW = 0.8;
/** ... and stop watching above this (hysteresis: the decision does not flap). */
export const WATCH_OFF_ABOVE = 1.2;
/** A pass at least every this share of the median task duration: completions noticed ≤ ~10 % late on average. */
export const WATCH_SHARE_OF_MEDIAN = 0.2;
/**
 * ... and more often while that costs at most this many requests per finished task: with many
 * tasks under way one page sees many ends, so passes are cheap, and each second of notice saved
 * is a second of every slot (the makespan).
 */
export const WATCH_SPEND_PER_TASK = 0.25;
export const WATCH_MIN_INTERVAL_MS = 5_000;
export const WATCH_MAX_INTERVAL_MS = 120_000;

export interface WatchDecision {
  watch: boolean;
  /** Clock ms between two passes. */
  intervalMs: number;
  /** Listing requests per finished task that watching costs. */
  cost: number;
}

/**
 * Whether watching the listings is cheaper than reading each task's status: a pass every
 * `intervalMs` costs `pagesPerPass` requests, and `inFlight` tasks of median duration `medianMs`
 * end at `inFlight / medianMs`, so a finished task costs pages × median / (inFlight × interval).
 * The interval is the shorter of a fifth of the median (the notice goal) and the one that spends
 * WATCH_SPEND_PER_TASK per finished task, within [WATCH_MIN_INTERVAL_MS, WATCH_MAX_INTERVAL_MS].
 */
export function watchDecision(input: {
  pagesPerPass: number;
  inFlight: number;
  medianMs: number;
  watching: boolean;
}): WatchDecision {
  const pages = Math.max(1, input.pagesPerPass);
  const inFlight = Math.max(1, input.inFlight);
  const affordable = (pages * input.medianMs) / (inFlight * WATCH_SPEND_PER_TASK);
  const wanted = Math.min(input.medianMs * WATCH_SHARE_OF_MEDIAN, affordable);
  // Whole seconds: the interval written on the rollout changes only when it changes by one.
  const intervalMs =
    Math.round(Math.min(WATCH_MAX_INTERVAL_MS, Math.max(WATCH_MIN_INTERVAL_MS, wanted)) / 1000) * 1000;
  const cost = (pages * input.medianMs) / (inFlight * intervalMs);
  const watch = input.watching ? cost <= WATCH_OFF_ABOVE : cost < WATCH_ON_BELOW;
  return { watch, intervalMs, cost };
}

export interface ListingPassDeps extends VerifyDeps {
  queue: UpgradeQueue;
  /** A task ended (as the listing showed), after `durationMs` (estimated). */
  onTaskEnded?(state: string, durationMs: number): void;
}

export interface ListingPassResult extends VerifyPass {
  /** Tasks seen ended on the build (moved on without a status read). */
  succeeded: number;
  /** Tasks seen ended off the build (their jobs woken to read the status). */
  endedElsewhere: number;
  /** The watched tasks the pass did not see ended (still under way, or offline). */
  underWay: CollectorRecord[];
  /** Clock ms spent waiting for pages (the API budget's line and the service) and settling their ends. */
  waits: { pagesMs: number; settleMs: number };
}

/**
 * The rollout's Collectors whose task runs (pending, progressing), from its policy's slots; of
 * organization `org` only when given.
 */
export async function tasksUnderWay(deps: Pick<VerifyDeps, 'store'>, rollout: RolloutRecord, org?: string) {
  const ids = (await deps.store.slotHolders(rollout.policy))
    .filter((h) => h.rolloutId === rollout.id && (org === undefined || h.org === org))
    .map((h) => h.key);
  if (ids.length === 0) return [];
  return [...(await deps.store.getMany(rollout.id, ids)).values()].filter(
    (r) => (r.state === 'pending' || r.state === 'progressing') && r.requestTime !== undefined,
  );
}

export async function listingPass(
  deps: ListingPassDeps,
  rollout: RolloutRecord,
  options: {
    targets: readonly BuildTarget[];
    pageSize: number;
    /** Watch the tasks under way too. */
    watch: boolean;
    /** Clock time of the previous watching pass (a task seen ended now ended after it). */
    previousPassAt?: number;
    /** The organization whose listing is read (`deps.api` is its client). */
    org?: string;
    /** Called after a page that showed tasks ended (their slots are free): admission, at once. */
    onPage?: () => Promise<unknown>;
  },
): Promise<ListingPassResult> {
  const org = options.org ?? DEFAULT_ORG;
  const build = buildOf(rollout, org);
  const result: ListingPassResult = {
    looked: 0,
    verified: 0,
    unhealthy: 0,
    pages: 0,
    succeeded: 0,
    endedElsewhere: 0,
    underWay: [],
    waits: { pagesMs: 0, settleMs: 0 },
  };
  const { store, clock } = deps;
  const verifying = await dueForVerification(store, rollout, clock.now(), org);
  const tasks = options.watch ? await tasksUnderWay(deps, rollout, org) : [];
  if (verifying.length === 0 && tasks.length === 0) return result;
  result.looked = verifying.length;
  const other = listingBuild(options.targets, build, [...verifying, ...tasks]);
  // A Collector whose verdict awaits only a health-event read needs no listing page.
  const looked = verifying.filter((r) => !awaitingHealth(r));
  const needListing = tasks.length > 0 || (looked.length > 0 && rollout.settings.verify !== undefined);
  let sightings: Map<number, ListingSighting> | undefined;
  if (other && needListing) {
    const wanted = new Set([...looked, ...tasks].map((r) => r.id));
    const byId = new Map(tasks.map((r) => [r.id, r]));
    sightings = new Map();
    let asked = clock.now();
    for await (const page of listingPages(deps, other, wanted, options.pageSize)) {
      result.waits.pagesMs += clock.now() - asked;
      result.pages++;
      for (const [id, seen] of page) sightings.set(id, seen);
      // The tasks this page shows ended are settled at once, and their slots filled before the
      // next page (a pass over ten pages takes seconds, every one of them a slot idle).
      const ended = [...page.keys()].flatMap((id) => byId.get(id) ?? []);
      asked = clock.now();
      if (ended.length === 0) continue;
      for (const r of ended) byId.delete(r.id);
      const before = result.succeeded + result.endedElsewhere;
      await settleWatched(deps, rollout, ended, page, asked, { ...options, build }, result);
      result.waits.settleMs += clock.now() - asked;
      if (result.succeeded + result.endedElsewhere > before) await options.onPage?.();
      asked = clock.now();
    }
    result.underWay = [...byId.values()];
  }
  const now = clock.now();
  if (verifying.length)
    await applyVerification(
      deps,
      rollout,
      verifying,
      await judgedEvents(deps, rollout, verifying, rollout.settings.verify ? sightings : undefined, {
        now,
        build,
        org,
      }),
      now,
      result,
    );
  if (result.verified || result.unhealthy || result.succeeded || result.endedElsewhere) {
    const { underWay, waits: _waits, ...figures } = result;
    deps.logger.info({ rollout: rollout.id, org, ...figures, underWay: underWay.length }, 'listing pass');
  }
  return result;
}

/** Tasks the listing shows ended: successes move on, the others' jobs read their status now. */
async function settleWatched(
  deps: ListingPassDeps,
  rollout: RolloutRecord,
  tasks: readonly CollectorRecord[],
  sightings: ReadonlyMap<number, ListingSighting>,
  now: number,
  options: { previousPassAt?: number; build: string },
  result: ListingPassResult,
) {
  const wake: CollectorRecord[] = [];
  const succeeded: { r: CollectorRecord; move: Move; durationMs: number }[] = [];
  for (const r of tasks) {
    const seen = sightings.get(r.id);
    // Only a page requested after the task's request says anything about the task.
    if (!seen || seen.requestedAt <= (r.requestTime ?? Number.POSITIVE_INFINITY)) continue;
    if (seen.collector.collectorVersion !== options.build) {
      result.endedElsewhere++;
      wake.push(r);
      continue;
    }
    const verify = rollout.settings.verify;
    const event: CollectorEvent = verify
      ? { type: 'verify', dueAt: now + verify.intervalMs }
      : { type: 'succeeded' };
    // The task ended between the previous pass and this page: learn the middle of that span.
    const since = Math.max(r.requestTime ?? 0, options.previousPassAt ?? r.requestTime ?? 0);
    const durationMs = Math.max(0, Math.round((since + seen.requestedAt) / 2 - (r.requestTime ?? 0)));
    const t = transition(r, event, { now, settings: rollout.settings });
    if (t.ok) succeeded.push({ r, move: t.move, durationMs });
  }
  // One write each (its own duration), sent together: one round trip for the page, not one per task.
  const outcomes = await Promise.all(
    succeeded.map(({ move, durationMs }) => deps.store.apply(rollout.id, [move], { durationMs })),
  );
  succeeded.forEach(({ r, durationMs }, i) => {
    if (outcomes[i]?.[0] !== 'written') return;
    result.succeeded++;
    deps.onTaskEnded?.('succeeded', durationMs);
    wake.push(r);
  });
  // The jobs end at once (a success) or read the status once (another ending).
  await wakeUpgrades(
    deps.queue,
    wake.map((r) => jobFor(rollout.id, r)),
  );
}
