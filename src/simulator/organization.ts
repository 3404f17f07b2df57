/**
 * One organization of the simulated service: what a real deployment holds apart from every
 * other (builds, users and their limits, Collectors, tasks, faults, randomness, statistics).
 * Several live in one process when the fleet file has `orgs:`; the credentials of a request
 * decide which one answers it.
 */
import { createRandom, type Random } from '../lib/random.js';
import { FleetModel, type TaskGauge } from './fleet-model.js';
import { OrgFaults } from './org-faults.js';
import { RateLimiter } from './rate-limiter.js';
import type { FleetUser, OrgFleet, RateLimit } from './schema.js';
import { SimulatorStats } from './simulator-stats.js';

/** A user of the organization, with what it may use and its rate limit. */
export interface Account {
  user: FleetUser;
  allowed: (collectorId: number) => boolean;
  limit: RateLimit;
}

export class Organization {
  readonly name: string;
  readonly model: FleetModel;
  readonly stats = new SimulatorStats();
  readonly limiter = new RateLimiter();
  /** Draws of the request path (HTML 401s, latency, injected errors, drops, faults); the model has its own. */
  readonly rng: Random;
  readonly faults: OrgFaults;
  readonly accounts = new Map<string, Account>();

  constructor(
    readonly fleet: OrgFleet,
    start: number,
    gauge?: TaskGauge,
  ) {
    this.name = fleet.name;
    this.model = new FleetModel(fleet, start, gauge);
    this.rng = createRandom(fleet.seed ^ 0x5eed);
    this.faults = new OrgFaults(fleet.faults.schedule, start);
    for (const user of fleet.users) {
      const only = user.collectors ? new Set(user.collectors) : undefined;
      this.accounts.set(user.accessId, {
        user,
        allowed: only ? (id) => only.has(id) : () => true,
        limit: { ...fleet.faults.rateLimit, ...user.rateLimit },
      });
    }
  }

  /** Latency of `faults.latencyMs` for one request, in simulated ms. */
  latency(): number {
    const l = this.fleet.faults.latencyMs;
    return typeof l === 'number' ? l : l.min + this.rng.next() * Math.max(0, l.max - l.min);
  }

  /** GET /_sim/stats of this organization at `now` (events due by then applied first). */
  snapshot(now: number, timeScale: number) {
    this.model.advance(now);
    return this.stats.snapshot(this.model.counters, now, {
      collectors: this.model.size,
      timeScale,
      org: this.name,
    });
  }
}
