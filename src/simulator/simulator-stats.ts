/** Counters of what one organization of the simulated service saw and did, served at GET /_sim/stats. */
import type { FaultKind } from './fault-schema.js';
import type { ModelCounters } from './fleet-model.js';
import { faultCounters } from './org-faults.js';
import type { Endpoint } from './service-routes.js';

export class SimulatorStats {
  total = 0;
  readonly byEndpoint: Record<Endpoint | 'other', number> = {
    list: 0,
    targets: 0,
    create: 0,
    status: 0,
    inventory: 0,
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
