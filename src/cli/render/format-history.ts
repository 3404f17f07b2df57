/**
 * `history`'s lines. Within `width` columns (default 80): an event's when (ISO 8601, UTC), type,
 * who and organization on one line, what below it, indented and wrapped. `--wide`: one line per
 * event, in columns: when, event type, who, the organization when the event has one (a column of
 * its own only when some event has one), what. Text from outside escaped (sanitize.ts). Every
 * time, the event's and those its sentence names (written `2026-11-27 10:00 (UTC)` by a ring,
 * `…T10:00:00.000Z` by others), is shown one way: ISO 8601 in UTC, to the second (`oneTimeFormat`).
 */
import type { RecordedEvent } from '../../rollout/index.js';
import { wrapText } from './format-status.js';
import { sanitize } from './sanitize.js';

/** The organization an event is about (its detail's `org`), or undefined. */
export function eventOrg(e: Pick<RecordedEvent, 'detail'>): string | undefined {
  const org = e.detail?.org;
  return typeof org === 'string' ? org : undefined;
}

/** `2026-06-05T14:32:07Z`: ISO 8601 in UTC, to the second. */
export function isoSecond(at: number): string {
  return new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** A sentence's times (`2026-11-27 10:00[:05] (UTC)`, `2026-11-27T10:00:05.123Z`) as `isoSecond` writes them. */
export function oneTimeFormat(text: string): string {
  return text
    .replace(/\b(\d{4}-\d\d-\d\d) (\d\d:\d\d)(:\d\d)? \(UTC\)/g, (_, d, hm, s) => `${d}T${hm}${s ?? ':00'}Z`)
    .replace(/\b(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d{3}Z/g, '$1Z');
}

export function formatHistory(
  events: readonly RecordedEvent[],
  format: { wide?: boolean; width?: number } = {},
): string {
  const width = format.wide ? undefined : (format.width ?? 80);
  if (events.length === 0) return 'no events';
  const orgs = events.map((e) => {
    const org = eventOrg(e);
    return org === undefined ? '' : `org ${sanitize(org)}`;
  });
  const who = (e: RecordedEvent) => sanitize(e.actor ? `${e.source}:${e.actor}` : e.source);
  if (width !== undefined)
    return events
      .flatMap((e, i) => {
        const head = [isoSecond(e.at), e.type, who(e), orgs[i]].filter(Boolean).join('  ');
        return [
          ...(head.length <= width ? [head] : wrapText(head, width, '', '  ')),
          ...wrapText(oneTimeFormat(sanitize(e.message)), width, '  ', '  '),
        ];
      })
      .join('\n');
  const orgWidth = Math.max(...orgs.map((o) => o.length));
  return events
    .map((e, i) => {
      const org = orgWidth > 0 ? `${(orgs[i] ?? '').padEnd(orgWidth)}  ` : '';
      return `${isoSecond(e.at)}  ${e.type.padEnd(25)}  ${who(e).padEnd(20)}  ${org}${oneTimeFormat(sanitize(e.message))}`;
    })
    .join('\n');
}
