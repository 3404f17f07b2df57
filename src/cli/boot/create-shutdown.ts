/**
 * The stop of `run` and `worker`: the steps run in reverse order of their start, so the first one
 * added (Redis, and a private redis-server) is closed last. Each step gets a few seconds: with
 * Redis gone, closing a queue or a worker would wait forever.
 */
import type { Logger } from '../../lib/logger.js';
import { withTimeout } from '../../lib/with-timeout.js';

const SHUTDOWN_STEP_MS = 5000;

export interface Shutdown {
  /** A step that undoes what was just started. */
  add(step: () => Promise<unknown>): void;
  /** Runs the steps, last added first, each bounded; false when a step failed or timed out. */
  stop(): Promise<boolean>;
}

export function createShutdown(logger: Logger): Shutdown {
  const steps: (() => Promise<unknown>)[] = [];
  return {
    add: (step) => {
      steps.push(step);
    },
    stop: async () => {
      let clean = true;
      for (const c of steps.reverse()) {
        const step = c().then(
          () => 'done' as const,
          (err: Error) => {
            logger.warn({ err: err.message }, 'shutdown step failed');
            return 'failed' as const;
          },
        );
        const ended = await withTimeout(step, SHUTDOWN_STEP_MS, () => 'timeout' as const);
        if (ended === 'timeout') logger.warn('shutdown step timed out');
        if (ended !== 'done') clean = false;
      }
      return clean;
    },
  };
}
