/**
 * /_sim/...: the simulator's own window for tests, demos and benchmarks. No authentication,
 * answered to loopback callers only. GET stats, GET orgs, GET collectors (optionally
 * `?ids=1,2`), GET collectors/:id, PATCH collectors/:id with `{alive?, running?, outcome?}`,
 * GET builds, POST builds with `{version}` to release a new latest build while running, GET health
 * (the health events' truth), and
 * GET/POST/DELETE faults (fault-routes.ts). Each answers for one organization: the only one, or
 * the one named by `?org=NAME` (required with several); GET stats without `org` sums them all.
 */
import { z } from 'zod';
import { faultRoutes } from './fault-routes.js';
import type { FleetModel, TaskGauge } from './fleet-model.js';
import { type Answer, json, simError } from './http-util.js';
import type { Organization } from './organization.js';
import { Outcome } from './schema.js';
import type { SimulatorStats } from './simulator-stats.js';
import { statsTotals } from './stats-totals.js';
import type { SimCollector } from './types.js';

const Patch = z
  .object({
    alive: z.boolean().optional(),
    /** false stops the heartbeats (listed alive until offlineAfterSeconds); true restarts. */
    running: z.boolean().optional(),
    outcome: Outcome.nullable().optional(),
  })
  .strict()
  .refine((p) => p.alive !== undefined || p.running !== undefined || p.outcome !== undefined, {
    message: 'give alive, running and/or outcome',
  });

export function simCollectorRecord(model: FleetModel, c: SimCollector, now: number) {
  const step = model.stepDuration(c);
  return {
    id: c.id,
    name: c.name,
    hostName: c.hostName,
    type: c.type,
    version: c.version,
    alive: c.alive,
    lastSeenAlive: model.lastSeenAlive(c, now),
    /** Heartbeating now (alive and not stopped). */
    running: c.alive && c.stoppedAt === undefined,
    stoppedAt: c.stoppedAt ?? null,
    stopsAfterUpgrade: c.stopsAfterUpgrade,
    stopDueAt: c.stopDue?.at ?? null,
    stops: c.stops.map((s) => ({ ...s })),
    failureCause: c.failureCause ?? null,
    outcome: c.outcome ?? null,
    flap: c.flap,
    osName: c.osName,
    osArch: c.osArch,
    timeZone: c.timeZone,
    /** The type of its one Source (health events), undefined for a hosted Collector. */
    sourceType: model.health.sourceTypeOf(c) ?? null,
    /** Collecting: no break of a build is unresolved on it (the truth, listed or not). */
    collecting: model.health.collecting(c),
    /** Its health events (resolvedAt null: unresolved; silent: on a build that sends none), and a break to come. */
    health: healthTruth(model, c),
    upgrading: c.current !== undefined,
    /**
     * Where the duration of one upgrade step of this Collector comes from (`collector`: its own
     * upgradeSeconds; `os`: behaviour.upgradeSeconds.byOs[osName]; `default`), and its log-normal
     * median and p95 in simulated seconds (both the fixed value for `collector`).
     */
    durationKind: step.kind,
    stepSeconds: { median: step.median, p95: step.p95 },
    /** Each change of `alive` ({at, alive}), and each create refused ({at, code}), oldest first. */
    aliveChanges: (c.aliveChanges ?? []).map((a) => ({ ...a })),
    refusals: (c.refusals ?? []).map((r) => ({ ...r })),
    tasks: c.tasks.map((t) => ({
      id: t.id,
      fromVersion: t.fromVersion,
      toVersion: t.toVersion,
      steps: t.steps,
      status: t.status,
      message: t.message,
      requestTime: t.requestTime,
      finishTime: t.finishTime ?? null,
      result: t.result ?? null,
      cause: t.cause ?? null,
      accessId: t.accessId,
    })),
  };
}

function healthTruth(model: FleetModel, c: SimCollector) {
  const h = model.health.history(c);
  return {
    breakDueAt: h.breakDueAt,
    events: h.events.map((e) => ({
      eventId: e.eventId,
      trackerId: e.trackerId,
      severity: e.severity,
      cause: e.cause,
      build: e.build,
      eventTime: e.eventTime,
      resolvedAt: e.resolvedAt,
      silent: e.silent,
      resourceType: e.resource.type,
    })),
  };
}

/** GET /_sim/health: the organization's health events, counted (the truth, silent ones included). */
function healthSummary(model: FleetModel): Answer {
  const h = model.health;
  const notCollecting = model.collectors.filter((c) => c.type === 'Installable' && !h.collecting(c));
  return json(200, {
    available: h.config.available,
    ...h.counters,
    unresolved: h.unresolved(),
    notCollecting: notCollecting.map((c) => c.id),
  });
}

/** What introspection sees of the running simulator. */
export interface SimView {
  orgs: readonly Organization[];
  now: number;
  timeScale: number;
  /** Unfinished tasks across the organizations, and their most at any instant. */
  gauge: TaskGauge;
  /** With several organizations: requests whose credentials named none. */
  unattributed: SimulatorStats;
}

/**
 * The organization a /_sim request is about: `?org=NAME`, or the only one. A 400 names the
 * organizations when `org` is missing (with several) or unknown.
 */
export function selectOrg(orgs: readonly Organization[], query: URLSearchParams): Organization | Answer {
  const names = orgs.map((o) => o.name);
  const wanted = query.get('org');
  if (wanted === null) {
    if (orgs.length === 1) return orgs[0] as Organization;
    return simError(400, `give ?org=NAME: the organizations are ${names.join(', ')}`, { orgs: names });
  }
  const org = orgs.find((o) => o.name === wanted);
  return (
    org ??
    simError(400, `no organization ${wanted}: the organizations are ${names.join(', ')}`, { orgs: names })
  );
}

const isAnswer = (x: Organization | Answer): x is Answer => 'status' in x;

function stats(view: SimView, query: URLSearchParams): Answer {
  const { orgs, now, timeScale } = view;
  if (query.get('org') !== null || orgs.length === 1) {
    const org = selectOrg(orgs, query);
    return isAnswer(org) ? org : json(200, org.snapshot(now, timeScale));
  }
  const each = orgs.map((o) => o.snapshot(now, timeScale));
  return json(200, statsTotals(each, view));
}

function builds(model: FleetModel, method: string, bodyText: string): Answer {
  if (method === 'GET') return json(200, { builds: model.builds, latest: model.latest });
  if (method !== 'POST') return simError(405, 'use GET or POST');
  let version: unknown;
  try {
    version = (JSON.parse(bodyText) as { version?: unknown }).version;
  } catch {
    return simError(400, 'body must be JSON: {"version": "<major>.<minor>-<build>"}');
  }
  try {
    model.addBuild(String(version));
  } catch (err) {
    return simError(400, (err as Error).message);
  }
  return json(201, { builds: model.builds, latest: model.latest });
}

function patchCollector(model: FleetModel, c: SimCollector, bodyText: string, now: number): Answer {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return simError(
      400,
      'body must be JSON: {"alive": true|false, "running": true|false, "outcome": "succeed"|"fail"|"stuck"|null}',
    );
  }
  const patch = Patch.safeParse(body);
  if (!patch.success) {
    return simError(
      400,
      patch.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    );
  }
  if (patch.data.alive !== undefined) model.setAlive(c, patch.data.alive, now);
  if (patch.data.running === false) model.stop(c, now, null);
  else if (patch.data.running === true) model.setAlive(c, true, now);
  if (patch.data.outcome !== undefined) model.setOutcome(c, patch.data.outcome ?? undefined, now);
  return json(200, simCollectorRecord(model, c, now));
}

/**
 * GET /_sim/requests?org=NAME&since=MS&limit=N: the organization's latest requests answered at or
 * after `since` (simulated ms), oldest first: when each was answered, its endpoint, status and
 * subject (a status read's task, a listing's build). At most `limit` (default and most 10,000);
 * the log keeps the latest REQUEST_LOG_SIZE (`dropped`: how many went before).
 */
function requests(view: SimView, query: URLSearchParams): Answer {
  const org = selectOrg(view.orgs, query);
  if (isAnswer(org)) return org;
  const since = Number(query.get('since') ?? '0');
  const limit = Number(query.get('limit') ?? String(MAX_REQUESTS));
  if (!Number.isFinite(since)) return simError(400, 'since must be a number of simulated ms');
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_REQUESTS)
    return simError(400, `limit must be a whole number from 1 to ${MAX_REQUESTS}`);
  return json(200, {
    org: org.name,
    now: view.now,
    dropped: org.stats.logDropped,
    requests: org.stats.requests(since, limit),
  });
}

const MAX_REQUESTS = 10_000;

export function introspect(
  view: SimView,
  method: string,
  path: string,
  query: URLSearchParams,
  bodyText: string,
): Answer {
  const { now } = view;
  if (path === '/_sim/stats') return method === 'GET' ? stats(view, query) : simError(405, 'use GET');
  if (path === '/_sim/requests') return method === 'GET' ? requests(view, query) : simError(405, 'use GET');
  if (path === '/_sim/orgs') {
    if (method !== 'GET') return simError(405, 'use GET');
    const orgs = view.orgs.map((o) => ({
      name: o.name,
      users: [...o.accounts.keys()],
      collectors: o.model.size,
      builds: o.model.builds,
      latest: o.model.latest,
    }));
    return json(200, { orgs });
  }
  const m = /^\/_sim\/collectors\/(\d+)$/.exec(path);
  const known =
    ['/_sim/builds', '/_sim/collectors', '/_sim/faults', '/_sim/health'].includes(path) || m !== null;
  if (!known) return simError(404, `no such introspection path: ${path}`);
  const org = selectOrg(view.orgs, query);
  if (isAnswer(org)) return org;
  const { model } = org;
  model.advance(now);
  if (path === '/_sim/builds') return builds(model, method, bodyText);
  if (path === '/_sim/faults') return faultRoutes(org, method, query, bodyText, now);
  if (path === '/_sim/health') return method === 'GET' ? healthSummary(model) : simError(405, 'use GET');
  if (path === '/_sim/collectors') {
    if (method !== 'GET') return simError(405, 'use GET');
    const ids = query.get('ids');
    const wanted = ids ? new Set(ids.split(',').map(Number)) : undefined;
    const list = wanted ? model.collectors.filter((c) => wanted.has(c.id)) : model.collectors;
    return json(200, { collectors: list.map((c) => simCollectorRecord(model, c, now)) });
  }
  const c = model.collector(Number(m?.[1]));
  if (!c) return simError(404, `no Collector ${m?.[1]}`);
  if (method === 'GET') return json(200, simCollectorRecord(model, c, now));
  if (method !== 'PATCH') return simError(405, 'use GET or PATCH');
  return patchCollector(model, c, bodyText, now);
}
