/**
 * A Slack incoming webhook's body: Block Kit blocks with a plain-text fallback (`text`, what
 * notifications and clients without blocks show). Within Slack's documented limits (Block Kit
 * reference, api.slack.com/reference/block-kit/blocks): at most 50 blocks per message; a header's
 * plain_text at most 150 characters; a section's text at most 3000 characters; a section at most
 * 10 fields of at most 2000 characters each; a context at most 10 elements. Text is cut, never
 * refused: Slack answers 400 (invalid_blocks) to a block beyond its limit, and the message is lost.
 */
import type { MessageFacts } from './message-facts.js';
import { escapeSlack } from './webhook-body.js';

export const SLACK_LIMITS = {
  blocks: 50,
  headerChars: 150,
  sectionChars: 3000,
  fields: 10,
  fieldChars: 2000,
  contextElements: 10,
  /** The top-level `text`: Slack truncates beyond 40 000; kept to a section's size. */
  textChars: 3000,
} as const;

/** `text` cut to `max` characters, with an ellipsis when it was longer. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export interface SlackMessage {
  text: string;
  blocks: Record<string, unknown>[];
}

export function slackMessage(facts: MessageFacts): SlackMessage {
  const fields = facts.fields.slice(0, SLACK_LIMITS.fields).map((f) => ({
    type: 'mrkdwn',
    text: cut(`*${f.label}*\n${escapeSlack(f.value)}`, SLACK_LIMITS.fieldChars),
  }));
  const blocks: Record<string, unknown>[] = [
    {
      type: 'header',
      text: { type: 'plain_text', text: cut(facts.title, SLACK_LIMITS.headerChars), emoji: false },
    },
    {
      type: 'section',
      text: { type: 'mrkdwn', text: cut(escapeSlack(facts.text), SLACK_LIMITS.sectionChars) },
    },
  ];
  if (fields.length > 0) blocks.push({ type: 'section', fields });
  blocks.push({
    type: 'context',
    elements: [
      { type: 'mrkdwn', text: cut(escapeSlack(facts.context), SLACK_LIMITS.sectionChars) },
      // Slack's link syntax <url|text>; publicUrl holds no | < > and the rollout id is encoded.
      ...(facts.link
        ? [{ type: 'mrkdwn', text: cut(`<${facts.link}|open the rollout>`, SLACK_LIMITS.sectionChars) }]
        : []),
    ],
  });
  const plain = [
    facts.text,
    ...facts.fields.map((f) => `${f.label}: ${f.value}`),
    ...(facts.link ? [facts.link] : []),
  ].join('\n');
  return {
    text: cut(escapeSlack(plain), SLACK_LIMITS.textChars),
    blocks: blocks.slice(0, SLACK_LIMITS.blocks),
  };
}
