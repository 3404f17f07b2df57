/**
 * A PagerDuty Events API v2 event (developer.pagerduty.com, "Send an Alert Event", POST
 * /v2/enqueue): `routing_key` (the integration key), `event_action` (trigger | acknowledge |
 * resolve), `dedup_key` (at most 255 characters; the same key updates one open incident, and a
 * resolve with it closes it) and, for a trigger, `payload` with the required `summary` (at most
 * 1024 characters), `source` and `severity` (critical | error | warning | info), and the optional
 * `timestamp`, `component`, `group`, `class` and `custom_details`; `links` beside it. A resolve
 * needs no payload.
 */
import type { MessageFacts } from './message-facts.js';
import type { Receiver } from './receiver.js';
import type { PageAction } from './receiver-plan.js';
import { dedupKey } from './receiver-plan.js';
import { cut } from './slack-message.js';

export const PAGERDUTY_EVENT_ACTIONS = ['trigger', 'acknowledge', 'resolve'] as const;
export const PAGERDUTY_SUMMARY_CHARS = 1024;

export function pagerDutyEvent(
  receiver: Receiver,
  facts: MessageFacts,
  page: PageAction,
): Record<string, unknown> {
  const e = facts.event;
  const base = {
    routing_key: receiver.routingKey?.reveal() ?? '',
    event_action: page.action,
    dedup_key: dedupKey(e, page.subject),
  };
  if (page.action === 'resolve') return base;
  return {
    ...base,
    // `links`: [{href, text}] shown on the alert (Events API v2).
    ...(facts.link ? { links: [{ href: facts.link, text: 'The rollout in fleet-upgrade' }] } : {}),
    payload: {
      summary: cut(facts.text, PAGERDUTY_SUMMARY_CHARS),
      source: 'fleet-upgrade',
      severity: receiver.severity,
      timestamp: typeof e.at === 'number' ? new Date(e.at).toISOString() : undefined,
      component: String(e.policy ?? e.rollout),
      group: facts.orgs.join(',') || 'default',
      class: e.type,
      custom_details: {
        rollout: e.rollout,
        build: e.build,
        event: e.id,
        subject: page.subject,
        message: e.message,
        ...(typeof e.actor === 'string' ? { actor: e.actor } : {}),
        ...(typeof e.detail === 'object' && e.detail !== null ? { detail: e.detail } : {}),
      },
    },
  };
}
