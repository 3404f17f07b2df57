/**
 * Steps of a rollout's tick that read the listings between scans (listings/listing-pass.ts):
 * whether the rollout watches its tasks through the listings (`decideWatch`), and a pass when
 * one is due (`listingDue`): while it watches, when the tasks it saw under way are expected to
 * have ended in numbers worth the pass's pages, within the rate the creates leave
 * (listings/notice-cadence.ts); for verification at most every `verify.interval`.
 */
import type { BuildTarget } from '../../api/index.js';
import { coalesceRuns } from '../../lib/coalesce-runs.js';
import { jobFor, wakeUpgrades } from '../../queue/upgrade-job.js';
import {
  ACTIVE_STATES,
  COLLECTOR_STATES,
  type CollectorRecord,
  SETTLED_STATES,
  SLOT_STATES,
  type StateCounts,
  sumStates,
} from '../collector/index.js';
import type { RolloutDraft, RolloutRecord } from '../life/index.js';
import {
  DEFAULT_LENGTH_SIGMA,
  listingPass,
  nextPassAt,
  noticeSpend,
  type TaskUnderWay,
  tasksUnderWay,
  WATCH_MAX_INTERVAL_MS,
  WATCH_MIN_INTERVAL_MS,
  WATCH_SHARE_OF_MEDIAN,
  watchDecision,
} from '../listings/index.js';
import { eachOrgAtOnce } from './each-org-at-once.js';
import { dueAt, type OrgApi, type TickContext } from './tick-context.js';

type ListingDeps = Pick<
  TickContext,
  | 'store'
  | 'clock'
  | 'logger'
  | 'onTaskEnded'
  | 'memory'
  | 'queue'
  | 'rollouts'
  | 'orgFailed'
  | 'apiRatePerSecond'
>;

/** The rate of one organization's budget a deployment spends by default: 4/s × 0.8 (`apiBudget.share`). */
const DEFAULT_API_RATE = 3.2;

/**
 * A pass over the listings when Collectors' verification is due (at most every
 * `verify.interval`) or, while the rollout watches its tasks, every `watchMs`: one pass over each
 * organization's listing (`orgs`: each with its client and its builds; an organization with a
 * problem is left out and waits). True when it moved any Collector.
 */
export async function listingDue(
  deps: ListingDeps,
  rollout: RolloutRecord,
  counts: StateCounts,
  orgs: readonly { org: string; api: OrgApi; targets: readonly BuildTarget[] }[],
  pageSize: number,
  now: number,
  /** Admission after a page that showed tasks ended (advance-rollout.ts). */
  onPage?: () => Promise<unknown>,
): Promise<boolean> {
  const { memory } = deps;
  const since = (m: Map<string, number>) => now - (m.get(rollout.id) ?? Number.NEGATIVE_INFINITY);
  const watching = rollout.watchMs !== undefined && sumStates(counts, SLOT_STATES) > 0;
  countCreates(memory, rollout, now);
  // The next pass when it is worth its pages (notice-cadence.ts), or every `watchMs` before the first.
  const lastWatch = memory.lastWatch.get(rollout.id);
  const nextWatch =
    memory.nextWatchAt.get(rollout.id) ??
    (lastWatch === undefined ? now : lastWatch + (rollout.watchMs ?? 0));
  // The next round comes when the next pass is due (a task's end is noticed then, not a tick later).
  if (watching) dueAt(memory, nextWatch);
  else if ((counts.verifying ?? 0) > 0)
    dueAt(memory, (memory.lastVerify.get(rollout.id) ?? now) + (rollout.settings.verify?.intervalMs ?? 0));
  const watchDue = watching && now >= nextWatch;
  // While the rollout watches, verification rides along the watching passes (no pass of its own).
  const verifyDue =
    !watching &&
    (counts.verifying ?? 0) > 0 &&
    since(memory.lastVerify) >= (rollout.settings.verify?.intervalMs ?? 0);
  if (!verifyDue && !watchDue) return false;
  if ((counts.verifying ?? 0) > 0) memory.lastVerify.set(rollout.id, now);
  const previousPassAt = memory.lastWatch.get(rollout.id);
  if (watchDue) {
    memory.lastWatch.set(rollout.id, now);
    // Until this pass tells what is still under way: the latest the next may come.
    memory.nextWatchAt.set(rollout.id, now + noticeGoalMs(deps, rollout));
    dueAt(memory, now + noticeGoalMs(deps, rollout));
  }
  let pages = 0;
  let moved = 0;
  const underWay: CollectorRecord[] = [];
  // Each organization's pass goes through its own API budget: the passes run at once (one after
  // the other, the tenth organization's ends were noticed a whole round of passes late). The
  // admissions between pages, which write the rollout, run one at a time, and every page that
  // asks while one runs shares the next: an admission fills the freed slots of every organization,
  // so ten organizations' pages queued one after the other redid it ten times (10 × 10,000: 60
  // admissions a pass, most of its 40–60 s; docs/benchmarks.md, #31).
  const admissions = { n: 0, ms: 0 };
  // The longest of the organizations' waits for pages and settling (they run at once).
  const waits = { pagesMs: 0, settleMs: 0 };
  const turn = onPage
    ? coalesceRuns(async () => {
        const start = deps.clock.now();
        try {
          return await onPage();
        } finally {
          admissions.n++;
          admissions.ms += deps.clock.now() - start;
        }
      })
    : undefined;
  const passOf = async (o: (typeof orgs)[number]) => {
    try {
      const pass = await listingPass({ ...deps, api: o.api, health: memory.health }, rollout, {
        targets: o.targets,
        pageSize,
        watch: watchDue,
        org: o.org,
        ...(previousPassAt === undefined ? {} : { previousPassAt }),
        ...(turn ? { onPage: turn } : {}),
      });
      pages += pass.pages;
      moved += pass.verified + pass.unhealthy + pass.succeeded;
      underWay.push(...pass.underWay);
      waits.pagesMs = Math.max(waits.pagesMs, pass.waits.pagesMs);
      waits.settleMs = Math.max(waits.settleMs, pass.waits.settleMs);
    } catch (err) {
      if (!(await deps.orgFailed(o.org, err))) throw err;
    }
  };
  await eachOrgAtOnce(orgs, passOf);
  if (pages > 0) {
    const before = memory.pagesPerPass.get(rollout.id);
    memory.pagesPerPass.set(rollout.id, before === undefined ? pages : 0.7 * before + 0.3 * pages);
  }
  // From the pass's start, as the passes' rhythm: a pass of many pages takes seconds, and an end
  // is as likely during them as after.
  if (watchDue) {
    // Clock ms the pass took to walk and settle (a pass longer than the next's `inMs` runs back to
    // back with it), its admissions between pages, and the longest organization's waits for its
    // pages and for settling their ends.
    deps.logger.debug(
      {
        rollout: rollout.id,
        pages,
        passMs: deps.clock.now() - now,
        admissions: admissions.n,
        admitMs: admissions.ms,
        ...waits,
      },
      'watching pass walked',
    );
    planNextPass(deps, rollout, counts, orgs.length, now, underWay);
  }
  return moved > 0;
}

/** The latest a watching pass may come after the last: a fifth of the median task (5 s to 2 min). */
function noticeGoalMs(deps: ListingDeps, rollout: RolloutRecord): number {
  const median = deps.memory.medianMs.get(rollout.id) ?? rollout.settings.pollInitialMs * 3;
  return Math.min(WATCH_MAX_INTERVAL_MS, Math.max(WATCH_MIN_INTERVAL_MS, median * WATCH_SHARE_OF_MEDIAN));
}

/** The rollout's creates per clock second, from its create count, over spans of 10 s at least. */
function countCreates(memory: ListingDeps['memory'], rollout: RolloutRecord, now: number): void {
  const last = memory.creates.get(rollout.id);
  if (!last) {
    memory.creates.set(rollout.id, { n: rollout.createRequests, at: now, perSecond: 0 });
    return;
  }
  if (now - last.at < 10_000) return;
  const rate = (1000 * Math.max(0, rollout.createRequests - last.n)) / (now - last.at);
  memory.creates.set(rollout.id, {
    n: rollout.createRequests,
    at: now,
    perSecond: 0.5 * last.perSecond + 0.5 * rate,
  });
}

/**
 * After a watching pass: when the next one is worth its pages (notice-cadence.ts), from the tasks
 * it saw under way, each with its kind's learned length, and the rate the creates leave.
 */
function planNextPass(
  deps: ListingDeps,
  rollout: RolloutRecord,
  counts: StateCounts,
  orgCount: number,
  now: number,
  underWay: readonly CollectorRecord[],
): void {
  const { memory } = deps;
  const model = memory.lengths.get(rollout.id)?.model;
  // The Collectors that left the queue: what the creates and the status reads were spent on so far.
  const left = Math.max(1, sumStates(counts, COLLECTOR_STATES) - (counts.queued ?? 0));
  const upgraded = (counts.succeeded ?? 0) + (counts.verifying ?? 0);
  const fallback = memory.medianMs.get(rollout.id) ?? rollout.settings.pollInitialMs * 3;
  const tasks: TaskUnderWay[] = underWay.map((r) => {
    const medianMs = model?.predict(r.kind, r.cohort) ?? fallback;
    const p95 = model?.p95(r.kind);
    const sigma =
      p95 && p95 > medianMs
        ? Math.min(1.5, Math.max(0.15, Math.log(p95 / medianMs) / 1.645))
        : DEFAULT_LENGTH_SIGMA;
    return { requestTime: r.requestTime ?? now, medianMs, sigma };
  });
  const next = nextPassAt({
    passAt: now,
    tasks,
    pages: memory.pagesPerPass.get(rollout.id) ?? 1,
    spendPerEnd: noticeSpend({
      waiting: (counts.queued ?? 0) > 0,
      createsPerCollector: rollout.createRequests / left,
      statusPerCollector: rollout.statusReads / left,
      // Upgrades among the outcomes so far (five upgrades assumed before any is known); a Collector
      // waiting to try again (refused `collector.not.alive`) is no upgrade yet.
      upgradedShare:
        (upgraded + 5) /
        (sumStates(counts, SETTLED_STATES) + (counts.verifying ?? 0) + (counts.waiting_retry ?? 0) + 5),
    }),
    ratePerSecond: (deps.apiRatePerSecond ?? DEFAULT_API_RATE) * Math.max(1, orgCount),
    createsPerSecond: memory.creates.get(rollout.id)?.perSecond ?? 0,
    latestMs: noticeGoalMs(deps, rollout),
  });
  memory.nextWatchAt.set(rollout.id, next.at);
  dueAt(memory, next.at);
  deps.logger.debug(
    { rollout: rollout.id, inMs: next.at - now, by: next.by, expected: Number(next.expected.toFixed(1)) },
    'next watching pass',
  );
}

/**
 * Whether the rollout watches its tasks through the listings (listings/listing-pass.ts,
 * watchDecision), kept on the rollout (`watchMs`) for its jobs: a watched task's job sleeps until
 * the scheduler wakes it. A change is written at once (jobs admitted in this tick read it); when
 * watching ends, every sleeping job is then woken (so that it reads the rollout without `watchMs`).
 */
export async function decideWatch(
  deps: Pick<ListingDeps, 'memory' | 'rollouts' | 'logger' | 'queue' | 'store'>,
  draft: RolloutDraft,
  counts: StateCounts,
  pageSize: number,
  now: number,
): Promise<void> {
  const { memory } = deps;
  const rollout = draft.view;
  const total = sumStates(counts, COLLECTOR_STATES);
  const active = sumStates(counts, ACTIVE_STATES);
  const decision = watchDecision({
    pagesPerPass: memory.pagesPerPass.get(rollout.id) ?? Math.ceil(total / pageSize),
    inFlight: Math.min(rollout.maxInFlight, active),
    medianMs: memory.medianMs.get(rollout.id) ?? rollout.settings.pollInitialMs * 3,
    watching: rollout.watchMs !== undefined,
  });
  if (decision.watch) {
    if (rollout.watchMs === decision.intervalMs) return;
    if (rollout.watchMs === undefined)
      deps.logger.info(
        { rollout: rollout.id, intervalMs: decision.intervalMs, cost: Number(decision.cost.toFixed(2)) },
        'watching tasks through the listings',
      );
    // Written before this tick admits anything: a job reads it at its first step.
    draft.set({ watchMs: decision.intervalMs });
    await draft.flush(deps.rollouts, now, deps.logger);
    return;
  }
  if (rollout.watchMs === undefined) return;
  draft.set({ watchMs: null });
  await draft.flush(deps.rollouts, now, deps.logger);
  const sleeping = await tasksUnderWay(deps, rollout);
  await wakeUpgrades(
    deps.queue,
    sleeping.map((r) => jobFor(rollout.id, r)),
  );
  deps.logger.info(
    { rollout: rollout.id, cost: Number(decision.cost.toFixed(2)) },
    'reading task statuses again',
  );
}
