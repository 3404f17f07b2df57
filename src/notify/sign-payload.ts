/**
 * The signature of a webhook request, as documented in docs/notifications.md:
 *
 *   X-Fleet-Upgrade-Timestamp: <unix seconds when this attempt was sent>
 *   X-Fleet-Upgrade-Signature: sha256=<hex of HMAC-SHA256(secret, timestamp + "." + body)>
 *
 * The timestamp is signed with the body, so a receiver that refuses timestamps older than a few
 * minutes refuses a replayed request; `X-Fleet-Upgrade-Event-Id` lets it drop a second delivery.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const WEBHOOK_HEADERS = {
  signature: 'x-fleet-upgrade-signature',
  timestamp: 'x-fleet-upgrade-timestamp',
  eventId: 'x-fleet-upgrade-event-id',
  eventType: 'x-fleet-upgrade-event',
} as const;

/** `sha256=<hex>` of `timestamp.body` under `secret`. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

/**
 * What a receiver does (used by the tests): the signature matches and the timestamp is at most
 * `toleranceS` seconds away from `nowS`.
 */
export function verifySignature(
  secret: string,
  headers: { signature: string | undefined; timestamp: string | undefined },
  body: string,
  nowS: number,
  toleranceS = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!headers.signature || !Number.isInteger(ts) || Math.abs(nowS - ts) > toleranceS) return false;
  const expected = Buffer.from(signPayload(secret, ts, body));
  const given = Buffer.from(headers.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
