/**
 * The one-offs (`fleet-upgrade upgrade`) that have no rollout, as `status` shows them above its
 * table: one sentence each, saying what holds it (the daemon's next round, or why it could not
 * start it: the build not offered, when it looks again or that it gave up) and the command that
 * removes it.
 */
import type { OneOffView } from '../../rollout/index.js';
import { formatWhen, oneLine } from './explain-rollout.js';

/** The sentence of one one-off without a rollout. */
export function describeOneOff(o: OneOffView, now: number): string {
  const what = `one-off ${oneLine(o.id)} (${o.collectors} Collector${o.collectors === 1 ? '' : 's'}${o.org && o.org !== 'default' ? ` of org ${oneLine(o.org)}` : ''})`;
  const remove = `\`fleet-upgrade forget ${oneLine(o.id)}\` removes it`;
  const wait = o.notStarted;
  if (!wait) return `${what}: not started yet; the daemon starts it at its next round`;
  const reason = oneLine(wait.reason);
  if (wait.gaveUpAt !== undefined)
    return `${what}: not started, gave up at ${formatWhen(wait.gaveUpAt, now)} after ${wait.looks} looks: ${reason} — ${remove}`;
  const next = wait.nextLookAt === undefined ? '' : `; looks again at ${formatWhen(wait.nextLookAt, now)}`;
  return `${what}: not started: ${reason} (since ${formatWhen(wait.since, now)}${next}) — ${remove}`;
}

/** A sentence per one-off, each broken into lines by `wrap`. */
export function oneOffLines(
  oneOffs: readonly OneOffView[],
  now: number,
  wrap: (text: string) => string[],
): string[] {
  return oneOffs.flatMap((o) => wrap(describeOneOff(o, now)));
}
