/**
 * What the service's health events add to a verification pass (policy `verify.healthEvents`):
 * alive on the build is not enough, the Collector must also raise no new health event of a
 * counted kind through its bake. A pure step over the pass's events (verify-collectors.ts):
 * - a Collector on a build before HEALTH_EVENTS_SINCE: judged by heartbeat only, said so in its
 *   message (such builds send no events);
 * - the account answers no health events (`off`): heartbeat only, said so;
 * - a read (`events`): an unresolved event of the Collector raised after its create (the
 *   baseline: what it had before is not the build's doing), counted by severity and tracker →
 *   `unhealthy`, the tracker as its cause, whatever the heartbeat said; a Collector the
 *   heartbeat verified whose bake ended after the read was taken waits for the next read (a read
 *   must cover the whole bake);
 * - no usable read (`stale`, `unreadable`): a Collector the heartbeat verified waits for the next
 *   read, until its verification deadline, then is verified by heartbeat only, said so. While it
 *   waits (AWAITING_HEALTH) its looks read no listing: the heartbeat had its word.
 * Times: the read's `at` and the record's are ours; an event's time is the service's, compared
 * with the create as the service saw it (`offsetMs`: the service's clock minus ours).
 */
import type { HealthEvent } from '../../api/index.js';
import { compareBuildVersions } from '../../lib/version.js';
import type { HealthSettings, VerifySettings } from '../../policy/verify.js';
import type { CollectorEvent, CollectorRecord } from '../collector/index.js';

/** The first build that sends health events (the vendor's documentation of health events). */
export const HEALTH_EVENTS_SINCE = '19.308-2';

export function sendsHealthEvents(build: string): boolean {
  return compareBuildVersions(build, HEALTH_EVENTS_SINCE) >= 0;
}

/**
 * The message of a Collector the heartbeat verified through its bake, waiting for a read of the
 * health events that covers the bake: its next look needs that read only, not the listing.
 */
export const AWAITING_HEALTH = 'alive through its bake; awaiting a health-event read that covers it';

/** Whether the heartbeat already verified `r` and only the health events' word is awaited. */
export function awaitingHealth(r: Pick<CollectorRecord, 'state' | 'message'>): boolean {
  return r.state === 'verifying' && r.message === AWAITING_HEALTH;
}

/** What the pass knows of the organization's health events. */
export type HealthView =
  | {
      kind: 'events';
      /** Our clock when the read began. */
      at: number;
      /** The service's clock minus ours (verify-collectors.ts estimates it from the listing). */
      offsetMs: number;
      byCollector: ReadonlyMap<number, readonly HealthEvent[]>;
      /** When the next read may be taken (our clock). */
      nextAt: number;
    }
  | { kind: 'off' }
  | { kind: 'unreadable'; message: string; nextAt: number };

/** Whether `e` is of a kind the policy counts. */
export function counted(e: HealthEvent, h: HealthSettings): boolean {
  if (!h.severities.includes(e.severity)) return false;
  if (h.trackers && !h.trackers.includes(e.trackerId)) return false;
  return !h.ignore.includes(e.trackerId);
}

/** The counted events of `r` raised after its create, oldest first. */
export function newEvents(
  r: CollectorRecord,
  view: Extract<HealthView, { kind: 'events' }>,
  h: HealthSettings,
): HealthEvent[] {
  const created = (r.createSentAt ?? r.requestTime ?? r.admittedAt ?? 0) + view.offsetMs;
  return (view.byCollector.get(r.id) ?? [])
    .filter((e) => e.eventTime > created && counted(e, h))
    .sort((a, b) => a.eventTime - b.eventTime);
}

/** The message and cause of a Collector made unhealthy by `e`. */
export function unhealthyBy(e: HealthEvent, build: string): CollectorEvent {
  const what = e.description ? `: ${e.description}` : '';
  return {
    type: 'unhealthy',
    message: `health event ${e.trackerName} (${e.trackerId}, ${e.severity}) on ${build} since ${new Date(e.eventTime).toISOString()}${what}`,
    failureClass: `health:${e.trackerId}`,
  };
}

/** The pass's `events` with what the health events say of `records` (a new map). */
export function healthVerdicts(
  records: readonly CollectorRecord[],
  events: ReadonlyMap<number, CollectorEvent>,
  view: HealthView | undefined,
  verify: VerifySettings | undefined,
  build: string,
  now: number,
): Map<number, CollectorEvent> {
  const out = new Map(events);
  const h = verify?.health;
  if (!verify || !h) return out;
  const old = !sendsHealthEvents(build);
  for (const r of records) {
    const e = events.get(r.id);
    // No view: nothing reads health events here (a client without them): the heartbeat's word.
    if (!e || e.type === 'unhealthy' || (!view && !old)) continue;
    if (old || view?.kind === 'off') {
      if (e.type === 'verified' && !e.message) {
        const why = old
          ? `builds before ${HEALTH_EVENTS_SINCE} send no health events`
          : 'the account answers no health events';
        out.set(r.id, { type: 'verified', message: `verified by heartbeat only: ${why}` });
      }
      continue;
    }
    if (!view) continue;
    if (view.kind === 'events') {
      const [first] = newEvents(r, view, h);
      if (first) {
        out.set(r.id, unhealthyBy(first, build));
        continue;
      }
    }
    if (e.type !== 'verified' || e.message) continue;
    // The heartbeat verified it: only a read taken after its bake ended may agree.
    const bakeEnd = (r.seenOnBuildAt ?? now) + verify.bakeMs;
    if (view.kind === 'events' && view.at >= bakeEnd) continue;
    const deadline = bakeEnd + verify.withinMs;
    if (now >= deadline) {
      const why = view.kind === 'unreadable' ? view.message : 'none was read after its bake';
      out.set(r.id, { type: 'verified', message: `verified by heartbeat only: health events: ${why}` });
      continue;
    }
    const nextAt = view.nextAt;
    out.set(r.id, {
      type: 'verify_later',
      message: AWAITING_HEALTH,
      dueAt: Math.max(now + 1, Math.min(nextAt, deadline)),
    });
  }
  return out;
}
