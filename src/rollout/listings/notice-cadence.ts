/**
 * When the next pass over the listings is worth its pages, chosen after each pass from what the
 * daemon knows (issue #31):
 * - the predicted ends: each task still under way ends by a time drawn around its kind's learned
 *   length (a log-normal around the median, admit/upgrade-length.ts); the expected number of them
 *   that end after the pass and by `t` grows with `t`;
 * - the budget: a pass costs its pages, and a page is worth it when it is expected to show at least
 *   1 / `spendPerEnd` ends (a Collector waiting for a slot starts when its end is noticed: while
 *   Collectors wait, a finished task is worth what the creates and status reads leave of
 *   NOTICE_CALLS_PER_COLLECTOR, else NOTICE_SPEND_IDLE: `noticeSpend`);
 * - the rate left after the creates: the pages of a pass are never spent faster than the
 *   deployment's share of the rate (`api.share`), less what the creates take, allows.
 * The next pass is the first time at which the expected ends reach the pass's pages ÷ spendPerEnd,
 * not before the budget has room for its pages, never sooner than NOTICE_MIN_GAP_MS and never later
 * than `latestMs` (the notice goal: a fifth of the median task). Pure.
 */

/**
 * The requests per upgraded Collector a rollout aims to stay within, creates included: what the
 * creates (with their `collector.not.alive` retries) and the status reads leave of it is what
 * noticing a task's end may spend while Collectors wait for a slot (`noticeSpend`). 2.0 per
 * upgraded Collector kept a fleet with 5 % offline and 2 % hanging at 1.93 requests per Collector
 * of the rollout; since watching starts at the first scan's first page it came to 2.001-2.002, so
 * 1.95 (docs/benchmarks.md).
 */
export const NOTICE_CALLS_PER_COLLECTOR = 1.95;
/** The most a finished task is worth noticing (a page per end at most). */
export const NOTICE_SPEND_MAX = 1;
/** ... the least, and what it is worth while nothing waits (an end noticed sooner starts nothing). */
export const NOTICE_SPEND_IDLE = 0.25;
/** Two passes at least this far apart, clock ms. */
export const NOTICE_MIN_GAP_MS = 1_000;
/** The share of the rate left after the creates kept for scans, status reads and health reads. */
export const NOTICE_RATE_RESERVE = 0.15;
/** The spread of a task's length around its kind's median (log-normal σ) until the kind has its own p95. */
export const DEFAULT_LENGTH_SIGMA = 0.5;

/** A task under way as the cadence sees it. */
export interface TaskUnderWay {
  /** Clock ms of its request. */
  requestTime: number;
  /** Its expected length (the median of its kind), clock ms. */
  medianMs: number;
  /** The spread of its length (log-normal σ). */
  sigma: number;
}

/** P(a log-normal length of median `medianMs` and spread `sigma` is at most `elapsedMs`). */
export function endedBy(elapsedMs: number, medianMs: number, sigma: number): number {
  if (elapsedMs <= 0) return 0;
  const z = Math.log(elapsedMs / Math.max(1, medianMs)) / Math.max(0.05, sigma);
  return 0.5 * (1 + erf(z / Math.SQRT2));
}

/** Abramowitz and Stegun 7.1.26 (absolute error below 1.5e-7): enough for a count of expected ends. */
function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const a = Math.abs(x);
  const t = 1 / (1 + 0.3275911 * a);
  const poly =
    t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign * (1 - poly * Math.exp(-a * a));
}

/**
 * The expected number of `tasks`, all seen under way at `seenAt`, that have ended by `at`: each
 * one's chance to end in (seenAt, at] given that it had not ended by `seenAt`.
 */
export function expectedEnds(tasks: readonly TaskUnderWay[], seenAt: number, at: number): number {
  let sum = 0;
  for (const t of tasks) {
    const before = endedBy(seenAt - t.requestTime, t.medianMs, t.sigma);
    const by = endedBy(at - t.requestTime, t.medianMs, t.sigma);
    // A task long past its expected end (before ≈ 1) is as likely to end in any second as any other
    // overdue one: its chance is spread over the rest of its time-out, counted as a small steady share.
    sum +=
      before >= 0.999 ? Math.min(1, (at - seenAt) / Math.max(1, t.medianMs)) : (by - before) / (1 - before);
  }
  return sum;
}

/**
 * Requests a finished task is worth noticing: while Collectors wait for a slot, what the creates and
 * the status reads (per Collector so far) leave of NOTICE_CALLS_PER_COLLECTOR per *upgraded*
 * Collector (the share of outcomes that are upgrades so far: refused, failed and timed-out ones
 * spend requests and upgrade nothing), within [NOTICE_SPEND_IDLE, NOTICE_SPEND_MAX];
 * NOTICE_SPEND_IDLE while nothing waits.
 */
export function noticeSpend(input: {
  waiting: boolean;
  /** Create requests per Collector that left the queue, so far (1 and a little: retries). */
  createsPerCollector: number;
  /** Status reads per Collector that left the queue, so far. */
  statusPerCollector: number;
  /** The share of outcomes so far that are upgrades (1 when none is known yet). */
  upgradedShare?: number;
}): number {
  if (!input.waiting) return NOTICE_SPEND_IDLE;
  const share = Math.min(1, Math.max(0, input.upgradedShare ?? 1));
  const left = NOTICE_CALLS_PER_COLLECTOR * share - input.createsPerCollector - input.statusPerCollector;
  return Math.min(NOTICE_SPEND_MAX, Math.max(NOTICE_SPEND_IDLE, left));
}

export interface NextPassInput {
  /** Clock ms of the pass just made. */
  passAt: number;
  /** The tasks it saw still under way. */
  tasks: readonly TaskUnderWay[];
  /** Listing pages a pass costs (over every organization of the rollout). */
  pages: number;
  /** Requests a finished task is worth noticing (`noticeSpend`). */
  spendPerEnd: number;
  /** Requests per clock second the deployment may spend on the rollout's organizations (rate × share). */
  ratePerSecond: number;
  /** Requests per clock second the creates take now. */
  createsPerSecond: number;
  /** The latest the next pass may come, clock ms after this one (the notice goal). */
  latestMs: number;
}

export interface NextPass {
  /** Clock ms of the next pass. */
  at: number;
  /** What decided it: the ends expected, the rate left, or the notice goal. */
  by: 'ends' | 'rate' | 'goal';
  /** Ends expected by then. */
  expected: number;
}

/** The clock time of the next pass (see the header). */
export function nextPassAt(input: NextPassInput): NextPass {
  const { passAt, tasks } = input;
  const pages = Math.max(1, input.pages);
  const latest = passAt + Math.max(NOTICE_MIN_GAP_MS, input.latestMs);
  const wanted = pages / Math.max(0.01, input.spendPerEnd);
  const left = Math.max(0, input.ratePerSecond * (1 - NOTICE_RATE_RESERVE) - input.createsPerSecond);
  // The pages at the rate left after the creates (none left: the goal's cadence only).
  const byRate = left > 0 ? passAt + (1000 * pages) / left : latest;
  const earliest = Math.min(latest, Math.max(passAt + NOTICE_MIN_GAP_MS, byRate));
  const byLatest = expectedEnds(tasks, passAt, latest);
  if (byLatest < wanted) return { at: latest, by: 'goal', expected: byLatest };
  // The first time the expected ends reach `wanted`, to a tenth of a second (expectedEnds grows with time).
  let lo = passAt;
  let hi = latest;
  while (hi - lo > 100) {
    const mid = (lo + hi) / 2;
    if (expectedEnds(tasks, passAt, mid) >= wanted) hi = mid;
    else lo = mid;
  }
  const at = Math.round(Math.max(earliest, hi));
  return { at, by: earliest > hi ? 'rate' : 'ends', expected: expectedEnds(tasks, passAt, at) };
}
