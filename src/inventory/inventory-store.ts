/**
 * Each organization's inventory in Redis: one hash per organization (keys.inventory(org)), never
 * a key per Collector, a few kilobytes whatever the fleet's size. Its fields, each JSON:
 *   - `pass`: what the last complete pass counted (InventoryPass: counts by build, OS and alive,
 *     each policy's Collectors by build), written once at the end of the pass;
 *   - `schedule`: when the next pass is due, and the failures of the last ones (InventorySchedule);
 *   - `compliance`: each policy's compliance as the inventory's leader last judged it
 *     (InventoryCompliance: the build its target resolves to, the counts, since when it has been
 *     below its `complianceAlert`).
 * Written by the inventory's leader only (start-inventory.ts); read by the metrics, `fleet` and
 * anyone else. A field that does not parse reads as absent.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../rollout/index.js';
import type { ComplianceCounts } from './compliance.js';
import type { InventoryTally } from './tally-inventory.js';

export interface InventoryPass extends InventoryTally {
  /** When the pass began and ended (the deployment's clock, ms). */
  startedAt: number;
  at: number;
  /** Requests (pages) it took. */
  pages: number;
}

export interface InventorySchedule {
  /** When the next pass is due (clock ms). */
  nextAt: number;
  /** Passes failed in a row. */
  failures: number;
  /** The last failure, while passes fail. */
  lastError?: { at: number; message: string };
}

export interface PolicyCompliance {
  /** The policy's `target` as written. */
  targetText: string;
  /** The build the target resolves to in this organization; null while it has not resolved. */
  target: string | null;
  /** Where that build comes from: the policy's current rollout, or the policy's fixed build. */
  targetFrom: 'rollout' | 'policy' | null;
  minimumBuild?: string;
  /** The policy's `complianceAlert`, `for` in ms. */
  alert?: { below: number; forMs: number };
  counts: ComplianceCounts;
  /** Since when (clock ms) the compliant share has been below `alert.below`; absent when not. */
  belowSince?: number;
}

export interface InventoryCompliance {
  /** When it was judged (clock ms). */
  at: number;
  /** The `at` of the pass it was judged from. */
  passAt: number;
  policies: Record<string, PolicyCompliance>;
}

export interface OrgInventory {
  org: string;
  pass?: InventoryPass;
  schedule?: InventorySchedule;
  compliance?: InventoryCompliance;
}

function parse<T>(text: string | null | undefined): T | undefined {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as T;
  } catch {
    return undefined;
  }
}

export class InventoryStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Pick<Keys, 'inventory'>,
  ) {}

  /** The inventory of each of `orgs`, in their order, in one round trip. */
  async read(orgs: readonly string[]): Promise<OrgInventory[]> {
    if (orgs.length === 0) return [];
    const pipe = this.redis.pipeline();
    for (const org of orgs) pipe.hmget(this.keys.inventory(org), 'pass', 'schedule', 'compliance');
    const replies = (await pipe.exec()) ?? [];
    return orgs.map((org, i) => {
      const [err, value] = replies[i] ?? [null, null];
      if (err) throw err;
      const [pass, schedule, compliance] = (value as (string | null)[] | null) ?? [];
      const out: OrgInventory = { org };
      const p = parse<InventoryPass>(pass);
      const s = parse<InventorySchedule>(schedule);
      const c = parse<InventoryCompliance>(compliance);
      if (p) out.pass = p;
      if (s) out.schedule = s;
      if (c) out.compliance = c;
      return out;
    });
  }

  async writePass(org: string, pass: InventoryPass, schedule: InventorySchedule): Promise<void> {
    await this.redis.hset(this.keys.inventory(org), {
      pass: JSON.stringify(pass),
      schedule: JSON.stringify(schedule),
    });
  }

  async writeSchedule(org: string, schedule: InventorySchedule): Promise<void> {
    await this.redis.hset(this.keys.inventory(org), 'schedule', JSON.stringify(schedule));
  }

  async writeCompliance(org: string, compliance: InventoryCompliance): Promise<void> {
    await this.redis.hset(this.keys.inventory(org), 'compliance', JSON.stringify(compliance));
  }
}
