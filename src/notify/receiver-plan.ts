/**
 * What a `notify:` receiver does with an event, as pure decisions (webhook-consumer.ts applies them):
 *
 * - routing: the event's type is one it wants, its policy one it names, its organizations (the
 *   event's `detail.org`, else those of its rollout) meet the ones it names;
 * - summaries: `collectors.failed` events (Collectors that ended failed, timed_out or error) wait
 *   the receiver's window from the first one, then all of them held become one message;
 * - PagerDuty: only what needs a person pages (a halt, a quarantine, refused credentials, a daemon
 *   problem older than 5 minutes); what ends it resolves, with the
 *   same `dedup_key` (one incident per rollout and subject). A resolve waits the window: when the
 *   condition comes back meanwhile (a flap), the resolve is dropped and the trigger updates the
 *   incident that is still open, so a flapping condition pages once.
 */

import type { Receiver } from './receiver.js';
import type { OutboxEvent } from './schema.js';

export type PageAction = { action: 'trigger' | 'resolve'; subject: string };

const detailOf = (event: OutboxEvent): Record<string, unknown> =>
  typeof event.detail === 'object' && event.detail !== null ? (event.detail as Record<string, unknown>) : {};

/** The organization an event names itself (an organization's part), if any. */
export function eventOrg(event: OutboxEvent): string | undefined {
  const org = detailOf(event).org;
  return typeof org === 'string' && org !== '' ? org : undefined;
}

/** Whether an organization's service refused its credentials (what `org.waiting` tells). */
const credentialsRefused = (event: OutboxEvent): boolean =>
  /credentials refused/i.test(String(detailOf(event).reason ?? ''));

/** The PagerDuty action of an event, or undefined: it does not page. */
export function pageAction(event: OutboxEvent): PageAction | undefined {
  const d = detailOf(event);
  switch (event.type) {
    case 'rollout.halted':
      return { action: 'trigger', subject: 'halted' };
    case 'cohort.quarantined':
      return { action: 'trigger', subject: `cohort:${String(d.cohort ?? '')}` };
    case 'org.waiting':
      return credentialsRefused(event) ? { action: 'trigger', subject: `org:${eventOrg(event)}` } : undefined;
    case 'org.recovered':
      return credentialsRefused(event) ? { action: 'resolve', subject: `org:${eventOrg(event)}` } : undefined;
    case 'rollout.resumed':
      // Resumed out of the halt (an abort resolves it with rollout.aborted).
      return d.released === 'halted' ? { action: 'resolve', subject: 'halted' } : undefined;
    case 'rollout.aborted':
    case 'rollout.superseded':
      return { action: 'resolve', subject: 'halted' };
    // A daemon problem older than 5 minutes (rollout/tick/tell-problems.ts), and its end.
    case 'daemon.problem':
      return { action: 'trigger', subject: problemSubject(d) };
    case 'daemon.problem_ended':
      return { action: 'resolve', subject: problemSubject(d) };
    default:
      return undefined;
  }
}

/** `daemon:<kind>:<subject>`: one daemon problem, whichever rollouts tell it. */
const problemSubject = (d: Record<string, unknown>): string =>
  `daemon:${String(d.kind ?? '')}:${String(d.subject ?? '')}`;

/**
 * PagerDuty's `dedup_key`: one per rollout and subject (at most 255 characters, as the Events API
 * v2 documents for dedup_key); a daemon problem's is the deployment's, not a rollout's, so that
 * the rollouts that tell it update one incident.
 */
export function dedupKey(event: OutboxEvent, subject: string): string {
  if (subject.startsWith('daemon:')) return `fleet-upgrade/${subject}`.slice(0, 255);
  return `fleet-upgrade/${event.rollout}/${subject}`.slice(0, 255);
}

/** Whether the receiver sends `event` at all (its type, its policy, its organizations). */
export function routes(receiver: Receiver, event: OutboxEvent, orgs: readonly string[]): boolean {
  if (receiver.policies && !receiver.policies.has(String(event.policy ?? ''))) return false;
  if (receiver.orgs && !orgs.some((o) => receiver.orgs?.has(o))) return false;
  if (receiver.kind === 'pagerduty') return pageAction(event) !== undefined;
  return true;
}

/** Held events with the same key become one message (undefined: sent alone). */
export function batchKey(receiver: Receiver, event: OutboxEvent): string | undefined {
  if (receiver.kind === 'pagerduty') {
    const page = pageAction(event);
    return page ? dedupKey(event, page.subject) : undefined;
  }
  return event.type === 'collectors.failed' ? 'collectors.failed' : undefined;
}

/** Whether the event waits the receiver's window before it is sent (a summary, a resolve). */
export function waitsWindow(receiver: Receiver, event: OutboxEvent): boolean {
  if (receiver.kind === 'pagerduty') return pageAction(event)?.action === 'resolve';
  return event.type === 'collectors.failed';
}

/** A summary takes every held event of its key, due or not (they came within its window). */
export const isSummary = (receiver: Receiver, event: OutboxEvent): boolean =>
  receiver.kind !== 'pagerduty' && event.type === 'collectors.failed';
