import { afterEach, describe, expect, it, vi } from 'vitest';
import { createManualClock, createScaledClock, systemClock } from '../../../src/lib/clock.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('systemClock', () => {
  it('now() is the wall clock', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('sleep resolves after the time and rejects when aborted', async () => {
    vi.useFakeTimers();
    let done = false;
    const p = systemClock.sleep(1000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(999);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await p;
    expect(done).toBe(true);

    const ac = new AbortController();
    const aborted = systemClock.sleep(10_000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    await expect(systemClock.sleep(1, AbortSignal.abort(new Error('early')))).rejects.toThrow('early');
  });
});

describe('createScaledClock', () => {
  it('runs scale times faster than the wall clock, from the real now', () => {
    vi.useFakeTimers();
    vi.setSystemTime(1_700_000_000_000);
    const clock = createScaledClock(60);
    expect(clock.scale).toBe(60);
    expect(clock.now()).toBe(1_700_000_000_000);
    vi.advanceTimersByTime(1000);
    expect(clock.now()).toBe(1_700_000_000_000 + 60_000);
  });

  it('sleep(ms) takes ms / scale real milliseconds', async () => {
    vi.useFakeTimers();
    const clock = createScaledClock(100);
    let done = false;
    const p = clock.sleep(60_000).then(() => {
      done = true;
    });
    await vi.advanceTimersByTimeAsync(599);
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await p;
    expect(done).toBe(true);
  });

  it('refuses a scale that is not a positive number', () => {
    for (const scale of [0, -1, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => createScaledClock(scale)).toThrow(RangeError);
    }
  });
});

describe('createManualClock', () => {
  it('moves only when told to', () => {
    const clock = createManualClock(1000);
    expect(clock.now()).toBe(1000);
    clock.advance(500);
    expect(clock.now()).toBe(1500);
    clock.set(10_000);
    expect(clock.now()).toBe(10_000);
  });

  it('starts at the real now by default', () => {
    const before = Date.now();
    const now = createManualClock().now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('wakes a sleeper when its time has come, not before', async () => {
    const clock = createManualClock(0);
    const woken: string[] = [];
    const a = clock.sleep(1000).then(() => woken.push('a'));
    const b = clock.sleep(3000).then(() => woken.push('b'));
    clock.advance(999);
    await Promise.resolve();
    expect(woken).toEqual([]);
    clock.advance(1);
    await a;
    expect(woken).toEqual(['a']);
    clock.set(5000);
    await b;
    expect(woken).toEqual(['a', 'b']);
  });

  it('sleep(0) and negative sleeps resolve at once', async () => {
    const clock = createManualClock(0);
    await clock.sleep(0);
    await clock.sleep(-5);
    expect(clock.now()).toBe(0);
  });

  it('an aborted sleep rejects and is not woken later', async () => {
    const clock = createManualClock(0);
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort(new Error('cancelled'));
    await expect(p).rejects.toThrow('cancelled');
    clock.advance(2000); // must not throw or resolve the aborted sleeper
    await expect(clock.sleep(1, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });
});
