/**
 * Time for everything that waits or stamps. Production uses the system clock; the simulator
 * and tests use a scaled or manual clock so that 30 minutes of fleet time pass in a second.
 */
export interface Clock {
  /** Milliseconds since the UNIX epoch, in this clock's time. */
  now(): number;
  /** Resolves after `ms` milliseconds of this clock's time (or rejects when `signal` aborts). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason ?? new Error('aborted'));
      return;
    }
    const timer = setTimeout(
      () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason ?? new Error('aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: realSleep,
};

/**
 * A clock that runs `scale` times faster than the wall clock, starting at the real now.
 * A duration of `ms` in this clock takes `ms / scale` real milliseconds.
 */
export function createScaledClock(scale: number, startReal: number = Date.now()): Clock & { scale: number } {
  if (!Number.isFinite(scale) || scale <= 0)
    throw new RangeError(`time scale must be a positive number, got ${scale}`);
  const origin = startReal;
  return {
    scale,
    now: () => origin + (Date.now() - origin) * scale,
    sleep: (ms, signal) => realSleep(ms / scale, signal),
  };
}

export interface ManualClock extends Clock {
  /** Moves time forward by `ms` and wakes the sleepers whose time has come. */
  advance(ms: number): void;
  set(epochMs: number): void;
}

/** A clock that moves only when told to: tests run 30 minutes of fleet time without waiting. */
export function createManualClock(start: number = Date.now()): ManualClock {
  let current = start;
  const sleepers: { until: number; resolve: () => void }[] = [];
  const wake = () => {
    for (let i = sleepers.length - 1; i >= 0; i--) {
      const s = sleepers[i];
      if (s && s.until <= current) {
        sleepers.splice(i, 1);
        s.resolve();
      }
    }
  };
  return {
    now: () => current,
    sleep: (ms, signal) =>
      new Promise<void>((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
        const entry = { until: current + Math.max(0, ms), resolve };
        sleepers.push(entry);
        signal?.addEventListener(
          'abort',
          () => {
            const i = sleepers.indexOf(entry);
            if (i >= 0) sleepers.splice(i, 1);
            reject(signal.reason ?? new Error('aborted'));
          },
          { once: true },
        );
        wake();
      }),
    advance(ms) {
      current += ms;
      wake();
    },
    set(epochMs) {
      current = epochMs;
      wake();
    },
  };
}
