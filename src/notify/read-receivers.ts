/**
 * The `notify:` receivers of the settings file (Slack, Teams, PagerDuty), resolved into webhooks
 * that the same outbox delivers (webhook-consumer.ts): the URL or routing key read from the
 * environment or a file, filters and templates set, defaults filled in. A pure function of its
 * inputs; every problem names the settings file, the line when known, and the field, never the
 * value (a Slack URL and a routing key are credentials).
 */
import { readFileSync } from 'node:fs';
import type { SourceIssue } from '../lib/errors.js';
import { formatFieldPath } from '../lib/source/yaml-source.js';
import type { RolloutEventType } from '../rollout/index.js';
import { DEFAULT_TEMPLATES } from './message-templates.js';
import { describeWebhook, type ReadWebhooksInput, WEBHOOK_DEFAULTS, type Webhook } from './read-webhooks.js';
import { DEFAULT_WINDOW_MS, PAGERDUTY_EVENTS_URL, type Receiver } from './receiver.js';
import { isHttpUrl, type ReceiverKind, type ReceiverListFile } from './schema.js';
import { Secret } from './secret.js';

export interface ReadReceiversInput extends Omit<ReadWebhooksInput, 'list'> {
  list: ReceiverListFile;
  /** The settings' `publicUrl`, already validated: messages link to the rollout there. */
  publicUrl?: string;
}

export function readReceivers(input: ReadReceiversInput): { webhooks: Webhook[]; issues: SourceIssue[] } {
  const { list, file, env } = input;
  const readFile = input.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const issues: SourceIssue[] = [];
  const problem = (path: (string | number)[], reason: string) => {
    const full = ['notify', ...path];
    const pos = input.locate?.(full);
    issues.push({ file, line: pos?.line, column: pos?.column, field: formatFieldPath(full), reason });
  };
  /** A secret from a variable or a file; undefined (with a problem) when it cannot be read. */
  const secretOf = (
    path: (string | number)[],
    fromEnv: string | undefined,
    fromFile: string | undefined,
  ): string | undefined => {
    if (fromEnv !== undefined) {
      const value = env[fromEnv]?.trim();
      if (!value) problem(path, `the environment variable ${fromEnv} is not set`);
      return value || undefined;
    }
    if (fromFile === undefined) return undefined;
    try {
      const value = readFile(fromFile).trim();
      if (!value) problem(path, `${fromFile} is empty`);
      return value || undefined;
    } catch (err) {
      problem(path, `cannot read ${fromFile} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      return undefined;
    }
  };
  const webhooks: Webhook[] = [];
  list.forEach((r, i) => {
    const kind: ReceiverKind = r.slack ? 'slack' : r.teams ? 'teams' : 'pagerduty';
    let url: string | undefined;
    let routingKey: Secret | undefined;
    const chat = r.slack ?? r.teams;
    if (chat) {
      const field = chat.urlEnv !== undefined ? 'urlEnv' : 'urlFile';
      url = chat.url ?? secretOf([i, kind, field], chat.urlEnv, chat.urlFile);
      if (url !== undefined && !isHttpUrl(url)) {
        problem([i, kind, field], `${chat.urlEnv ?? chat.urlFile} does not hold an http:// or https:// URL`);
        url = undefined;
      }
    } else if (r.pagerduty) {
      const p = r.pagerduty;
      const field = p.routingKeyEnv !== undefined ? 'routingKeyEnv' : 'routingKeyFile';
      const key = secretOf([i, 'pagerduty', field], p.routingKeyEnv, p.routingKeyFile);
      if (key !== undefined) routingKey = new Secret(key);
      url = p.url ?? PAGERDUTY_EVENTS_URL;
      if (key === undefined) url = undefined;
    }
    if (url === undefined) return;
    const receiver: Receiver = {
      kind,
      windowMs: r.window ?? DEFAULT_WINDOW_MS,
      templates: { ...DEFAULT_TEMPLATES, ...r.templates },
      severity: r.pagerduty?.severity ?? 'error',
    };
    if (r.orgs) receiver.orgs = new Set(r.orgs);
    if (r.policies) receiver.policies = new Set(r.policies);
    if (routingKey) receiver.routingKey = routingKey;
    if (input.publicUrl) receiver.publicUrl = input.publicUrl.replace(/\/+$/, '');
    const webhook: Webhook = {
      name: r.name,
      url,
      events:
        r.events === undefined || r.events.includes('*')
          ? '*'
          : new Set(r.events.filter((e): e is RolloutEventType => e !== '*')),
      format: 'json',
      timeoutMs: r.timeout ?? WEBHOOK_DEFAULTS.timeoutMs,
      retry: {
        initialMs: r.retry?.initial ?? WEBHOOK_DEFAULTS.retry.initialMs,
        maxMs: r.retry?.max ?? WEBHOOK_DEFAULTS.retry.maxMs,
        giveUpAfterMs: r.retry?.giveUpAfter ?? WEBHOOK_DEFAULTS.retry.giveUpAfterMs,
      },
      receiver,
    };
    // Settings logged whole (by mistake) show where it points, not its path, query or key.
    Object.defineProperty(webhook, 'toJSON', { value: () => describeWebhook(webhook), enumerable: false });
    if (webhook.retry.maxMs < webhook.retry.initialMs)
      problem([i, 'retry', 'max'], 'must be at least retry.initial');
    webhooks.push(webhook);
  });
  return { webhooks, issues };
}
