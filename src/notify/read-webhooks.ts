/**
 * The webhooks of the settings file, resolved: URL and secret read from the environment or a
 * file, defaults filled in. A pure function of its inputs (the file's section, the environment,
 * a file reader); every problem names the settings file, the line when known, and the field.
 */
import { readFileSync } from 'node:fs';
import type { SourceIssue } from '../lib/errors.js';
import { formatFieldPath } from '../lib/source/yaml-source.js';
import type { RolloutEventType } from '../rollout/index.js';
import type { Receiver } from './receiver.js';
import { defaultWebhookName, isHttpUrl, type WebhookFormat, type WebhookListFile } from './schema.js';
import { Secret } from './secret.js';
import { webhookOrigin } from './webhook-origin.js';

export interface WebhookRetry {
  /** Wait after the first failed attempt, in ms; it doubles after each failure in a row. */
  initialMs: number;
  /** Longest wait between two attempts, in ms. */
  maxMs: number;
  /** An event recorded longer ago than this (ms) is given up when an attempt fails. */
  giveUpAfterMs: number;
}

export interface Webhook {
  /** Its name in logs and metrics, and its consumer group in Redis. */
  name: string;
  /** Where it is sent, without credentials (those of `urlEnv`'s URL are `authorization`). */
  url: string;
  /** `Basic ...` from the `user:password@` of `urlEnv`'s URL, sent with every request. */
  authorization?: Secret;
  /** Event types sent; `'*'`: every type (also types added by later versions). */
  events: '*' | ReadonlySet<RolloutEventType>;
  format: WebhookFormat;
  /** Signs each request (`X-Fleet-Upgrade-Signature`) when set. */
  secret?: Secret;
  /** One attempt's limit in real ms. */
  timeoutMs: number;
  retry: WebhookRetry;
  /** A `notify:` receiver (Slack, Teams, PagerDuty): its message shape and routing (read-receivers.ts). */
  receiver?: Receiver;
}

export const WEBHOOK_DEFAULTS = {
  timeoutMs: 10_000,
  retry: { initialMs: 1_000, maxMs: 300_000, giveUpAfterMs: 86_400_000 },
} as const;

export interface ReadWebhooksInput {
  /** The file's `webhooks` section, already validated by its schema. */
  list: WebhookListFile;
  /** The settings file, for error messages. */
  file: string;
  env: NodeJS.ProcessEnv;
  /** Default: read from disk. */
  readFile?: (path: string) => string;
  /** Line and column of a field of the settings file, when they can be found. */
  locate?: (path: readonly PropertyKey[]) => { line: number; column: number } | undefined;
}

export function readWebhooks(input: ReadWebhooksInput): { webhooks: Webhook[]; issues: SourceIssue[] } {
  const { list, file, env } = input;
  const readFile = input.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const issues: SourceIssue[] = [];
  const problem = (path: (string | number)[], reason: string) => {
    const full = ['webhooks', ...path];
    const pos = input.locate?.(full);
    issues.push({ file, line: pos?.line, column: pos?.column, field: formatFieldPath(full), reason });
  };
  const webhooks: Webhook[] = [];
  list.forEach((w, i) => {
    let url = w.url;
    if (w.urlEnv !== undefined) {
      url = env[w.urlEnv]?.trim() || undefined;
      if (url === undefined) problem([i, 'urlEnv'], `the environment variable ${w.urlEnv} is not set`);
      else if (!isHttpUrl(url))
        problem([i, 'urlEnv'], `${w.urlEnv} does not hold an http:// or https:// URL`);
    }
    let secret: Secret | undefined;
    if (w.secretEnv !== undefined) {
      const value = env[w.secretEnv]?.trim();
      if (!value) problem([i, 'secretEnv'], `the environment variable ${w.secretEnv} is not set`);
      else secret = new Secret(value);
    } else if (w.secretFile !== undefined) {
      let text: string | undefined;
      try {
        text = readFile(w.secretFile);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
        problem([i, 'secretFile'], `cannot read ${w.secretFile} (${code})`);
      }
      // A mounted secret usually ends in a newline.
      const value = text?.trim();
      if (text !== undefined && !value) problem([i, 'secretFile'], `${w.secretFile} is empty`);
      else if (value) secret = new Secret(value);
    }
    if (url === undefined || !isHttpUrl(url)) return;
    // `user:password@` of the environment's URL: sent as HTTP basic auth, never in the URL.
    const { url: target, authorization } = splitCredentials(url);
    const webhook: Webhook = {
      name: w.name ?? defaultWebhookName(i),
      url: target,
      events: eventFilter(w.events),
      format: w.format ?? 'json',
      timeoutMs: w.timeout ?? WEBHOOK_DEFAULTS.timeoutMs,
      retry: {
        initialMs: w.retry?.initial ?? WEBHOOK_DEFAULTS.retry.initialMs,
        maxMs: w.retry?.max ?? WEBHOOK_DEFAULTS.retry.maxMs,
        giveUpAfterMs: w.retry?.giveUpAfter ?? WEBHOOK_DEFAULTS.retry.giveUpAfterMs,
      },
    };
    if (secret) webhook.secret = secret;
    if (authorization) webhook.authorization = authorization;
    // Settings logged whole (by mistake) show where the webhook points, not its path or query.
    Object.defineProperty(webhook, 'toJSON', { value: () => describeWebhook(webhook), enumerable: false });
    if (webhook.retry.maxMs < webhook.retry.initialMs)
      problem([i, 'retry', 'max'], 'must be at least retry.initial');
    webhooks.push(webhook);
  });
  return { webhooks, issues };
}

/**
 * A URL's `user:password@` as the value of an `Authorization: Basic` header (both percent-decoded,
 * as a browser does), and the URL without them.
 */
export function splitCredentials(url: string): { url: string; authorization?: Secret } {
  const u = new URL(url);
  if (u.username === '' && u.password === '') return { url };
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  const pair = `${decode(u.username)}:${decode(u.password)}`;
  u.username = '';
  u.password = '';
  return {
    url: u.toString(),
    authorization: new Secret(`Basic ${Buffer.from(pair, 'utf8').toString('base64')}`),
  };
}

/** What may be logged about a webhook: no secret, no URL path or query (they may carry a token). */
export function describeWebhook(w: Webhook): Record<string, unknown> {
  return {
    name: w.name,
    target: webhookOrigin(w.url),
    format: w.format,
    events: w.events === '*' ? '*' : [...w.events],
    signed: w.secret !== undefined,
    basicAuth: w.authorization !== undefined,
    ...(w.receiver ? { kind: w.receiver.kind } : {}),
  };
}

function eventFilter(events: WebhookListFile[number]['events']): Webhook['events'] {
  if (events === undefined || events.includes('*')) return '*';
  return new Set(events.filter((e): e is RolloutEventType => e !== '*'));
}
