/**
 * One attempt to deliver one event to one webhook, with the whole HTTP policy of notifications in
 * one place: a hard time limit on the attempt, no redirect followed (a 3xx is a refusal: configure
 * the final URL), at most 1 KiB of the answer's body read, and an outcome as a value:
 * `delivered` (2xx), `unavailable` (no answer, time-out, 408, 429, 5xx: the receiver is down or
 * busy, so the whole webhook waits) or `rejected` (another status: this event waits, the others
 * go on). Nothing here logs; `reason` never holds the URL's path or query, nor the webhook's
 * basic-auth credentials (a receiver that echoes them is scrubbed: src/lib/scrub-secrets.ts).
 */
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { createScrubber, type Scrubber } from '../lib/scrub-secrets.js';
import type { Webhook } from './read-webhooks.js';
import { signPayload, WEBHOOK_HEADERS } from './sign-payload.js';
import { scrubUrl } from './webhook-origin.js';

/** Bytes of an answer's body read at most (kept for the log of a failure, else dropped). */
export const ANSWER_BODY_CAP = 1024;

export type AttemptResult =
  | { outcome: 'delivered'; status: number }
  | { outcome: 'unavailable'; status?: number; reason: string }
  | { outcome: 'rejected'; status: number; reason: string };

export interface SendWebhookInput {
  webhook: Webhook;
  eventId: string;
  eventType: string;
  body: string;
  dispatcher: Dispatcher;
  /** Unix seconds of this attempt (signed with the body). */
  timestampS: number;
  /** Aborts the attempt (the notifier stops). */
  signal?: AbortSignal;
}

async function readCapped(
  body: AsyncIterable<Buffer> & { destroy(): unknown },
): Promise<{ text: string; cut: boolean }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= ANSWER_BODY_CAP) break; // leaving the loop destroys the stream
    }
  } catch {
    // The answer's status is what counts; a body cut short changes nothing.
  }
  body.destroy();
  return {
    text: Buffer.concat(chunks).subarray(0, ANSWER_BODY_CAP).toString('utf8'),
    cut: size > ANSWER_BODY_CAP,
  };
}

const scrubbers = new WeakMap<Webhook, Scrubber>();

/** The scrubber of what a webhook sends: its basic-auth credentials, a routing key. */
function scrubberOf(webhook: Webhook): Scrubber {
  let s = scrubbers.get(webhook);
  if (!s) {
    // Basic-auth credentials, and a PagerDuty routing key (an error answer may echo the body).
    const values = [webhook.authorization?.reveal(), webhook.receiver?.routingKey?.reveal()];
    s = createScrubber(values.filter((v): v is string => v !== undefined && v !== ''));
    scrubbers.set(webhook, s);
  }
  return s;
}

export async function sendWebhook(input: SendWebhookInput): Promise<AttemptResult> {
  const { webhook, body } = input;
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'fleet-upgrade (webhook)',
    [WEBHOOK_HEADERS.eventId]: input.eventId,
    [WEBHOOK_HEADERS.eventType]: input.eventType,
    [WEBHOOK_HEADERS.timestamp]: String(input.timestampS),
  };
  if (webhook.secret)
    headers[WEBHOOK_HEADERS.signature] = signPayload(webhook.secret.reveal(), input.timestampS, body);
  if (webhook.authorization) headers.authorization = webhook.authorization.reveal();
  const scrub = scrubberOf(webhook);
  const timeout = AbortSignal.timeout(webhook.timeoutMs);
  const signal = input.signal ? AbortSignal.any([input.signal, timeout]) : timeout;
  try {
    const res = await request(webhook.url, {
      method: 'POST',
      headers,
      body,
      dispatcher: input.dispatcher,
      signal,
      headersTimeout: webhook.timeoutMs,
      bodyTimeout: webhook.timeoutMs,
    });
    const answer = await readCapped(res.body);
    const status = res.statusCode;
    if (status >= 200 && status < 300) return { outcome: 'delivered', status };
    const reason = `answered ${status}${describeBody(scrub.scrub(answer.text, { cut: answer.cut }), webhook.url)}`;
    if (status === 408 || status === 429 || status >= 500) return { outcome: 'unavailable', status, reason };
    if (status >= 300 && status < 400)
      return { outcome: 'rejected', status, reason: `${reason} (redirects are not followed)` };
    return { outcome: 'rejected', status, reason };
  } catch (err) {
    if (input.signal?.aborted) return { outcome: 'unavailable', reason: 'stopped' };
    if (timeout.aborted)
      return { outcome: 'unavailable', reason: `no answer within ${webhook.timeoutMs} ms` };
    const code = (err as { code?: unknown }).code;
    const message = err instanceof Error ? err.message : String(err);
    const reason = `${message}${typeof code === 'string' && !message.includes(code) ? ` (${code})` : ''}`;
    return { outcome: 'unavailable', reason: scrubUrl(scrub.scrub(reason), webhook.url) };
  }
}

function describeBody(text: string, url: string): string {
  const line = text.replace(/\s+/g, ' ').trim().slice(0, 200);
  return line ? `: ${scrubUrl(line, url)}` : '';
}
