/**
 * A Microsoft Teams Workflows webhook's body: one Adaptive Card in the message envelope that the
 * "When a Teams webhook request is received" flow accepts: `{"type":"message","attachments":
 * [{"contentType":"application/vnd.microsoft.card.adaptive","content":{...}}]}`.
 * The card follows the Adaptive Card schema (adaptivecards.io/explorer): the root requires `type`
 * ("AdaptiveCard") and `version` (the top-level card must name it); a TextBlock requires `text`; a
 * FactSet requires `facts`, each Fact `title` and `value`. Version 1.4: what Teams renders in
 * channels and chats (newer elements are not needed here). `fallbackText` is shown by clients
 * that cannot render the card.
 */
import type { MessageFacts } from './message-facts.js';
import { cut } from './slack-message.js';

export const ADAPTIVE_CARD_VERSION = '1.4';
export const ADAPTIVE_CARD_CONTENT_TYPE = 'application/vnd.microsoft.card.adaptive';

/** Keeps a card small: Teams refuses a message above about 28 KB. */
const MAX_TEXT = 3000;

export function teamsCard(facts: MessageFacts): Record<string, unknown> {
  const card = {
    $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
    type: 'AdaptiveCard',
    version: ADAPTIVE_CARD_VERSION,
    fallbackText: cut(facts.text, MAX_TEXT),
    body: [
      { type: 'TextBlock', text: cut(facts.title, 150), weight: 'Bolder', size: 'Medium', wrap: true },
      { type: 'TextBlock', text: cut(facts.text, MAX_TEXT), wrap: true },
      ...(facts.fields.length > 0
        ? [
            {
              type: 'FactSet',
              facts: facts.fields.map((f) => ({ title: f.label, value: cut(f.value, 500) })),
            },
          ]
        : []),
      { type: 'TextBlock', text: cut(facts.context, 500), isSubtle: true, size: 'Small', wrap: true },
    ],
    // Action.OpenUrl requires `url` (adaptivecards.io/explorer/Action.OpenUrl.html).
    ...(facts.link
      ? { actions: [{ type: 'Action.OpenUrl', title: 'Open the rollout', url: facts.link }] }
      : {}),
  };
  return {
    type: 'message',
    attachments: [{ contentType: ADAPTIVE_CARD_CONTENT_TYPE, contentUrl: null, content: card }],
  };
}
