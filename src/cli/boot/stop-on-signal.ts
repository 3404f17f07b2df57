/**
 * How `run` and `worker` end. A stop begins with the first SIGINT (Ctrl-C), SIGTERM or SIGHUP, or
 * when the command is done (`run --once`); it closes everything (`close()`: the daemon's steps,
 * each bounded, the private Redis last) and then exits the process, so that a client library
 * still trying to reach a Redis that went away cannot keep it alive:
 *
 *   running ──signal | stop(code)──► stopping ──close() ended──► exit(code)
 *                                      ├── a second signal ──► exit(128 + its number) at once
 *                                      └── limitMs passed ──► exit(EXIT.failure), saying so
 * `run`'s private redis-server is in a process group of its own (private-redis.ts), so the
 * terminal's Ctrl-C reaches only this process; when we exit at once, its exit hook stops it
 * (SIGTERM: it writes its append-only file and ends).
 */
import type { Logger } from '../../lib/logger.js';
import { EXIT } from './exit-codes.js';

/** The signals that stop a daemon, and the exit code of a stop cut short by one (128 + number). */
export const SIGNAL_EXIT = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
export type StopSignal = keyof typeof SIGNAL_EXIT;

/** Real ms a stop may take before the process exits anyway (each daemon step has 5 s). */
export const STOP_LIMIT_MS = 10_000;

export interface Stopper {
  /** The signal that began the stop, if one did. */
  signal(): StopSignal | undefined;
  stopping(): boolean;
  /** Resolves with the first signal. */
  signalled: Promise<StopSignal>;
  /** Stops now (the command is done) and exits with `code(clean)`; never resolves. */
  stop(code: (clean: boolean) => number): Promise<never>;
}

export interface StopperOptions {
  logger: Logger;
  /** Closes everything; resolves false when a step failed or timed out. */
  close(): Promise<boolean>;
  /** The exit code of a stop a signal began (default: 0 when clean, else 1). */
  exitCode?(signal: StopSignal, clean: boolean): number;
  /** Default STOP_LIMIT_MS. */
  limitMs?: number;
  /** Default process.exit. */
  exit?(code: number): void;
  /** Where the signals come from (default process). */
  signals?: Pick<NodeJS.EventEmitter, 'on'>;
}

export function createStopper(options: StopperOptions): Stopper {
  const { logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const limitMs = options.limitMs ?? STOP_LIMIT_MS;
  let received: StopSignal | undefined;
  let stopping: Promise<never> | undefined;
  let announce: (signal: StopSignal) => void = () => {};
  const signalled = new Promise<StopSignal>((resolve) => {
    announce = resolve;
  });

  const stop = (code: (clean: boolean) => number): Promise<never> => {
    stopping ??= (async () => {
      const limit = setTimeout(() => {
        logger.error({ limitMs }, 'stop did not end in time (is Redis away?): exiting without it');
        exit(EXIT.failure);
      }, limitMs);
      const clean = await options.close().catch((err: Error) => {
        logger.error({ err: err.message }, 'stop failed');
        return false;
      });
      clearTimeout(limit);
      exit(code(clean));
      return new Promise<never>(() => {});
    })();
    return stopping;
  };

  const onSignal = (signal: StopSignal) => {
    if (received !== undefined || stopping) {
      logger.warn({ signal }, 'second signal: exiting at once');
      exit(SIGNAL_EXIT[signal]);
      return;
    }
    received = signal;
    logger.info({ signal, limitMs }, 'stopping; the same signal again exits at once');
    announce(signal);
    const code = options.exitCode ?? ((_: StopSignal, clean: boolean) => (clean ? EXIT.ok : EXIT.failure));
    void stop((clean) => code(signal, clean));
  };
  const source = options.signals ?? process;
  for (const signal of Object.keys(SIGNAL_EXIT) as StopSignal[]) source.on(signal, () => onSignal(signal));

  return {
    signal: () => received,
    stopping: () => stopping !== undefined,
    signalled,
    stop,
  };
}
