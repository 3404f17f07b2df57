/**
 * Writes this process's problems (its ProblemBook) to Redis, where `status`, `/status`, `/readyz`
 * and the metrics read them (rollout/problems/daemon-problems.ts): at every heartbeat (5 s,
 * PROBLEM_HEARTBEAT_MS), at once when they change, and withdrawn when the process stops. Written
 * with an expiry of three heartbeats (15 s, PROBLEM_TTL_MS): a process killed without a word
 * takes its problems with it within that time. Before each write, `refresh` lets the owner bring
 * the book up to date (the policy files' state). Redis away is said once, not at every heartbeat.
 */
import { hostname } from 'node:os';
import type { Logger } from '../../lib/logger.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import {
  type DaemonProblem,
  DaemonProblems,
  type Keys,
  PROBLEM_HEARTBEAT_MS,
  PROBLEM_TTL_MS,
  ProblemBook,
} from '../../rollout/index.js';

export interface ProblemReporterOptions {
  redis: Redis;
  keys: Keys;
  role: 'run' | 'worker';
  logger: Logger;
  /** Which of the book's problems are written now (default all): a follower's scheduler finds none. */
  include?: (id: string) => boolean;
  /** Brings the book up to date before each write. */
  refresh?: () => void;
  /** Real ms between two writes (default PROBLEM_HEARTBEAT_MS). */
  heartbeatMs?: number;
  /** Real ms a write is valid (default PROBLEM_TTL_MS). */
  ttlMs?: number;
}

export interface ProblemReporter {
  readonly book: ProblemBook;
  /** The problems this process writes now. */
  current(): DaemonProblem[];
  /** Writes soon (something changed). */
  kick(): void;
  /** Stops writing and withdraws this process's problems. */
  stop(): Promise<void>;
}

/** How a process is named next to its problems: `run on host-1, pid 4242`. */
export function processLabel(role: string): string {
  return `${role} on ${hostname()}, pid ${process.pid}`;
}

export function startProblemReporter(options: ProblemReporterOptions): ProblemReporter {
  const { logger } = options;
  const book = new ProblemBook();
  const store = new DaemonProblems(options.redis, options.keys);
  const id = `${options.role}:${hostname()}:${process.pid}`;
  const label = processLabel(options.role);
  const include = options.include ?? (() => true);
  let stopped = false;
  let failing = false;
  let writing: Promise<void> = Promise.resolve();
  let soon: NodeJS.Timeout | undefined;

  const current = () => {
    try {
      options.refresh?.();
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'problems not brought up to date');
    }
    return book.entries(include).map(([, p]) => p);
  };
  const write = () => {
    writing = writing.then(async () => {
      if (stopped) return;
      try {
        await store.publish(id, label, current(), options.ttlMs ?? PROBLEM_TTL_MS);
        if (failing) logger.info('problems written to Redis again');
        failing = false;
      } catch (err) {
        if (!failing) logger.warn({ err: (err as Error).message }, 'problems not written to Redis');
        failing = true;
      }
    });
    return writing;
  };
  const kick = () => {
    if (stopped || soon) return;
    soon = setTimeout(() => {
      soon = undefined;
      void write();
    }, 20);
    soon.unref();
  };
  book.onChange(kick);
  const timer = setInterval(() => void write(), options.heartbeatMs ?? PROBLEM_HEARTBEAT_MS);
  timer.unref();
  void write();

  return {
    book,
    current,
    kick,
    async stop() {
      clearInterval(timer);
      if (soon) clearTimeout(soon);
      await writing;
      stopped = true;
      await store.withdraw(id).catch(() => undefined);
    },
  };
}
