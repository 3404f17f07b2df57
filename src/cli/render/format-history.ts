/**
 * `history`'s lines: when, event type, who, the organization when the event has one (a column of
 * its own only when some event has one), what; text from outside escaped (sanitize.ts).
 */
import type { RecordedEvent } from '../../rollout/index.js';
import { sanitize } from './sanitize.js';

/** The organization an event is about (its detail's `org`), or undefined. */
export function eventOrg(e: Pick<RecordedEvent, 'detail'>): string | undefined {
  const org = e.detail?.org;
  return typeof org === 'string' ? org : undefined;
}

export function formatHistory(events: readonly RecordedEvent[]): string {
  if (events.length === 0) return 'no events';
  const orgs = events.map((e) => {
    const org = eventOrg(e);
    return org === undefined ? '' : `org ${sanitize(org)}`;
  });
  const orgWidth = Math.max(...orgs.map((o) => o.length));
  return events
    .map((e, i) => {
      const who = e.actor ? `${e.source}:${e.actor}` : e.source;
      const org = orgWidth > 0 ? `${(orgs[i] ?? '').padEnd(orgWidth)}  ` : '';
      return `${new Date(e.at).toISOString()}  ${e.type.padEnd(25)}  ${sanitize(who).padEnd(20)}  ${org}${sanitize(e.message)}`;
    })
    .join('\n');
}
