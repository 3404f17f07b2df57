/**
 * `fleet-upgrade notify --test NAME`: one sample event of a chosen type, rendered for the named
 * receiver (or webhook) exactly as delivery renders it, and sent once through the same HTTP
 * policy (send-webhook.ts). The answer comes back as a value; nothing is recorded in Redis.
 * `notify --print`: the default template of each event type and the fields a template may use.
 */
import { randomUUID } from 'node:crypto';
import { Agent } from 'undici';
import { ROLLOUT_EVENT_TYPES, type RolloutEventType } from '../rollout/index.js';
import { DEFAULT_TEMPLATES, TEMPLATE_FIELDS } from './message-templates.js';
import type { Webhook } from './read-webhooks.js';
import { receiverBody } from './receiver-body.js';
import { pageAction } from './receiver-plan.js';
import type { OutboxEvent } from './schema.js';
import { type AttemptResult, sendWebhook } from './send-webhook.js';
import { webhookBody } from './webhook-body.js';

const SAMPLE_ROLLOUT = { rollout: 'sample@19.480-2', policy: 'sample', build: '19.480-2' };

/** The details of a sample event of `type`: those its message and fields show. */
const SAMPLE_DETAIL: Partial<Record<RolloutEventType, Record<string, unknown>>> = {
  'rollout.halted': {
    criterion: 'failures > 5% in wave 2 (7 of 120)',
    counts: { succeeded: 113, failed: 7 },
    onTrip: 'halt',
  },
  'rollout.resumed': { released: 'halted' },
  'rollout.awaiting_approval': { wave: 2, of: 4 },
  'rollout.converged': { counts: { succeeded: 1180, failed: 20 } },
  'collectors.failed': {
    new: 37,
    total: 37,
    byState: { failed: 25, timed_out: 9, error: 3 },
    byClass: { disk_space: 14, timed_out: 9, network: 8, unknown: 3, error: 3 },
  },
  'cohort.quarantined': { cohort: 'rhel7-arm', held: 40, reason: 'failures 9 of 12' },
  'org.waiting': { reason: 'credentials refused (401)', since: 0 },
  'org.recovered': { reason: 'credentials refused (401)', since: 0 },
  'daemon.problem': {
    kind: 'target_not_offered',
    subject: 'emea-linux',
    reason:
      'its target 19.490-1 is not offered by the service (it offers 19.470-4, 19.480-2); no rollout of it starts',
    fix: 'set `target:` in its policy file to a build the service offers (or `latest`), or release 19.490-1 at the service',
    since: 0,
  },
};

/** A sample event of `type` for `orgs` (the first one names an organization's part). */
export function sampleEvent(type: RolloutEventType, org: string, now: number): OutboxEvent {
  const detail = { ...SAMPLE_DETAIL[type] };
  if (type.startsWith('org.')) Object.assign(detail, { org, since: now - 300_000 });
  const sentence: Partial<Record<RolloutEventType, string>> = {
    'rollout.halted': `${SAMPLE_ROLLOUT.rollout} halted: failures > 5% in wave 2 (7 of 120); \`fleet-upgrade resume ${SAMPLE_ROLLOUT.rollout}\` goes on`,
    'rollout.resumed': `${SAMPLE_ROLLOUT.rollout} resumed by ops@example: released the halt`,
  };
  return {
    id: randomUUID(),
    type,
    ...SAMPLE_ROLLOUT,
    at: now,
    source: type === 'rollout.resumed' ? 'operator' : 'scheduler',
    ...(type === 'rollout.resumed' ? { actor: 'ops@example' } : {}),
    message: `${sentence[type] ?? `${SAMPLE_ROLLOUT.rollout}: a sample ${type} event`} (a test from fleet-upgrade notify --test)`,
    detail,
  };
}

/** The type a receiver's sample is of, by default: one it sends (a PagerDuty receiver: a halt). */
export function defaultSampleType(webhook: Webhook): RolloutEventType {
  if (webhook.receiver?.kind === 'pagerduty') return 'rollout.halted';
  if (webhook.events === '*') return 'rollout.halted';
  return [...webhook.events][0] ?? 'rollout.halted';
}

export interface SampleResult {
  event: OutboxEvent;
  body: string;
  result: AttemptResult;
}

/** Sends one sample `type` event to `webhook`; the answer as a value (never throws for HTTP). */
export async function sendSample(
  webhook: Webhook,
  type: RolloutEventType,
  now = Date.now(),
): Promise<SampleResult> {
  const org = webhook.receiver?.orgs ? ([...webhook.receiver.orgs][0] ?? 'default') : 'default';
  const event = sampleEvent(type, org, now);
  if (webhook.receiver?.kind === 'pagerduty' && !pageAction(event))
    throw new Error(
      `a PagerDuty receiver is sent only what pages or resolves: choose --type rollout.halted or rollout.resumed`,
    );
  const body = webhook.receiver
    ? receiverBody(webhook.receiver, [{ event, orgs: [org] }])
    : webhookBody(webhook.format, event, JSON.stringify(event));
  const dispatcher = new Agent({ connect: { timeout: webhook.timeoutMs } });
  try {
    const result = await sendWebhook({
      webhook,
      eventId: event.id,
      eventType: event.type,
      body,
      dispatcher,
      timestampS: Math.floor(now / 1000),
    });
    return { event, body, result };
  } finally {
    await dispatcher.destroy().catch(() => undefined);
  }
}

/** What `notify --print` prints: each event type's default template, then the fields. */
export function printTemplates(): string {
  const width = Math.max(...ROLLOUT_EVENT_TYPES.map((t) => t.length));
  const lines = ["# The default template of each event type (override one in a receiver's `templates:`)"];
  for (const t of ROLLOUT_EVENT_TYPES) lines.push(`${t.padEnd(width)}  ${DEFAULT_TEMPLATES[t]}`);
  lines.push('', '# The fields a template may use');
  const fw = Math.max(...Object.keys(TEMPLATE_FIELDS).map((f) => f.length + 2));
  for (const [f, what] of Object.entries(TEMPLATE_FIELDS)) lines.push(`${`{${f}}`.padEnd(fw)}  ${what}`);
  return lines.join('\n');
}
