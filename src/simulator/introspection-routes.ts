/**
 * /_sim/...: the simulator's own window for tests, demos and benchmarks. No authentication,
 * answered to loopback callers only. GET stats, GET collectors (optionally `?ids=1,2`),
 * GET collectors/:id, PATCH collectors/:id with `{alive?, running?, outcome?}`, GET builds, and
 * POST builds with `{version}` to release a new latest build while running.
 */
import { z } from 'zod';
import type { FleetModel } from './fleet-model.js';
import { type Answer, json } from './http-util.js';
import { Outcome } from './schema.js';
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

function simError(status: number, message: string): Answer {
  return json(status, { error: message });
}

export function simCollectorRecord(model: FleetModel, c: SimCollector, now: number) {
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
    upgrading: c.current !== undefined,
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

export function introspect(
  model: FleetModel,
  method: string,
  path: string,
  query: URLSearchParams,
  bodyText: string,
  now: number,
  stats: () => unknown,
): Answer {
  if (path === '/_sim/stats') return method === 'GET' ? json(200, stats()) : simError(405, 'use GET');
  if (path === '/_sim/builds') {
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
  if (path === '/_sim/collectors') {
    if (method !== 'GET') return simError(405, 'use GET');
    const ids = query.get('ids');
    const wanted = ids ? new Set(ids.split(',').map(Number)) : undefined;
    const list = wanted ? model.collectors.filter((c) => wanted.has(c.id)) : model.collectors;
    return json(200, { collectors: list.map((c) => simCollectorRecord(model, c, now)) });
  }
  const m = /^\/_sim\/collectors\/(\d+)$/.exec(path);
  if (!m) return simError(404, `no such introspection path: ${path}`);
  const c = model.collector(Number(m[1]));
  if (!c) return simError(404, `no Collector ${m[1]}`);
  if (method === 'GET') return json(200, simCollectorRecord(model, c, now));
  if (method !== 'PATCH') return simError(405, 'use GET or PATCH');
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
