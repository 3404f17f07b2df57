/**
 * The health events a verification pass judges by (health-verdicts.ts), read for many
 * Collectors at once: the account's list of unresolved events (`GET healthEvents`, a page per
 * 1000 events), at most once per `verify.interval` per organization, and only when some
 * Collector's bake is over (its verdict waits for it). The read is kept in the scheduler's
 * memory and shared by every rollout of the organization; its requests come from the API
 * budget's least urgent share (REQUEST_PRIORITY.health). An account that answers 404 or 403 has
 * no health events: off for the organization, said once (a new leader says it once again).
 */
import { ApiError, type CollectorUpgradeClient, type HealthEvent } from '../../api/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { CollectorEvent, CollectorRecord } from '../collector/index.js';
import type { RolloutRecord } from '../life/index.js';
import { type HealthView, sendsHealthEvents } from './health-verdicts.js';

/** Pages of one read at most (100,000 events): beyond, the read is unusable. */
export const MAX_HEALTH_PAGES = 100;

/** What the scheduler remembers of each organization's health events between passes. */
export interface HealthMemory {
  /** Organizations whose account answers no health events (404, 403). */
  off: Set<string>;
  /** The last read of each organization. */
  reads: Map<string, Exclude<HealthView, { kind: 'off' }>>;
  /** The service's clock minus ours, per organization, as last estimated from a listing. */
  offsets: Map<string, number>;
  /** Health requests sent (pages read, failed ones included). */
  requests: number;
}

export function newHealthMemory(): HealthMemory {
  return { off: new Set(), reads: new Map(), offsets: new Map(), requests: 0 };
}

export interface HealthViewDeps {
  api: Partial<Pick<CollectorUpgradeClient, 'healthEvents'>>;
  clock: Clock;
  logger: Logger;
  health?: HealthMemory;
}

/**
 * The service's clock minus ours, from a listing's sightings: each page's freshest heartbeat is
 * the service's "now" (within a heartbeat), taken when we asked for the page. The median.
 */
export function estimateOffset(
  sightings: Iterable<{ freshest: number; requestedAt: number }>,
): number | undefined {
  const d: number[] = [];
  for (const s of sightings) if (s.freshest > 0) d.push(s.freshest - s.requestedAt);
  if (d.length === 0) return undefined;
  d.sort((a, b) => a - b);
  return d[Math.floor(d.length / 2)];
}

/** Every unresolved event of the account, by Collector (decimal id). */
async function readAll(
  api: Pick<CollectorUpgradeClient, 'healthEvents'>,
  memory: HealthMemory,
): Promise<Map<number, HealthEvent[]>> {
  const byCollector = new Map<number, HealthEvent[]>();
  let token: string | undefined;
  for (let page = 0; page < MAX_HEALTH_PAGES; page++) {
    memory.requests++;
    const p = await api.healthEvents(token === undefined ? {} : { token });
    for (const e of p.events) {
      if (e.collectorId === undefined) continue;
      const list = byCollector.get(e.collectorId) ?? [];
      list.push(e);
      byCollector.set(e.collectorId, list);
    }
    if (p.next === null || p.next === token) return byCollector;
    token = p.next;
  }
  throw new Error(`more than ${MAX_HEALTH_PAGES} pages of health events`);
}

/**
 * The view of organization `org`'s health events for this pass: a fresh read when some
 * Collector's verdict waits for one and the last read is `interval` old, else the last read.
 * Undefined when health events are not judged (policy off, no memory or client for them).
 */
export async function readHealthView(
  deps: HealthViewDeps,
  rollout: RolloutRecord,
  org: string,
  build: string,
  records: readonly CollectorRecord[],
  events: ReadonlyMap<number, CollectorEvent>,
  sightings: Iterable<{ freshest: number; requestedAt: number }> | undefined,
): Promise<HealthView | undefined> {
  const verify = rollout.settings.verify;
  const memory = deps.health;
  const api = deps.api;
  if (!verify?.health || !memory || !api.healthEvents || !sendsHealthEvents(build)) return undefined;
  if (memory.off.has(org)) return { kind: 'off' };
  const offset = sightings ? estimateOffset(sightings) : undefined;
  if (offset !== undefined) memory.offsets.set(org, offset);
  const now = deps.clock.now();
  const last = memory.reads.get(org);
  const waiting = records.some((r) => {
    const e = events.get(r.id);
    return e?.type === 'verified' && !e.message;
  });
  if (!waiting || (last && now < last.nextAt)) return last;
  try {
    const byCollector = await readAll({ healthEvents: api.healthEvents }, memory);
    const view: HealthView = {
      kind: 'events',
      at: now,
      offsetMs: memory.offsets.get(org) ?? 0,
      byCollector,
      nextAt: now + verify.intervalMs,
    };
    memory.reads.set(org, view);
    return view;
  } catch (err) {
    if (err instanceof ApiError && (err.kind === 'not_found' || err.kind === 'permission')) {
      memory.off.add(org);
      deps.logger.warn(
        { org, status: err.status, code: err.vendorCode },
        'the account answers no health events: verification by heartbeat only',
      );
      return { kind: 'off' };
    }
    const message = err instanceof Error ? err.message : String(err);
    deps.logger.warn({ org, err: message }, 'health events could not be read');
    const view: HealthView = { kind: 'unreadable', message, nextAt: now + verify.intervalMs };
    memory.reads.set(org, view);
    return view;
  }
}
