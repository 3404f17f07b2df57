/** `history`'s lines: when, event type, who, what; text from outside escaped (sanitize.ts). */
import type { RecordedEvent } from '../../rollout/index.js';
import { sanitize } from './sanitize.js';

export function formatHistory(events: readonly RecordedEvent[]): string {
  if (events.length === 0) return 'no events';
  return events
    .map((e) => {
      const who = e.actor ? `${e.source}:${e.actor}` : e.source;
      return `${new Date(e.at).toISOString()}  ${e.type.padEnd(25)}  ${sanitize(who).padEnd(20)}  ${sanitize(e.message)}`;
    })
    .join('\n');
}
