/**
 * The body a `notify:` receiver is sent for a batch of events (one event, or a summary): Slack
 * Block Kit, a Teams Adaptive Card, or a PagerDuty event whose action is the batch's last (a
 * resolve followed by a new trigger of the same condition is a trigger: the incident stays open).
 */
import { messageFacts, type RoutedEvent } from './message-facts.js';
import { pagerDutyEvent } from './pagerduty-event.js';
import type { Receiver } from './receiver.js';
import { pageAction } from './receiver-plan.js';
import { slackMessage } from './slack-message.js';
import { teamsCard } from './teams-card.js';

export function receiverBody(receiver: Receiver, batch: readonly RoutedEvent[]): string {
  const facts = messageFacts(receiver, batch);
  switch (receiver.kind) {
    case 'slack':
      return JSON.stringify(slackMessage(facts));
    case 'teams':
      return JSON.stringify(teamsCard(facts));
    case 'pagerduty': {
      const page = pageAction(facts.event) ?? { action: 'trigger' as const, subject: facts.event.type };
      return JSON.stringify(pagerDutyEvent(receiver, facts, page));
    }
  }
}
