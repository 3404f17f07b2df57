/**
 * One request to /api/v1, through the steps the real service takes, in order: the organization
 * its credentials name (with one organization, that one, whatever the credentials), an outage of
 * that organization (503, or the connection reset), routing (404/405), basic authentication and
 * an `unauthorized` fault (401), a rate-limit storm and the rate limits (429), the added latency
 * and a `slow` fault, the Content-Type rule (415), injected server errors (500/503), the
 * endpoint itself, a `malformed` body for a 200, and possibly a dropped connection after the
 * endpoint has acted. Every answer is counted in the organization's statistics; with several
 * organizations, a request whose credentials name none is counted apart (`unattributed`).
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../lib/clock.js';
import type { Logger } from '../lib/logger.js';
import { healthEventsOfResources, listHealthEvents } from './health-routes.js';
import {
  type Answer,
  basicCredentials,
  isJsonContentType,
  legacyError,
  newerError,
  readBody,
  send,
  UNAUTHORIZED_HTML,
} from './http-util.js';
import { malformedAnswer } from './malformed-body.js';
import type { Account, Organization } from './organization.js';
import {
  type CallContext,
  createTask,
  type Endpoint,
  listInventory,
  listTargets,
  listUpgradable,
  taskStatus,
} from './service-routes.js';
import type { SimulatorStats } from './simulator-stats.js';

export interface ApiDeps {
  orgs: readonly Organization[];
  /** Every accessId of every organization (unique across them). */
  accounts: ReadonlyMap<string, { org: Organization; account: Account }>;
  /** With several organizations: requests whose credentials name none of them. */
  unattributed: SimulatorStats;
  clock: Clock;
  logger: Logger;
  /** Accept a GET without Content-Type. */
  lenientContentType: boolean;
}

const API_PREFIX = '/api/v1/';
const MALFORMED_SHAPES = ['truncated', 'html', 'types'] as const;

type Route = { endpoint: Endpoint; run: (ctx: CallContext, query: URLSearchParams, body: string) => Answer };

function route(method: string, path: string): Route | Answer {
  if (!path.startsWith(API_PREFIX)) return legacyError(404, 'notfound', `No resource at ${path}.`);
  const rest = path.slice(API_PREFIX.length);
  const expect = (want: string, r: Route): Route | Answer =>
    method === want ? r : legacyError(405, 'method.unsupported', `Method ${method} is not supported here.`);
  if (rest === 'collectors/upgrades/collectors')
    return expect('GET', { endpoint: 'list', run: (c, q) => listUpgradable(c, q) });
  if (rest === 'collectors/upgrades/targets')
    return expect('GET', { endpoint: 'targets', run: (c) => listTargets(c) });
  if (rest === 'collectors/upgrades')
    return expect('POST', { endpoint: 'create', run: (c, _q, b) => createTask(c, b) });
  if (rest === 'collectors')
    return expect('GET', { endpoint: 'inventory', run: (c, q) => listInventory(c, q) });
  if (rest === 'healthEvents')
    return expect('GET', { endpoint: 'health', run: (c, q) => listHealthEvents(c, q) });
  if (rest === 'healthEvents/resources')
    return expect('POST', { endpoint: 'health', run: (c, q, b) => healthEventsOfResources(c, q, b) });
  const m = /^collectors\/upgrades\/([^/]+)$/.exec(rest);
  if (m) {
    let id: string;
    try {
      id = decodeURIComponent(m[1] as string);
    } catch {
      // A malformed percent-encoding names no task.
      id = m[1] as string;
    }
    return expect('GET', { endpoint: 'status', run: (c) => taskStatus(c, id) });
  }
  return legacyError(404, 'notfound', `No resource at ${path}.`);
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function unauthorized(org: Organization | undefined): Answer {
  const ratio = org?.fleet.faults.htmlUnauthorizedRatio ?? 0;
  const headers = { 'www-authenticate': 'Basic realm="api"' };
  if (org && ratio > 0 && org.rng.chance(ratio))
    return { status: 401, code: 'unauthorized', body: UNAUTHORIZED_HTML, headers };
  const a = legacyError(401, 'unauthorized', 'Full authentication is required to access this resource.');
  return { ...a, headers };
}

export async function handleApi(
  deps: ApiDeps,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  query: URLSearchParams,
): Promise<void> {
  const { clock, logger } = deps;
  const method = req.method ?? 'GET';
  const started = performance.now();
  const body = await readBody(req);
  const creds = basicCredentials(req.headers.authorization);
  const found = creds ? deps.accounts.get(creds.id) : undefined;
  const org = found?.org ?? (deps.orgs.length === 1 ? deps.orgs[0] : undefined);
  const stats = org?.stats ?? deps.unattributed;
  const routed = route(method, path);
  stats.total++;
  stats.byEndpoint['endpoint' in routed ? routed.endpoint : 'other']++;
  const subject =
    'endpoint' in routed
      ? routed.endpoint === 'status'
        ? path.slice(path.lastIndexOf('/') + 1)
        : routed.endpoint === 'list'
          ? (query.get('toVersion') ?? query.get('to') ?? undefined)
          : undefined
      : undefined;
  const answer = (a: Answer) => {
    stats.record(a.status, a.code);
    stats.logRequest({
      at: clock.now(),
      endpoint: 'endpoint' in routed ? routed.endpoint : 'other',
      status: a.status,
      ...(subject ? { subject: subject.slice(0, 64) } : {}),
    });
    send(res, a);
    logger.debug(
      {
        method,
        path,
        org: org?.name,
        status: a.status,
        code: a.code,
        ms: Math.round(performance.now() - started),
      },
      'request',
    );
  };
  if (org) {
    const outage = org.faults.active('outage', clock.now());
    if (outage) {
      stats.faults.outage++;
      if (outage.mode === 'refuse') {
        logger.debug({ method, path, org: org.name }, 'request refused by an outage');
        req.socket.resetAndDestroy();
        return;
      }
      return answer(legacyError(503, 'service.unavailable', 'Service is temporarily unavailable.'));
    }
  }
  if (!('endpoint' in routed)) return answer(routed);
  if (!creds || !found || !sameSecret(creds.key, found.account.user.accessKey))
    return answer(unauthorized(org));
  const { account } = found;
  const home = found.org;
  if (home.faults.active('unauthorized', clock.now())) {
    stats.faults.unauthorized++;
    return answer(unauthorized(home));
  }
  home.model.advance(clock.now());
  const storm = home.faults.active('rateLimitStorm', clock.now());
  if (storm && home.rng.chance(storm.ratio)) {
    stats.faults.rateLimitStorm++;
    return answer(newerError(429, 'rate.limit.exceeded', 'API rate limit for this user has been exceeded.'));
  }
  const admission = home.limiter.admit(
    account.user.accessId,
    account.user.accessKey,
    account.limit,
    clock.now(),
  );
  if (!admission.ok) {
    stats.rateLimited++;
    stats.rateLimitedBy[admission.reason]++;
    return answer(newerError(429, 'rate.limit.exceeded', 'API rate limit for this user has been exceeded.'));
  }
  try {
    let delay = home.latency();
    const slow = home.faults.active('slow', clock.now());
    if (slow) {
      stats.faults.slow++;
      delay += slow.latencyMs;
    }
    if (delay > 0) await clock.sleep(delay);
    const contentType = req.headers['content-type'];
    const lenient = deps.lenientContentType && method === 'GET' && contentType === undefined;
    if (!lenient && !isJsonContentType(contentType)) {
      return answer(
        legacyError(
          415,
          'contenttype.invalid',
          `Content-Type must be application/json, got '${contentType ?? ''}'.`,
        ),
      );
    }
    if (body.tooLarge)
      return answer(legacyError(413, 'request.too.large', 'The request body is larger than 1 MiB.'));
    const { errorRatio, dropRatio } = home.fleet.faults;
    if (errorRatio > 0 && home.rng.chance(errorRatio)) {
      stats.injectedErrors++;
      return answer(
        home.rng.chance(0.5)
          ? legacyError(500, 'internal.error', 'Internal server error.')
          : legacyError(503, 'service.unavailable', 'Service is temporarily unavailable.'),
      );
    }
    const now = clock.now();
    home.model.advance(now);
    let result = routed.run(
      {
        model: home.model,
        accessId: account.user.accessId,
        allowed: account.allowed,
        canCreate: account.user.canCreate,
        now,
      },
      query,
      body.text,
    );
    const malformed = result.status === 200 ? home.faults.active('malformed', now) : undefined;
    if (malformed && home.rng.chance(malformed.ratio)) {
      stats.faults.malformed++;
      result = malformedAnswer(result, malformed.shape ?? home.rng.pick(MALFORMED_SHAPES));
    }
    if (dropRatio > 0 && home.rng.chance(dropRatio)) {
      stats.dropped++;
      stats.record(result.status, result.code);
      req.socket.destroy();
      return;
    }
    answer(result);
  } finally {
    admission.release();
  }
}
