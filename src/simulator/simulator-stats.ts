/** Counters of what one organization of the simulated service saw and did, served at GET /_sim/stats. */
import type { FaultKind } from './fault-schema.js';
import type { ModelCounters } from './fleet-model.js';
import { faultCounters } from './org-faults.js';
import type { Endpoint } from './service-routes.js';

/** One request the organization answered, as GET /_sim/requests shows it. */
export interface LoggedRequest {
  /** Simulated ms at which it was answered. */
  at: number;
  endpoint: Endpoint | 'other';
  status: number;
  /** The task of a status read (its id), the build of a listing (`toVersion`), the Collector of a create. */
  subject?: string;
}

/** The latest requests kept per organization (older ones are dropped, and counted). */
export const REQUEST_LOG_SIZE = 20_000;

export class SimulatorStats {
  total = 0;
  /** The latest REQUEST_LOG_SIZE requests answered, oldest first (a ring: `logStart` is the oldest). */
  private readonly log: LoggedRequest[] = [];
  private logStart = 0;
  /** Requests dropped from the log (it keeps the latest REQUEST_LOG_SIZE). */
  logDropped = 0;
  readonly byEndpoint: Record<Endpoint | 'other', number> = {
    list: 0,
    targets: 0,
    create: 0,
    status: 0,
    inventory: 0,
    health: 0,
    other: 0,
  };
  readonly byStatus: Record<string, number> = {};
  readonly rejected: Record<string, number> = {};
  rateLimited = 0;
  readonly rateLimitedBy = { rate: 0, concurrency: 0 };
  injectedErrors = 0;
  dropped = 0;
  /** Requests refused or altered by a fault of the organization (faults.schedule, /_sim/faults), by kind. */
  readonly faults: Record<FaultKind, number> = faultCounters();

  /** Keeps a request in the log (bounded: the oldest goes once it is full). */
  logRequest(entry: LoggedRequest): void {
    if (this.log.length < REQUEST_LOG_SIZE) {
      this.log.push(entry);
      return;
    }
    this.log[this.logStart] = entry;
    this.logStart = (this.logStart + 1) % REQUEST_LOG_SIZE;
    this.logDropped++;
  }

  /** The logged requests answered at or after `since` (simulated ms), oldest first, at most `limit`. */
  requests(since: number, limit: number): LoggedRequest[] {
    const out: LoggedRequest[] = [];
    for (let i = 0; i < this.log.length && out.length < limit; i++) {
      const e = this.log[(this.logStart + i) % this.log.length] as LoggedRequest;
      if (e.at >= since) out.push({ ...e });
    }
    return out;
  }

  record(status: number, code: string | undefined): void {
    this.byStatus[String(status)] = (this.byStatus[String(status)] ?? 0) + 1;
    if (code && status >= 400 && status < 500 && status !== 429)
      this.rejected[code] = (this.rejected[code] ?? 0) + 1;
  }

  snapshot<E extends Record<string, unknown>>(model: ModelCounters, now: number, extra: E) {
    return {
      requests: { total: this.total, byEndpoint: { ...this.byEndpoint }, byStatus: { ...this.byStatus } },
      tasksCreated: model.tasksCreated,
      tasksByOutcome: { ...model.tasksByOutcome },
      failuresByCause: { ...model.failuresByCause },
      stoppedAfterUpgrade: model.stoppedAfterUpgrade,
      unfinishedTasks: model.unfinished,
      maxConcurrentTasks: model.maxConcurrentTasks,
      rejected: { ...this.rejected },
      rateLimited: this.rateLimited,
      rateLimitedBy: { ...this.rateLimitedBy },
      injectedErrors: this.injectedErrors,
      dropped: this.dropped,
      faults: { ...this.faults },
      now,
      ...extra,
    };
  }
}
