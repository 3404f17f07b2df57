/**
 * The loop of `status --watch`, wherever the status is read (Redis, or a daemon's `GET /status`
 * with `--server`): the screen cleared and drawn under a header line every interval; when the
 * source is away, one sentence saying so and the last screen seen, then tries again 1, 2, 4 … 30 s
 * apart; Ctrl-C (SIGINT) ends it after the current pause (exit 0).
 */
import { clockName } from '../render/format-status.js';

/** What one look found: a screen, or the sentence saying why there is none. Times on the source's clock. */
export type Look = ({ screen: string } | { away: string }) & { now: number; scale: number };

/** Real ms between two attempts after `failures` failed ones in a row: 1 s, 2 s, 4 s … 30 s. */
export function retryDelayMs(failures: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, Math.min(failures - 1, 15)));
}

/**
 * The first line of `status --watch`: the deployment clock's time, and which clock it is, so that
 * the times below (on the same clock) are read right: `2026-11-26T03:34:12Z  (simulated clock,
 * ×60; Ctrl-C to stop)`.
 */
export function watchHeader(now: number, timeScale: number): string {
  return `${new Date(now).toISOString().slice(0, 19)}Z  (${clockName(timeScale)}; Ctrl-C to stop)`;
}

/** Sleeps `ms`, waking early when `wake()` turns true (looked at every 100 ms). */
async function sleepUnless(ms: number, wake: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !wake())
    await new Promise((r) => setTimeout(r, Math.min(100, end - Date.now())));
}

export async function watchLoop(o: {
  intervalMs: number;
  look: () => Promise<Look>;
  /** Ends a pause early (a `run` wants the private Redis this watch holds). */
  wake?: () => boolean;
  /** After each pause. */
  afterPause?: () => Promise<void>;
  write?: (text: string) => void;
}): Promise<void> {
  const write = o.write ?? ((text: string) => process.stdout.write(text));
  let stop = false;
  const onSigint = () => {
    stop = true;
  };
  process.once('SIGINT', onSigint);
  let failures = 0;
  let last: { text: string; at: number } | undefined;
  try {
    while (!stop) {
      const seen = await o.look();
      let screen: string;
      let waitMs = o.intervalMs;
      if ('screen' in seen) {
        last = { text: seen.screen, at: seen.now };
        failures = 0;
        screen = seen.screen;
      } else {
        failures += 1;
        waitMs = retryDelayMs(failures);
        screen = `${seen.away} Trying again in ${waitMs / 1000} s (Ctrl-C to stop).`;
        if (last)
          screen += `\n\nLast seen at ${new Date(last.at).toISOString().slice(11, 19)} UTC:\n${last.text}`;
      }
      // Clear the screen and home the cursor, then draw.
      write(`\x1b[2J\x1b[H${watchHeader(seen.now, seen.scale)}\n\n${screen}\n`);
      await sleepUnless(waitMs, () => stop || (o.wake?.() ?? false));
      await o.afterPause?.();
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
