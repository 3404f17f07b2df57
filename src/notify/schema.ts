/**
 * The `webhooks` and `notify` sections of the settings file (zod), and the event as read back
 * from the outbox. A secret is never written in the file: `secret:` (and a PagerDuty
 * `routingKey:`) is refused with a message that says where to put it instead (a variable or a
 * file), so that a settings file can be shared or committed without leaking a key.
 */
import { z } from 'zod';
import { durationField } from '../policy/duration-field.js';
import { ROLLOUT_EVENT_TYPES } from '../rollout/index.js';
import { MAX_TEMPLATE_CHARS, TEMPLATE_FIELDS, unknownPlaceholders } from './message-templates.js';

export const WEBHOOK_FORMATS = ['json', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];
/** The kinds of `notify:` receivers (each its own message shape). */
export const RECEIVER_KINDS = ['slack', 'teams', 'pagerduty'] as const;
export type ReceiverKind = (typeof RECEIVER_KINDS)[number];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const WEBHOOK_NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;

const envName = z.string().regex(ENV_NAME, { error: 'expected the name of an environment variable' });

export function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname !== '';
  } catch {
    return false;
  }
}

/** Whether an http(s) URL carries `user:password@`. */
export function hasUrlCredentials(text: string): boolean {
  try {
    const u = new URL(text);
    return u.username !== '' || u.password !== '';
  } catch {
    return false;
  }
}

/**
 * An http or https URL; the message never repeats the value (a webhook URL may carry a token).
 * Credentials written into the file are refused, as a secret is: from `urlEnv` they are sent as
 * HTTP basic auth (read-webhooks.ts).
 */
const webhookUrl = z
  .string()
  .refine(isHttpUrl, { error: 'expected an http:// or https:// URL' })
  .refine((u) => !hasUrlCredentials(u), {
    error:
      'credentials in the URL are refused here: put the URL in an environment variable (urlEnv: NAME); its user and password are then sent as HTTP basic auth',
  });

const eventType = z.union([z.enum(ROLLOUT_EVENT_TYPES), z.literal('*')], {
  error: `expected an event type (${ROLLOUT_EVENT_TYPES.join(', ')}) or '*'`,
});

export const WebhookFile = z
  .strictObject({
    /** Names the webhook in logs and metrics, and its delivery position in Redis. Default `webhook-N`. */
    name: z
      .string()
      .regex(WEBHOOK_NAME, { error: 'expected lower-case letters, digits, - or _ (at most 40)' })
      .optional(),
    url: webhookUrl.optional(),
    /** The URL from this environment variable instead (a Slack URL is itself a credential). */
    urlEnv: envName.optional(),
    /** Event types to send, or `*` (default: every type). */
    events: z
      .preprocess(
        (v) => (v === '*' ? ['*'] : v),
        z.array(eventType).min(1, { error: "list at least one event type, or write '*' for every type" }),
      )
      .optional(),
    format: z.enum(WEBHOOK_FORMATS).optional(),
    secret: z
      .never({
        error:
          'an inline secret is refused: name an environment variable (secretEnv: NAME) or a file (secretFile: PATH) that holds it',
      })
      .optional(),
    secretEnv: envName.optional(),
    secretFile: z.string().min(1).optional(),
    /** One attempt, from connecting to the answer's status. Default 10s. */
    timeout: durationField({ min: 100, max: 300_000 }).optional(),
    retry: z
      .strictObject({
        /** First wait after a failed attempt. Default 1s. */
        initial: durationField({ min: 10, max: 3_600_000 }).optional(),
        /** Longest wait between two attempts. Default 5m. */
        max: durationField({ min: 10, max: 86_400_000 }).optional(),
        /** An event this old whose attempt fails is given up. Default 24h. */
        giveUpAfter: durationField({ min: 100, max: 30 * 86_400_000 }).optional(),
      })
      .optional(),
  })
  .superRefine((w, ctx) => {
    if ((w.url === undefined) === (w.urlEnv === undefined))
      ctx.addIssue({
        code: 'custom',
        path: w.url === undefined ? [] : ['urlEnv'],
        message: 'set exactly one of url and urlEnv',
      });
    if (w.secretEnv !== undefined && w.secretFile !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['secretFile'],
        message: 'set only one of secretEnv and secretFile',
      });
  });
export type WebhookFile = z.infer<typeof WebhookFile>;

/** The default name of the `index`-th (0-based) webhook of the list. */
export const defaultWebhookName = (index: number): string => `webhook-${index + 1}`;

export const WebhookListFile = z.array(WebhookFile).superRefine((list, ctx) => {
  const seen = new Set<string>();
  list.forEach((w, i) => {
    const name = w.name ?? defaultWebhookName(i);
    if (seen.has(name))
      ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `another webhook is named '${name}'` });
    seen.add(name);
  });
});
export type WebhookListFile = z.infer<typeof WebhookListFile>;

/** The deployment's public address (no credentials, no query): messages link to rollouts there. */
export const PublicUrl = z
  .string()
  .refine(isHttpUrl, { error: 'expected an http:// or https:// URL' })
  .refine((u) => !hasUrlCredentials(u) && !u.includes('?') && !u.includes('#') && !/[|<>\s]/.test(u), {
    error: 'expected a URL without credentials, query, fragment, spaces or | < >',
  });

/** A receiver's URL: written (a test's loopback), or from a variable or a file (it is a secret). */
const secretUrl = z
  .strictObject({
    url: webhookUrl.optional(),
    /** The URL from this environment variable (Slack's and Teams' webhook URLs are credentials). */
    urlEnv: envName.optional(),
    /** The URL from this file (a mounted secret; surrounding white space dropped). */
    urlFile: z.string().min(1).optional(),
  })
  .superRefine((s, ctx) => {
    const set = [s.url, s.urlEnv, s.urlFile].filter((v) => v !== undefined).length;
    if (set !== 1) ctx.addIssue({ code: 'custom', message: 'set exactly one of url, urlEnv and urlFile' });
  });

/** PagerDuty Events API v2 severities (payload.severity). */
export const PAGERDUTY_SEVERITIES = ['critical', 'error', 'warning', 'info'] as const;
export type PagerDutySeverity = (typeof PAGERDUTY_SEVERITIES)[number];

const pagerDuty = z
  .strictObject({
    /** The integration's routing key, from this environment variable. */
    routingKeyEnv: envName.optional(),
    /** ... or from this file. */
    routingKeyFile: z.string().min(1).optional(),
    routingKey: z
      .never({
        error:
          'an inline routing key is refused: name an environment variable (routingKeyEnv: NAME) or a file (routingKeyFile: PATH) that holds it',
      })
      .optional(),
    /** payload.severity of the incidents it triggers. Default `error`. */
    severity: z.enum(PAGERDUTY_SEVERITIES).optional(),
    /** The Events API endpoint. Default https://events.pagerduty.com/v2/enqueue (tests: loopback). */
    url: webhookUrl.optional(),
  })
  .superRefine((p, ctx) => {
    if ((p.routingKeyEnv === undefined) === (p.routingKeyFile === undefined))
      ctx.addIssue({ code: 'custom', message: 'set exactly one of routingKeyEnv and routingKeyFile' });
  });

const template = z
  .string()
  .min(1)
  .max(MAX_TEMPLATE_CHARS)
  .superRefine((t, ctx) => {
    const unknown = unknownPlaceholders(t);
    if (unknown.length > 0)
      ctx.addIssue({
        code: 'custom',
        message: `unknown placeholder ${unknown.map((u) => `{${u}}`).join(', ')}: use ${Object.keys(
          TEMPLATE_FIELDS,
        )
          .map((f) => `{${f}}`)
          .join(', ')}`,
      });
  });

const ORG_OR_POLICY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const nameList = (what: string) =>
  z
    .array(z.string().regex(ORG_OR_POLICY, { error: `expected the name of ${what}` }))
    .min(1)
    .max(200);

/** A `notify:` receiver: Slack, Teams or PagerDuty, with its filters and templates. */
export const ReceiverFile = z
  .strictObject({
    /** Names it in logs and metrics, and its delivery position in Redis (`notify:<name>`). */
    name: z
      .string()
      .regex(WEBHOOK_NAME, { error: 'expected lower-case letters, digits, - or _ (at most 40)' }),
    /** A Slack incoming webhook (Block Kit with a plain-text fallback). */
    slack: secretUrl.optional(),
    /** A Microsoft Teams Workflows webhook (an Adaptive Card). */
    teams: secretUrl.optional(),
    /** PagerDuty Events API v2: incidents for what needs a person. */
    pagerduty: pagerDuty.optional(),
    /** Event types sent, or `*` (default: every type; PagerDuty pages only what needs a person). */
    events: z
      .preprocess(
        (v) => (v === '*' ? ['*'] : v),
        z.array(eventType).min(1, { error: "list at least one event type, or write '*' for every type" }),
      )
      .optional(),
    /** Only events of rollouts that cover one of these organizations. Default: any. */
    orgs: nameList('an organization').optional(),
    /** Only events of these policies. Default: any. */
    policies: nameList('a policy').optional(),
    /** Per-Collector events within this window become one summary. Default 60s. */
    window: durationField({ min: 10, max: 3_600_000 }).optional(),
    /** The leading sentence per event type (`fleet-upgrade notify --print` shows the defaults). */
    templates: z.partialRecord(z.enum(ROLLOUT_EVENT_TYPES), template).optional(),
    timeout: durationField({ min: 100, max: 300_000 }).optional(),
    retry: z
      .strictObject({
        initial: durationField({ min: 10, max: 3_600_000 }).optional(),
        max: durationField({ min: 10, max: 86_400_000 }).optional(),
        giveUpAfter: durationField({ min: 100, max: 30 * 86_400_000 }).optional(),
      })
      .optional(),
  })
  .superRefine((r, ctx) => {
    const kinds = [r.slack, r.teams, r.pagerduty].filter((k) => k !== undefined).length;
    if (kinds !== 1)
      ctx.addIssue({ code: 'custom', message: 'set exactly one of slack, teams and pagerduty' });
  });
export type ReceiverFile = z.infer<typeof ReceiverFile>;

export const ReceiverListFile = z
  .array(ReceiverFile)
  .max(100)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((r, i) => {
      if (seen.has(r.name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `another receiver is named '${r.name}'` });
      seen.add(r.name);
    });
  });
export type ReceiverListFile = z.infer<typeof ReceiverListFile>;

/** An event as read from the outbox: what delivery needs, everything else passed on untouched. */
export const OutboxEvent = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  rollout: z.string(),
  message: z.string(),
});
export type OutboxEvent = z.infer<typeof OutboxEvent>;
