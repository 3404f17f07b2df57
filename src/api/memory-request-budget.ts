/**
 * The request budget of a single process (a one-off CLI command, a test): the same sliding log,
 * leases and AIMD as the Redis budget (request-budget.ts), kept in memory. It must not be used
 * by several processes sharing one access ID: their requests would add up past the limits.
 */
import { type Clock, systemClock } from '../lib/clock.js';
import { FleetError } from '../lib/errors.js';
import {
  type AimdState,
  afterRateLimited,
  type BudgetLease,
  type BudgetLimits,
  boundedPauseMs,
  budgetWindowMs,
  createPriorityLine,
  currentFactor,
  FULL_RATE,
  REQUEST_PRIORITY,
  type RequestBudget,
  rateWait,
  resolveBudgetLimits,
  slotsPerWindow,
} from './request-budget.js';

export interface MemoryRequestBudgetOptions extends Partial<BudgetLimits> {
  /** Real time (default the system clock); a manual clock in tests. */
  clock?: Clock;
}

export function createMemoryRequestBudget(options: MemoryRequestBudgetOptions = {}): RequestBudget {
  const limits = resolveBudgetLimits(options);
  const clock = options.clock ?? systemClock;
  const line = createPriorityLine({ now: () => clock.now(), windowMs: budgetWindowMs(limits) });
  /** Slots granted (the last 2N), each moved to its send time by `sent()`. */
  const log: { at: number }[] = [];
  let state: AimdState = FULL_RATE;
  let inFlight = 0;
  // Woken when a lease is given back: no polling needed inside one process.
  let leaseFreed: (() => void) | undefined;

  const waitForLease = (deadline: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      const done = new AbortController();
      const onAbort = () => {
        done.abort();
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      leaseFreed = () => {
        signal?.removeEventListener('abort', onAbort);
        done.abort();
        resolve();
      };
      clock.sleep(Math.max(0, deadline - clock.now()), done.signal).then(
        () => {
          signal?.removeEventListener('abort', onAbort);
          reject(
            new FleetError('FLEET_ERR_API_BUDGET', `no concurrency lease within ${limits.maxWaitMs} ms`),
          );
        },
        () => {},
      );
    });

  return {
    acquire: (signal, priority = REQUEST_PRIORITY.list) =>
      line(priority, async (): Promise<BudgetLease> => {
        signal?.throwIfAborted();
        const started = clock.now();
        const deadline = started + limits.maxWaitMs;
        if (limits.concurrent > 0) {
          while (inFlight >= limits.concurrent) await waitForLease(deadline, signal);
          inFlight++;
        }
        let released = false;
        const release = async () => {
          if (released || limits.concurrent === 0) return;
          released = true;
          inFlight--;
          const wake = leaseFreed;
          leaseFreed = undefined;
          wake?.();
        };
        let slot: { at: number } | undefined;
        try {
          while (limits.perSecond > 0) {
            const now = clock.now();
            const wait = rateWait(
              log.map((e) => e.at).sort((a, b) => a - b),
              now,
              state,
              limits,
            );
            if (wait === 0) {
              slot = { at: now };
              log.push(slot);
              const keep = 2 * slotsPerWindow(limits);
              if (log.length > keep) log.splice(0, log.length - keep);
              break;
            }
            if (now + wait > deadline)
              throw new FleetError('FLEET_ERR_API_BUDGET', `no request slot within ${limits.maxWaitMs} ms`);
            await clock.sleep(wait, signal);
          }
        } catch (err) {
          await release();
          throw err;
        }
        return {
          waitedMs: clock.now() - started,
          sent: () => {
            if (slot) slot.at = Math.max(slot.at, clock.now());
          },
          release,
        };
      }),
    async rateLimited(retryAfterMs) {
      const retryAfterReal = Math.ceil(boundedPauseMs(retryAfterMs) / limits.timeScale);
      state = afterRateLimited(state, clock.now(), limits, retryAfterReal);
    },
    async factor() {
      return currentFactor(state, clock.now(), limits);
    },
    async close() {},
  };
}
