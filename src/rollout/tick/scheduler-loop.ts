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
  /** Real ms between two rounds. */
  intervalMs: number;
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
        // Kicks that came during the round get a round of their own right away.
        schedule(kicked ? KICK_DELAY_MS : options.intervalMs);
      });
    }, delay);
  }

  busy = true;
  running = round().finally(() => {
    busy = false;
    schedule();
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
