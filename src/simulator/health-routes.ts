/**
 * The Health Events API of the simulated account (api-facts.md, last section; the vendor's
 * OpenAPI `ListHealthEventResponse`): `GET healthEvents?limit=&token=` lists the unresolved
 * events a page at a time, `{data, next}` with `next` null on the last page; `POST
 * healthEvents/resources` with `{"data":[{"id","name","type"}]}` those of the named resources (a
 * Collector names its own events and its Sources'). Ids are 16-digit hexadecimal strings. They
 * answer in the newer error shape, and 403 when the account's plan has no health events.
 * Authentication, limits and faults happen before these run (handle-api.ts), as for the rest.
 */
import { fromHexId, toHexId } from '../lib/hex-id.js';
import type { SimHealthEvent } from './health-events.js';
import { type Answer, json, newerError } from './http-util.js';
import type { CallContext } from './service-routes.js';

/** Events in one page at most (a larger `limit` gets fewer, as the vendor documents it may). */
export const HEALTH_PAGE_MAX = 1000;
/** The documented default is not given; the simulator's. */
export const HEALTH_PAGE_DEFAULT = 100;
/** Resources named in one POST at most. */
export const MAX_RESOURCES = 100;

const TOKEN_PREFIX = 'h1:';

function token(seq: number): string {
  return Buffer.from(`${TOKEN_PREFIX}${seq}`).toString('base64url');
}

/** The seq after which a page starts, from a continuation token; undefined when it is not one of ours. */
function afterSeq(raw: string | null): number | undefined {
  if (raw === null || raw === '' || raw === 'null') return 0;
  if (raw.length > 64) return undefined;
  const text = Buffer.from(raw, 'base64url').toString('utf8');
  if (!text.startsWith(TOKEN_PREFIX)) return undefined;
  const n = Number(text.slice(TOKEN_PREFIX.length));
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

function pageParams(ctx: CallContext, query: URLSearchParams): { after: number; limit: number } | Answer {
  if (!ctx.model.health.config.available)
    return newerError(403, 'forbidden', 'Health events are not available for this account.');
  const rawLimit = query.get('limit');
  const limit = rawLimit === null ? HEALTH_PAGE_DEFAULT : Number(rawLimit);
  if (!/^\d{1,9}$/.test(rawLimit ?? '1') || !Number.isInteger(limit) || limit < 1)
    return newerError(400, 'invalid.limit', `Parameter limit must be a positive integer, got '${rawLimit}'.`);
  const after = afterSeq(query.get('token'));
  if (after === undefined) return newerError(400, 'invalid.token', 'The continuation token is not valid.');
  return { after, limit: Math.min(limit, HEALTH_PAGE_MAX) };
}

function answerPage(ctx: CallContext, after: number, limit: number, wanted: (e: SimHealthEvent) => boolean) {
  const page = ctx.model.health.page(after, limit, (e) => ctx.allowed(e.collectorId) && wanted(e));
  return json(200, {
    data: page.events.map(healthEventRecord),
    next: page.next === null ? null : token(page.next),
  });
}

/** GET healthEvents?limit=&token= */
export function listHealthEvents(ctx: CallContext, query: URLSearchParams): Answer {
  const p = pageParams(ctx, query);
  if ('status' in p) return p;
  return answerPage(ctx, p.after, p.limit, () => true);
}

/** POST healthEvents/resources?limit=&token= with `{"data":[{"id","name","type"}]}` */
export function healthEventsOfResources(ctx: CallContext, query: URLSearchParams, bodyText: string): Answer {
  const p = pageParams(ctx, query);
  if ('status' in p) return p;
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return newerError(400, 'invalid.body', 'The body must be JSON: {"data": [{"id", "name", "type"}]}.');
  }
  const data = (body as { data?: unknown } | null)?.data;
  if (!Array.isArray(data) || data.length === 0 || data.length > MAX_RESOURCES)
    return newerError(400, 'invalid.body', `data must be a list of 1 to ${MAX_RESOURCES} resources.`);
  const collectors = new Set<number>();
  const resources = new Set<number>();
  for (const [i, r] of data.entries()) {
    const { id, type } = (r ?? {}) as { id?: unknown; type?: unknown };
    const n = typeof id === 'string' ? fromHexId(id) : undefined;
    if (n === undefined || typeof type !== 'string')
      return newerError(
        400,
        'invalid.body',
        `data[${i}]: expected {"id": a hexadecimal id, "name", "type"}.`,
      );
    (type === 'Collector' ? collectors : resources).add(n);
  }
  return answerPage(
    ctx,
    p.after,
    p.limit,
    (e) => collectors.has(e.collectorId) || resources.has(e.resource.id),
  );
}

/** An event as the Health Events API writes it (the vendor's documented example). */
export function healthEventRecord(e: SimHealthEvent) {
  return {
    eventId: e.eventId,
    eventName: 'TrackerUnHealthy',
    eventType: 'Health-Change',
    status: 'UnHealthy',
    severityLevel: e.severity,
    subsystem: 'Collection',
    eventTime: new Date(e.eventTime).toISOString(),
    details: { trackerId: e.trackerId, name: e.name, description: e.description },
    resourceIdentity: {
      collectorId: toHexId(e.collectorId),
      collectorName: e.collectorName,
      id: toHexId(e.resource.id),
      name: e.resource.name,
      type: e.resource.type,
    },
  };
}
