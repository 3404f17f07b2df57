/**
 * The Health Events API's bodies (api-facts.md, last section; the vendor's OpenAPI
 * `ListHealthEventResponse`): `{data: [event], next}` where `next` is the continuation token,
 * null or absent on the last page (`token` is tolerated as its name too). An event names its
 * Collector by a 16-digit hexadecimal id (`resourceIdentity.collectorId`), normalised here to the
 * decimal number the upgrade endpoints use (lib/hex-id.ts). Vendor text is clipped; an event
 * whose ids are not ids is a protocol error that names the field.
 */
import { z } from 'zod';
import { fromHexId } from '../lib/hex-id.js';
import { clipText, TEXT_LIMITS } from './untrusted-text.js';

/** A hexadecimal id (or, tolerated, a decimal number) as a decimal number. */
const hexId = z.union([z.string(), z.number().int().nonnegative()]).transform((v, ctx) => {
  const n = typeof v === 'number' ? v : fromHexId(v);
  if (n === undefined || !Number.isSafeInteger(n)) {
    ctx.addIssue({ code: 'custom', message: 'expected a hexadecimal id of at most 16 digits' });
    return z.NEVER;
  }
  return n;
});

const text = (max: number) => z.string().transform((s) => clipText(s, max));

export const HealthEvent = z
  .object({
    eventId: z.string().min(1).max(64),
    eventName: text(TEXT_LIMITS.code).optional(),
    severityLevel: text(TEXT_LIMITS.code),
    subsystem: text(TEXT_LIMITS.code).optional(),
    eventTime: z.string().refine((s) => Number.isFinite(Date.parse(s)), 'expected an ISO 8601 time'),
    details: z.object({
      trackerId: z
        .string()
        .min(1)
        .transform((s) => clipText(s, TEXT_LIMITS.code)),
      name: text(TEXT_LIMITS.code).optional(),
      description: text(TEXT_LIMITS.message).optional(),
    }),
    resourceIdentity: z.object({
      collectorId: hexId.optional(),
      collectorName: text(TEXT_LIMITS.host).optional(),
      id: hexId,
      name: text(TEXT_LIMITS.host).optional(),
      type: text(TEXT_LIMITS.code),
    }),
  })
  .transform((e) => ({
    eventId: e.eventId,
    trackerId: e.details.trackerId,
    /** The tracker's name as the vendor writes it (its id when it gives none). */
    trackerName: e.details.name ?? e.details.trackerId,
    description: e.details.description ?? '',
    severity: e.severityLevel,
    /** Epoch ms (the service's time). */
    eventTime: Date.parse(e.eventTime),
    /**
     * The decimal id of its Collector: the resource's own for a Collector's event; undefined for
     * an event of no Collector (an ingest budget, a hosted Source without one).
     */
    collectorId:
      e.resourceIdentity.collectorId ??
      (e.resourceIdentity.type === 'Collector' ? e.resourceIdentity.id : undefined),
    resourceType: e.resourceIdentity.type,
    resourceId: e.resourceIdentity.id,
  }));
export type HealthEvent = z.output<typeof HealthEvent>;

export const HealthEventsPage = z
  .object({
    data: z.array(HealthEvent),
    next: z.string().max(4096).nullish(),
    token: z.string().max(4096).nullish(),
  })
  .transform((p) => ({ events: p.data, next: p.next ?? p.token ?? null }));
export type HealthEventsPage = z.output<typeof HealthEventsPage>;
