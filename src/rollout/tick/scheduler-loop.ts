/**
 * Runs the scheduler in every `run` process, but only the leader's ticks do anything: each
 * round tries to take or renew the Redis lock, and ticks when it holds it. A leader that dies
 * stops renewing; another process takes over within the lock's TTL.
 */
import type { Logger } from '../../lib/logger.js';
import type { Policy } from '../../policy/schema.js';
import type { LeaderLock } from './leader-lock.js';
import type { Scheduler } from './scheduler.js';

/** Real ms between a kick and its round: kicks of one burst of finished upgrades share a round. */
export const KICK_DELAY_MS = 20;

export interface SchedulerLoopOptions {
  scheduler: Scheduler;
  lock: LeaderLock;
  policies: () => readonly Policy[];
  /** Real ms between two rounds, at the most. */
  intervalMs: number;
  /**
   * Real ms until the scheduler has something due (a watching pass, a retry, a bake's end, a
   * scan), as its last round saw it: the next round comes then when that is sooner than
   * `intervalMs`, so that what is due does not wait for the interval (at a rehearsal's time
   * scale, one interval is minutes of clock time).
   */
  dueInMs?: () => number | undefined;
  logger: Logger;
  /** Called after every round of the leader. */
  onTick?: () => void | Promise<void>;
}

export interface SchedulerLoop {
  readonly isLeader: boolean;
  /** Runs one round now (and waits for it). */
  runOnce(): Promise<void>;
  /** Runs a round soon (a slot was freed somewhere), without waiting for the interval. */
  kick(): void;
  stop(): Promise<void>;
}

export function startSchedulerLoop(options: SchedulerLoopOptions): SchedulerLoop {
  const { lock, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let wasLeader = false;

  async function round(): Promise<void> {
    try {
      const leader = await lock.tryAcquire();
      if (leader !== wasLeader) logger.info({ leader }, leader ? 'scheduler leads' : 'scheduler follows');
      wasLeader = leader;
      if (!leader) return;
      await options.scheduler.tick(options.policies());
      await options.onTick?.();
    } catch (err) {
      logger.error({ err: (err as Error).message }, 'scheduler round failed');
    }
  }

  let busy = false;
  let kicked = false;
  let dueAt = Number.POSITIVE_INFINITY;
  /** Sets the next round `delay` ms from now, but never later than one already set. */
  function schedule(delay = options.intervalMs): void {
    if (stopped) return;
    const at = Date.now() + delay;
    if (timer && dueAt <= at) return;
    if (timer) clearTimeout(timer);
    dueAt = at;
    timer = setTimeout(() => {
      timer = undefined;
      dueAt = Number.POSITIVE_INFINITY;
      busy = true;
      kicked = false;
      running = round().finally(() => {
        busy = false;
        // Kicks that came during the round get a round of their own right away; else the next
        // round comes when something is due, or after the interval.
        schedule(kicked ? KICK_DELAY_MS : nextDelay());
      });
    }, delay);
  }

  /** The delay of the next round: the interval, or sooner when the scheduler has something due. */
  function nextDelay(): number {
    const due = lock.isLeader ? options.dueInMs?.() : undefined;
    if (due === undefined || !Number.isFinite(due)) return options.intervalMs;
    return Math.min(options.intervalMs, Math.max(KICK_DELAY_MS, Math.ceil(due)));
  }

  busy = true;
  running = round().finally(() => {
    busy = false;
    schedule(nextDelay());
  });
  return {
    get isLeader() {
      return lock.isLeader;
    },
    kick: () => {
      if (stopped || !lock.isLeader) return;
      if (busy) kicked = true;
      else schedule(KICK_DELAY_MS);
    },
    runOnce: async () => {
      await running;
      running = round();
      await running;
    },
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
      await lock.release().catch(() => undefined);
    },
  };
}
