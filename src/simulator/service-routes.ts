/**
 * The four endpoints of the Collector Upgrade Service (interface section 4), answering with
 * exactly the fields, types and codes of the interface and of the real service's examples, and
 * the Collector Management API's list of every Collector (GET collectors, the inventory).
 * Authentication, limits and faults happen before these run (see handle-api.ts).
 */
import { isBuildVersion } from '../lib/version.js';
import type { FleetModel } from './fleet-model.js';
import { type Answer, json, legacyError } from './http-util.js';
import type { SimCollector, SimTask } from './types.js';

/** `health`: the Health Events API's two endpoints (health-routes.ts). */
export type Endpoint = 'list' | 'targets' | 'create' | 'status' | 'inventory' | 'health';

export interface CallContext {
  model: FleetModel;
  accessId: string;
  allowed: (collectorId: number) => boolean;
  /** The key may create tasks (false: 403 forbidden, see FleetUser.canCreate). */
  canCreate: boolean;
  now: number;
}

export function collectorRecord(model: FleetModel, c: SimCollector, now: number) {
  return {
    id: c.id,
    name: c.name,
    hostName: c.hostName,
    timeZone: c.timeZone,
    links: [{ rel: 'sources', href: `/v1/collectors/${c.id}/sources` }],
    ephemeral: c.ephemeral,
    sourceSyncMode: c.sourceSyncMode,
    collectorType: c.type,
    collectorVersion: c.version,
    osVersion: c.osVersion,
    osName: c.osName,
    osArch: c.osArch,
    lastSeenAlive: model.lastSeenAlive(c, now),
    alive: c.alive,
  };
}

export function taskRecord(t: SimTask) {
  return {
    id: t.id,
    collectorId: t.collectorId,
    toVersion: t.toVersion,
    requestTime: t.requestTime,
    status: t.status,
    message: t.message,
  };
}

const NON_NEGATIVE_INTEGER = /^\d+$/;
export const MAX_LIMIT = 1000;

function integerParam(query: URLSearchParams, name: string, fallback: number, max: number): number | Answer {
  const raw = query.get(name);
  if (raw === null) return fallback;
  if (!NON_NEGATIVE_INTEGER.test(raw) || Number(raw) > max) {
    return legacyError(
      400,
      'parameter.invalid',
      `Parameter ${name} must be an integer between 0 and ${max}, got '${raw}'.`,
    );
  }
  return Number(raw);
}

/** GET collectors/upgrades/collectors */
export function listUpgradable(ctx: CallContext, query: URLSearchParams): Answer {
  const { model } = ctx;
  const requested = query.get('toVersion') ?? query.get('to');
  const target = requested === null || requested === '' ? model.latest : requested;
  if (!model.buildExists(target)) {
    return legacyError(
      400,
      'collector.version.invalid',
      `Version '${target}' is not a valid Collector build.`,
    );
  }
  const offset = integerParam(query, 'offset', 0, Number.MAX_SAFE_INTEGER);
  if (typeof offset !== 'number') return offset;
  const limit = integerParam(query, 'limit', 50, MAX_LIMIT);
  if (typeof limit !== 'number') return limit;
  const page = model.listUpgradable(target, offset, limit, ctx.allowed);
  return json(200, { collectors: page.map((c) => collectorRecord(model, c, ctx.now)) });
}

/** The inventory's `filter` values (the vendor's documentation of GET /collectors); absent: every Collector. */
const INVENTORY_FILTERS: Readonly<Record<string, (c: SimCollector) => boolean>> = {
  installed: (c) => c.type === 'Installable',
  hosted: (c) => c.type === 'Hosted',
  dead: (c) => !c.alive,
  alive: (c) => c.alive,
};

/** The vendor's documented default of `limit` for GET /collectors, also its largest accepted value here. */
export const INVENTORY_LIMIT = 1000;

/**
 * A record of the inventory: the fields of the upgradable listing plus `category`,
 * `description` and `fields`. A Hosted Collector runs no build: its collectorVersion is "", as
 * in the vendor's example of one.
 */
export function inventoryRecord(model: FleetModel, c: SimCollector, now: number) {
  return {
    ...collectorRecord(model, c, now),
    collectorVersion: c.type === 'Hosted' ? '' : c.version,
    category: c.category,
    description: c.description,
    fields: c.fields,
  };
}

/** GET collectors?filter=&limit=&offset= : every Collector of the organization the user may see, ascending ids. */
export function listInventory(ctx: CallContext, query: URLSearchParams): Answer {
  const raw = query.get('filter');
  // Absent or empty (some clients send `filter=` when none was chosen): every Collector.
  const any = raw === null || raw === '';
  const filter = any ? undefined : Object.hasOwn(INVENTORY_FILTERS, raw) ? INVENTORY_FILTERS[raw] : null;
  if (filter === null) {
    return legacyError(
      400,
      'parameter.invalid',
      `Parameter filter must be one of ${Object.keys(INVENTORY_FILTERS).join(', ')}, got '${raw}'.`,
    );
  }
  const offset = integerParam(query, 'offset', 0, Number.MAX_SAFE_INTEGER);
  if (typeof offset !== 'number') return offset;
  const limit = integerParam(query, 'limit', INVENTORY_LIMIT, INVENTORY_LIMIT);
  if (typeof limit !== 'number') return limit;
  const { model } = ctx;
  const page: SimCollector[] = [];
  let skipped = 0;
  for (const c of model.collectors) {
    if (page.length >= limit) break;
    if ((filter && !filter(c)) || !ctx.allowed(c.id)) continue;
    if (skipped < offset) skipped++;
    else page.push(c);
  }
  return json(200, { collectors: page.map((c) => inventoryRecord(model, c, ctx.now)) });
}

/** GET collectors/upgrades/targets */
export function listTargets(ctx: CallContext): Answer {
  const { model } = ctx;
  return json(200, {
    targets: model.builds.map((version) => ({ version, latest: version === model.latest })),
  });
}

function parseCollectorId(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  // Jackson-style services accept a long written as a string of digits.
  if (typeof value === 'string' && /^\d{1,15}$/.test(value) && Number(value) > 0) return Number(value);
  return undefined;
}

/** POST collectors/upgrades with JSON `{collectorId, toVersion?}` */
export function createTask(ctx: CallContext, bodyText: string): Answer {
  const { model } = ctx;
  if (!ctx.canCreate)
    return legacyError(
      403,
      'forbidden',
      'This access key does not have the capability to manage Collectors.',
    );
  let body: unknown;
  try {
    body = bodyText.trim() === '' ? undefined : JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const fields =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const collectorId = parseCollectorId(fields.collectorId);
  if (collectorId === undefined) {
    return legacyError(
      400,
      'collector.invalid',
      'The Collector identifier was not provided or is not valid.',
    );
  }
  let toVersion = model.latest;
  if ('toVersion' in fields && fields.toVersion !== null) {
    const v = fields.toVersion;
    if (typeof v !== 'string' || !isBuildVersion(v) || !model.buildExists(v)) {
      // The Collector must still exist and be ours before the version is judged.
      const c = model.collector(collectorId);
      if (!c || !ctx.allowed(collectorId)) {
        return legacyError(
          400,
          'collector.invalid',
          `Collector with id ${collectorId} does not exist or you have no permission to use it.`,
        );
      }
      return legacyError(
        400,
        'collector.version.invalid',
        `The upgrade version ${JSON.stringify(v)} is not valid.`,
      );
    }
    toVersion = v;
  }
  const result = model.create(collectorId, toVersion, ctx.accessId, ctx.allowed, ctx.now);
  if (!result.ok) return legacyError(400, result.code, result.message);
  const id = String(result.task.id);
  return json(202, { id, link: { rel: 'self', href: `/v1/collectors/upgrades/${id}` } });
}

/** GET collectors/upgrades/<id> */
export function taskStatus(ctx: CallContext, rawId: string): Answer {
  const notFound = () => legacyError(404, 'notfound', `Upgrade task ${rawId} was not found.`);
  if (!/^\d{1,15}$/.test(rawId)) return notFound();
  const task = ctx.model.task(Number(rawId));
  if (!task || !ctx.allowed(task.collectorId)) return notFound();
  return json(200, { upgrade: taskRecord(task) });
}
