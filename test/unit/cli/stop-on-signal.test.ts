import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createStopper, SIGNAL_EXIT } from '../../../src/cli/boot/stop-on-signal.js';
import { captureLogger } from '../../support/capture-logger.js';

afterEach(() => {
  vi.useRealTimers();
});

/** A stopper on a signal source of its own, whose close() ends when the test says. */
function setup(options: { exitCode?: (signal: keyof typeof SIGNAL_EXIT, clean: boolean) => number } = {}) {
  const signals = new EventEmitter();
  const exits: number[] = [];
  let endClose: (clean: boolean) => void = () => {};
  const close = vi.fn(() => new Promise<boolean>((resolve) => (endClose = resolve)));
  const log = captureLogger('info');
  const stopper = createStopper({
    logger: log.logger,
    close,
    signals,
    limitMs: 10_000,
    exit: (code) => void exits.push(code),
    ...options,
  });
  return { signals, exits, close, endClose: (clean: boolean) => endClose(clean), stopper, log };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('createStopper', () => {
  it('the first signal closes everything, then exits 0 when clean and 1 when not', async () => {
    for (const clean of [true, false]) {
      const t = setup();
      t.signals.emit('SIGTERM');
      expect(t.close).toHaveBeenCalledTimes(1);
      expect(t.stopper.signal()).toBe('SIGTERM');
      await expect(t.stopper.signalled).resolves.toBe('SIGTERM');
      expect(t.exits).toEqual([]);
      t.endClose(clean);
      await settle();
      expect(t.exits).toEqual([clean ? 0 : 1]);
    }
  });

  it('a second signal exits at once with 128 + its number', async () => {
    const t = setup();
    t.signals.emit('SIGINT');
    t.signals.emit('SIGINT');
    expect(t.exits).toEqual([130]);
    expect(t.close).toHaveBeenCalledTimes(1);
    expect(t.log.text()).toContain('second signal: exiting at once');
  });

  it('a stop that outlasts its limit exits 1, saying so', async () => {
    vi.useFakeTimers();
    const t = setup();
    t.signals.emit('SIGINT');
    await vi.advanceTimersByTimeAsync(9_999);
    expect(t.exits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(t.exits).toEqual([1]);
    expect(t.log.text()).toContain('stop did not end in time');
  });

  it('stop(code) when the command is done: its code; a signal meanwhile exits at once', async () => {
    const t = setup({ exitCode: (signal) => SIGNAL_EXIT[signal] });
    void t.stopper.stop((clean) => (clean ? 2 : 1));
    expect(t.stopper.stopping()).toBe(true);
    t.signals.emit('SIGHUP');
    expect(t.exits).toEqual([129]);
    t.endClose(true);
    await settle();
    expect(t.exits).toEqual([129, 2]);
  });
});
