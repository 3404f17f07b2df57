/**
 * The API budget every request spends: a concurrency lease, then a rate slot, taken just before
 * the request is sent. The service counts requests in a *sliding* one-second window, so the
 * budget keeps a log of the last send times and admits a request only when the N-th latest is at
 * least one (padded) window old: no window, wherever it is placed, holds more than N. A slot is
 * logged when granted and moved to the moment the request was really written out (`sent()`),
 * so that a slow connection set-up (a TLS handshake, a cold start) cannot push an early request
 * into the window of later ones.
 * A 429 shrinks the rate (multiplicative decrease, the window is stretched by 1/factor) and the
 * factor then grows back linearly (additive increase). Implementations: Redis (shared by every
 * process using one access ID) and memory (one process).
 */
import { MAX_RETRY_AFTER_MS } from './retry-policy.js';

export interface BudgetLimits {
  /** Requests per second of the service's time; 0 = no rate limit. Default 4 (the vendor's). */
  perSecond: number;
  /** Requests under way at once; 0 = no limit. Default 10 (the vendor's, per access key). */
  concurrent: number;
  /** Service seconds per real second: the simulator's `--time-scale` (4/s at scale 10 = 40/s real). Default 1. */
  timeScale: number;
  /** Padding of the window, as a share of it (default 0.05). */
  marginRatio: number;
  /**
   * Padding of the window in real ms (default 5): covers the time between the budget's decision
   * and the request's arrival at the service, so that arrival jitter cannot squeeze N+1 requests
   * into one window.
   */
  marginMs: number;
  /** Real ms after which the concurrency lease of a process that died is reclaimed. Default 60 000. */
  leaseMs: number;
  /** AIMD: the rate is multiplied by this on a 429 (default 0.5). */
  decrease: number;
  /** AIMD: the rate never falls below this share of `perSecond` (default 0.1). */
  minFactor: number;
  /** AIMD: share of `perSecond` regained per window without a 429 (default 0.05: 10 s from half to full). */
  recoveryPerWindow: number;
  /** An `acquire` that waits longer than this many real ms fails (default 120 000). */
  maxWaitMs: number;
}

export const DEFAULT_BUDGET_LIMITS: BudgetLimits = {
  perSecond: 4,
  concurrent: 10,
  timeScale: 1,
  marginRatio: 0.05,
  marginMs: 5,
  leaseMs: 60_000,
  decrease: 0.5,
  minFactor: 0.1,
  recoveryPerWindow: 0.05,
  maxWaitMs: 120_000,
};

export interface BudgetLease {
  /** Real ms spent waiting for the lease and the slot. */
  waitedMs: number;
  /** The request has been written to the connection now: its slot counts from now. */
  sent(): void;
  /** Gives the concurrency lease back; call once the response has been read (or failed). */
  release(): Promise<void>;
}

export interface RequestBudget {
  /**
   * Waits for a concurrency lease and then a rate slot: within this process in the order of
   * `priority` (REQUEST_PRIORITY; default that of a listing page), then first come, first served.
   */
  acquire(signal?: AbortSignal, priority?: number): Promise<BudgetLease>;
  /**
   * Tells the budget the service answered 429: the rate shrinks for every user of the budget,
   * and nobody sends before `retryAfterMs` (service time, bounded by `boundedPauseMs`: at most
   * 60 s) has passed, when given.
   */
  rateLimited(retryAfterMs?: number): Promise<void>;
  /** The current rate factor (1 = full rate), for metrics. */
  factor(): Promise<number>;
  close(): Promise<void>;
}

/**
 * A Retry-After pause handed to `rateLimited`, in service ms, made safe before every user of the
 * budget obeys it: absent, negative or not a number is no pause; more than MAX_RETRY_AFTER_MS
 * (60 s) is that. The client caps it already; the budget does not rely on its callers.
 */
export function boundedPauseMs(retryAfterMs: number | undefined): number {
  if (retryAfterMs === undefined || !(retryAfterMs > 0)) return 0;
  return Math.min(retryAfterMs, MAX_RETRY_AFTER_MS);
}

/**
 * Requests admitted per window: `perSecond` rounded up (at least 1), and the window grows to
 * match (`slots / perSecond` seconds, never shorter than one): bursts as large as the service
 * allows in a second, the mean at `perSecond`, and no second of the service holding more than
 * `slots`. At 3.2/s (4/s × the default share 0.8): four per 1.25 s. (Rounded down, three per
 * 937 ms put six in one second, and the service answered 429.)
 */
export function slotsPerWindow(limits: BudgetLimits): number {
  return Math.max(1, Math.ceil(limits.perSecond));
}

/** The padded sliding window, in real ms: `slotsPerWindow` requests per window make `perSecond`. */
export function budgetWindowMs(limits: BudgetLimits): number {
  const window = (1000 * slotsPerWindow(limits)) / limits.perSecond / limits.timeScale;
  return window * (1 + limits.marginRatio) + limits.marginMs;
}

/** AIMD state as stored: the factor set at `at` (real ms), recovering linearly from then on. */
export interface AimdState {
  factor: number;
  at: number;
  lastDecrease: number;
  pausedUntil: number;
}

export const FULL_RATE: AimdState = {
  factor: 1,
  at: 0,
  lastDecrease: Number.NEGATIVE_INFINITY,
  pausedUntil: 0,
};

export function currentFactor(state: AimdState, now: number, limits: BudgetLimits): number {
  const window = budgetWindowMs(limits);
  return Math.min(1, state.factor + (limits.recoveryPerWindow * Math.max(0, now - state.at)) / window);
}

/**
 * The state after a 429 at `now`. One decrease per stretched window at most: the 429s of one
 * burst (several requests were already under way) count as one signal.
 */
export function afterRateLimited(
  state: AimdState,
  now: number,
  limits: BudgetLimits,
  retryAfterRealMs: number,
): AimdState {
  const factor = currentFactor(state, now, limits);
  const pausedUntil = Math.max(state.pausedUntil, retryAfterRealMs > 0 ? now + retryAfterRealMs : 0);
  if (now - state.lastDecrease < budgetWindowMs(limits) / factor) return { ...state, pausedUntil };
  return {
    factor: Math.max(limits.minFactor, factor * limits.decrease),
    at: now,
    lastDecrease: now,
    pausedUntil,
  };
}

/**
 * Real ms to wait before a request may be sent (0 = now), given the sorted send times of the
 * last requests (`log`, oldest first).
 */
export function rateWait(
  log: readonly number[],
  now: number,
  state: AimdState,
  limits: BudgetLimits,
): number {
  const span = budgetWindowMs(limits) / currentFactor(state, now, limits);
  let earliest = Math.max(now, state.pausedUntil);
  const n = slotsPerWindow(limits);
  if (log.length >= n) {
    const nth = log[log.length - n] as number;
    earliest = Math.max(earliest, nth + span);
  }
  return earliest > now ? Math.ceil(earliest - now) : 0;
}

export function resolveBudgetLimits(partial: Partial<BudgetLimits> = {}): BudgetLimits {
  const limits = { ...DEFAULT_BUDGET_LIMITS, ...definedOnly(partial) };
  const positive = (name: keyof BudgetLimits, v: number, allowZero: boolean) => {
    if (!Number.isFinite(v) || v < 0 || (!allowZero && v === 0))
      throw new RangeError(
        `request budget: ${name} must be a ${allowZero ? 'non-negative' : 'positive'} number`,
      );
  };
  positive('perSecond', limits.perSecond, true);
  positive('concurrent', limits.concurrent, true);
  positive('timeScale', limits.timeScale, false);
  positive('leaseMs', limits.leaseMs, false);
  positive('maxWaitMs', limits.maxWaitMs, false);
  if (!(limits.decrease > 0 && limits.decrease < 1))
    throw new RangeError('request budget: decrease must be in (0, 1)');
  if (!(limits.minFactor > 0 && limits.minFactor <= 1))
    throw new RangeError('request budget: minFactor must be in (0, 1]');
  if (!Number.isInteger(limits.concurrent))
    throw new RangeError('request budget: concurrent must be an integer');
  return limits;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * How urgent a request is, for its place in the budget's line (lower goes first): a create starts
 * work on a free in-flight slot, so it goes before the rest; status reads, listing pages and the
 * build list then share the budget first come, first served (a status read ahead of listing
 * pages would starve a first scan while hundreds of tasks are polled). A verification's read of
 * health events (a verdict waits a minute for it at most) comes after them; an inventory page (the
 * whole fleet, for compliance: src/inventory) comes last: it waits behind every rollout's request.
 * A status read, listing page or build list that has waited AGED_AFTER_WINDOWS windows goes first,
 * even before the creates (`aged`, see `agedPriority`).
 */
export const REQUEST_PRIORITY = {
  /** A status read, listing page or build list that has waited too long (`agedPriority`). */
  aged: -1,
  create: 0,
  status: 1,
  targets: 1,
  list: 1,
  /** Verification's health-event reads: behind every other request of the rollouts. */
  health: 2,
  /** The fleet's inventory: behind everything the rollouts ask. */
  inventory: 3,
} as const;
export type RequestPriority = (typeof REQUEST_PRIORITY)[keyof typeof REQUEST_PRIORITY];

/**
 * Windows a status read, listing page or build list waits behind creates before it goes first.
 * Creates first is right while the slots are being filled; but where the creates alone take the
 * whole rate (the shortest tasks, at the end of a large rollout), a listing pass's pages waited
 * behind the creates of the ends its own earlier pages found, a walk of ten pages took 3-5
 * minutes, and ends went unnoticed for as long: 200-380 of 500 slots ended and unseen (10 ×
 * 10,000, #31). Two windows (2.5 s at 3.2/s) bound a page's wait and leave the creates the rest.
 */
export const AGED_AFTER_WINDOWS = 2;

/**
 * The priority a request waits with after `waitedMs` in line (real ms, windows of `windowMs`): a
 * status read, listing page or build list that has waited AGED_AFTER_WINDOWS windows is `aged`;
 * creates, health-event and inventory reads keep theirs.
 */
export function agedPriority(priority: number, waitedMs: number, windowMs: number): number {
  return priority === REQUEST_PRIORITY.list && waitedMs >= AGED_AFTER_WINDOWS * windowMs
    ? REQUEST_PRIORITY.aged
    : priority;
}

/**
 * Runs tasks one at a time: within one process only the head of the line polls the budget, so
 * waiting requests do not stampede Redis. When the head is done, the most urgent waiter goes next
 * (the lowest priority, then the earliest): a create queued behind a listing pass of ten pages
 * waits for one page, not ten. A waiter's priority is `agedPriority` of the time it has waited
 * (`now`, windows of `windowMs`), and its task is handed the time it joined the line. A waiter
 * whose signal is aborted leaves the line.
 */
export function createPriorityLine(aging: {
  now: () => number;
  windowMs: number;
}): <T>(priority: number, task: (joinedAt: number) => Promise<T>) => Promise<T> {
  const waiting: { priority: number; seq: number; joinedAt: number; start: () => void }[] = [];
  let seq = 0;
  let busy = false;
  const next = () => {
    if (busy || waiting.length === 0) return;
    const now = aging.now();
    const rank = (w: (typeof waiting)[number]) => agedPriority(w.priority, now - w.joinedAt, aging.windowMs);
    let best = 0;
    for (let i = 1; i < waiting.length; i++) {
      const w = waiting[i] as (typeof waiting)[number];
      const b = waiting[best] as (typeof waiting)[number];
      if (rank(w) < rank(b) || (rank(w) === rank(b) && w.seq < b.seq)) best = i;
    }
    const [head] = waiting.splice(best, 1);
    busy = true;
    head?.start();
  };
  return <T>(priority: number, task: (joinedAt: number) => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      const joinedAt = aging.now();
      waiting.push({
        priority,
        seq: seq++,
        joinedAt,
        start: () => {
          task(joinedAt)
            .then(resolve, reject)
            .finally(() => {
              busy = false;
              next();
            });
        },
      });
      next();
    });
}
