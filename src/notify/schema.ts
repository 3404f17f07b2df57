/**
 * The `webhooks` section of the settings file (zod), and the event as read back from the outbox.
 * A secret is never written in the file: `secret:` is refused with a message that says where to
 * put it instead (`secretEnv` or `secretFile`), so that a settings file can be shared or
 * committed without leaking a signing key.
 */
import { z } from 'zod';
import { durationField } from '../policy/duration-field.js';
import { ROLLOUT_EVENT_TYPES } from '../rollout/index.js';

export const WEBHOOK_FORMATS = ['json', 'slack'] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

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

/** An event as read from the outbox: what delivery needs, everything else passed on untouched. */
export const OutboxEvent = z.looseObject({
  id: z.string().min(1),
  type: z.string().min(1),
  rollout: z.string(),
  message: z.string(),
});
export type OutboxEvent = z.infer<typeof OutboxEvent>;
