/**
 * One process's current problems, in memory, each under an id of its own (`policy:<file>`,
 * `target:<policy>`, `time-scale`): the scheduler, the policy files and the client set and clear
 * them; the reporter (cli/boot/report-problems.ts) writes them to Redis at each heartbeat and at
 * once when they change. A problem set again under the same id keeps the time it began.
 */
import type { DaemonProblem } from './daemon-problems.js';

/** What the parts of a daemon that find problems are given. */
export interface ProblemSink {
  /** `id` has this problem now (its `since` is kept while the id has one). */
  set(id: string, problem: DaemonProblem): void;
  /** `id` has no problem any more. */
  clear(id: string): void;
}

/** Where the scheduler reads the problems it tells (tick/tell-problems.ts). */
export interface ProblemSource {
  entries(): [string, DaemonProblem][];
}

export class ProblemBook implements ProblemSink, ProblemSource {
  private readonly problems = new Map<string, DaemonProblem>();
  private readonly listeners: (() => void)[] = [];

  set(id: string, problem: DaemonProblem): void {
    const before = this.problems.get(id);
    const next = before ? { ...problem, since: before.since } : problem;
    if (before && JSON.stringify(before) === JSON.stringify(next)) return;
    this.problems.set(id, next);
    this.changed();
  }

  clear(id: string): void {
    if (this.problems.delete(id)) this.changed();
  }

  /** Clears every id that starts with `prefix` and is not in `keep`. */
  clearOthers(prefix: string, keep: ReadonlySet<string>): void {
    for (const id of [...this.problems.keys()]) if (id.startsWith(prefix) && !keep.has(id)) this.clear(id);
  }

  get(id: string): DaemonProblem | undefined {
    return this.problems.get(id);
  }

  /** The problems with their ids, those `include` keeps (default all). */
  entries(include: (id: string) => boolean = () => true): [string, DaemonProblem][] {
    return [...this.problems].filter(([id]) => include(id));
  }

  /** Told after every change. */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  private changed(): void {
    for (const l of this.listeners) l();
  }
}
