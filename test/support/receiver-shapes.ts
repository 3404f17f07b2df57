/**
 * The documented shapes of what Slack, Teams and PagerDuty accept, written from their references
 * (not from our code), to check every payload a test receiver gets:
 * - Slack incoming webhooks with Block Kit (api.slack.com/reference/block-kit/blocks): `text`
 *   (the fallback) and at most 50 `blocks`; a header's plain_text at most 150 characters; a
 *   section's text at most 3000, at most 10 fields of at most 2000; a context at most 10 elements.
 * - Teams Workflows webhooks: `{"type":"message","attachments":[{"contentType":
 *   "application/vnd.microsoft.card.adaptive","content":<AdaptiveCard>}]}`; the card's `type`
 *   ("AdaptiveCard") and `version` are required, a TextBlock's `text`, a FactSet's `facts` (each
 *   `title` and `value`) too (adaptivecards.io/explorer).
 * - PagerDuty Events API v2: `routing_key`, `event_action` (trigger | acknowledge | resolve),
 *   `dedup_key` (at most 255); a trigger's `payload` with `summary` (at most 1024), `source`,
 *   `severity` (critical | error | warning | info); optional `component`, `group`, `class`,
 *   `custom_details`, `timestamp`; `links` ({href, text}) beside the payload.
 */
import { z } from 'zod';

const plain = (max: number) =>
  z.strictObject({
    type: z.literal('plain_text'),
    text: z.string().min(1).max(max),
    emoji: z.boolean().optional(),
  });
const textObject = (max: number) =>
  z.strictObject({ type: z.enum(['mrkdwn', 'plain_text']), text: z.string().min(1).max(max) });

const SlackBlock = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('header'), text: plain(150) }),
  z
    .strictObject({
      type: z.literal('section'),
      text: textObject(3000).optional(),
      fields: z.array(textObject(2000)).min(1).max(10).optional(),
    })
    .refine((s) => s.text !== undefined || s.fields !== undefined, 'a section needs text or fields'),
  z.strictObject({ type: z.literal('context'), elements: z.array(textObject(3000)).min(1).max(10) }),
  z.strictObject({ type: z.literal('divider') }),
]);

export const SlackPayload = z.strictObject({
  text: z.string().min(1).max(40_000),
  blocks: z.array(SlackBlock).min(1).max(50),
});
export type SlackPayload = z.infer<typeof SlackPayload>;

const CardElement: z.ZodType = z.lazy(() =>
  z.union([
    z.looseObject({ type: z.literal('TextBlock'), text: z.string().min(1) }),
    z.looseObject({
      type: z.literal('FactSet'),
      facts: z.array(z.strictObject({ title: z.string(), value: z.string() })).min(1),
    }),
  ]),
);

export const TeamsPayload = z.strictObject({
  type: z.literal('message'),
  attachments: z
    .array(
      z.looseObject({
        contentType: z.literal('application/vnd.microsoft.card.adaptive'),
        content: z.looseObject({
          type: z.literal('AdaptiveCard'),
          version: z.string().regex(/^1\.[0-6]$/),
          body: z.array(CardElement).min(1),
        }),
      }),
    )
    .length(1),
});
export type TeamsPayload = z.infer<typeof TeamsPayload>;

export const PagerDutyPayload = z.discriminatedUnion('event_action', [
  z.strictObject({
    routing_key: z.string().min(1),
    event_action: z.literal('trigger'),
    dedup_key: z.string().min(1).max(255),
    links: z.array(z.strictObject({ href: z.url(), text: z.string().optional() })).optional(),
    payload: z.strictObject({
      summary: z.string().min(1).max(1024),
      source: z.string().min(1),
      severity: z.enum(['critical', 'error', 'warning', 'info']),
      timestamp: z.iso.datetime().optional(),
      component: z.string().optional(),
      group: z.string().optional(),
      class: z.string().optional(),
      custom_details: z.record(z.string(), z.unknown()).optional(),
    }),
  }),
  z.strictObject({
    routing_key: z.string().min(1),
    event_action: z.enum(['acknowledge', 'resolve']),
    dedup_key: z.string().min(1).max(255),
  }),
]);
export type PagerDutyPayload = z.infer<typeof PagerDutyPayload>;

/** The text a person reads in a Slack payload (header, sections, fields). */
export function slackText(p: SlackPayload): string {
  return p.blocks
    .flatMap((b) => [
      ...('text' in b && b.text ? [b.text.text] : []),
      ...('fields' in b && b.fields ? b.fields.map((f) => f.text) : []),
      ...('elements' in b ? b.elements.map((e) => e.text) : []),
    ])
    .join('\n');
}
