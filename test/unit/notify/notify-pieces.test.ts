/**
 * The pure pieces of webhook delivery: the signature (checked against openssl's HMAC), the bodies
 * of both formats, the back-off, and what of a URL may reach a log line.
 */
import { describe, expect, it } from 'vitest';
import { retryDelay } from '../../../src/notify/retry-delay.js';
import { OutboxEvent } from '../../../src/notify/schema.js';
import { Secret } from '../../../src/notify/secret.js';
import { signPayload, verifySignature } from '../../../src/notify/sign-payload.js';
import { escapeSlack, webhookBody } from '../../../src/notify/webhook-body.js';
import { scrubUrl, webhookOrigin } from '../../../src/notify/webhook-origin.js';

describe('signPayload', () => {
  // printf '%s' '1700000000.{"type":"rollout.halted"}' | openssl dgst -sha256 -hmac whsec-example
  const body = '{"type":"rollout.halted"}';
  const expected = 'sha256=bf4ff2cd638e03b19e71d1e1394d52a1988d0c90d3fa4eb6cc450465ed58d00c';

  it('is HMAC-SHA256 of "timestamp.body" in hex, as openssl computes it', () => {
    expect(signPayload('whsec-example', 1_700_000_000, body)).toBe(expected);
  });

  it('verifies as a receiver would: right secret, same body, a recent timestamp', () => {
    const headers = { signature: expected, timestamp: '1700000000' };
    expect(verifySignature('whsec-example', headers, body, 1_700_000_100)).toBe(true);
    expect(verifySignature('whsec-other', headers, body, 1_700_000_100)).toBe(false);
    expect(verifySignature('whsec-example', headers, `${body} `, 1_700_000_100)).toBe(false);
    // A replay after the tolerance (5 minutes) is refused.
    expect(verifySignature('whsec-example', headers, body, 1_700_000_301)).toBe(false);
    expect(
      verifySignature('whsec-example', { ...headers, timestamp: '1700000001' }, body, 1_700_000_001),
    ).toBe(false);
    expect(
      verifySignature(
        'whsec-example',
        { signature: undefined, timestamp: '1700000000' },
        body,
        1_700_000_000,
      ),
    ).toBe(false);
  });
});

describe('webhookBody', () => {
  const recorded = JSON.stringify({
    id: 'e1',
    type: 'rollout.awaiting_approval',
    rollout: 'linux@19.470-4',
    policy: 'linux',
    build: '19.470-4',
    at: 1,
    source: 'scheduler',
    message: 'Wave 2 of 3 waits for approval: fleet-upgrade promote linux@19.470-4',
    detail: { wave: 2 },
  });
  const event = OutboxEvent.parse(JSON.parse(recorded));

  it('json: the event exactly as recorded', () => {
    expect(webhookBody('json', event, recorded)).toBe(recorded);
  });

  it('slack: {"text"} with the message, led by the rollout only when the message lacks it', () => {
    expect(JSON.parse(webhookBody('slack', event, recorded))).toEqual({ text: event.message });
    const other = { ...event, message: 'Wave 1 completed: 10 of 10 succeeded.' };
    expect(JSON.parse(webhookBody('slack', other, recorded))).toEqual({
      text: 'linux@19.470-4: Wave 1 completed: 10 of 10 succeeded.',
    });
  });

  it('escapes what Slack reads as markup', () => {
    expect(escapeSlack('a <b> & c')).toBe('a &lt;b&gt; &amp; c');
  });
});

describe('retryDelay', () => {
  const retry = { initialMs: 1000, maxMs: 300_000 };

  it('doubles from initial up to max, less up to a fifth at random', () => {
    expect([1, 2, 3, 4, 9, 10, 100].map((n) => retryDelay(n, retry, () => 0))).toEqual([
      1000, 2000, 4000, 8000, 256_000, 300_000, 300_000,
    ]);
    expect(retryDelay(1, retry, () => 0.999)).toBe(800);
    expect(retryDelay(0, retry, () => 0)).toBe(1000);
  });
});

describe('what of a webhook may be logged', () => {
  const url = 'https://hooks.slack.com/services/T000/B000/XXXXSECRET?token=abc123';

  it('the origin only', () => {
    expect(webhookOrigin(url)).toBe('https://hooks.slack.com');
    expect(webhookOrigin('not a url')).toBe('[invalid url]');
  });

  it('scrubs the URL, its path and its query from a text', () => {
    const text = `POST ${url} failed; path /services/T000/B000/XXXXSECRET; query token=abc123`;
    const out = scrubUrl(text, url);
    expect(out).not.toContain('XXXXSECRET');
    expect(out).not.toContain('abc123');
    expect(out).toContain('failed');
  });

  it('a secret shows as [redacted] in JSON, strings and inspection', async () => {
    const { inspect } = await import('node:util');
    const s = new Secret('hunter2');
    expect(JSON.stringify({ s })).toBe('{"s":"[redacted]"}');
    expect(`${s}`).toBe('[redacted]');
    expect(inspect({ s })).not.toContain('hunter2');
    expect(s.reveal()).toBe('hunter2');
  });
});
