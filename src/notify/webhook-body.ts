/**
 * The body of a webhook request. `json`: the event exactly as recorded (id, type, rollout,
 * policy, build, at, source, actor?, message, detail?). `slack`: `{"text": ...}`, what Slack's
 * incoming webhooks (and Mattermost, Rocket.Chat, Teams' Slack-compatible endpoints) accept: the
 * event's message, led by the rollout when the message does not name it.
 */
import type { OutboxEvent, WebhookFormat } from './schema.js';

/** Slack's mrkdwn control characters, escaped as Slack asks (&, <, >). */
export function escapeSlack(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function webhookBody(format: WebhookFormat, event: OutboxEvent, recorded: string): string {
  switch (format) {
    case 'json':
      return recorded;
    case 'slack': {
      const text = event.message.includes(event.rollout)
        ? event.message
        : `${event.rollout}: ${event.message}`;
      return JSON.stringify({ text: escapeSlack(text) });
    }
  }
}
