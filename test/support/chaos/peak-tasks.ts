/**
 * The most tasks unfinished at once across several simulators, from their tasks' request and
 * finish times. Each simulator counts only its own (`maxConcurrentTasks`); the policy's
 * `maxInFlight` holds across organizations, and the simulators run on one shared clock, so
 * their tasks' times lay side by side. At one instant a finish counts before a start (the
 * slot a finished task frees may be taken in the same millisecond); a task without a finish
 * is unfinished to the end.
 */
import type { SimView } from './judge-outcomes.js';

export interface PeakTasks {
  /** The most unfinished tasks at any instant. */
  peak: number;
  /** When (simulated epoch ms), the first time it was reached. */
  at: number | undefined;
}

export function peakTasks(collectors: Iterable<SimView>): PeakTasks {
  const events: [at: number, delta: 1 | -1][] = [];
  for (const c of collectors)
    for (const t of c.tasks) {
      events.push([t.requestTime, 1]);
      if (t.finishTime !== null) events.push([t.finishTime, -1]);
    }
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let now = 0;
  const out: PeakTasks = { peak: 0, at: undefined };
  for (const [at, delta] of events) {
    now += delta;
    if (now > out.peak) {
      out.peak = now;
      out.at = at;
    }
  }
  return out;
}
