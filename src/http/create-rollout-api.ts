/**
 * The rollout endpoints of `run`: reads (`GET /rollouts`, `/rollouts/{id}` and the next two: rollout-reads.ts,
 * `/rollouts/{id}/history`, `/rollouts/{id}/report` as CSV or JSON, streamed, or its worklist:
 * get-report.ts, and the access rule of `/status`), the operator actions of
 * src/rollout/operator/ (one verb a file) as
 * `POST /rollouts/{id}/{pause|resume|abort|promote|retry|rollback|forget}`, and one-off upgrades
 * as `POST /upgrades` (post-upgrade.ts: the checks of `fleet-upgrade upgrade`).
 *
 * A control request goes through, in this order: the path (404) and the method (405 with
 * `Allow`), the control gate (control-gate.ts: the token or loopback rule, 401/403, a refused
 * caller spending the bucket of refused callers at its address, and past it 429; a request from a
 * web page, an `Origin` header: 403; the content type, 415; the caller's own rate, 429), the body
 * (413/400; read-json-body.ts, schema.ts), then the action, whose refusals keep their kind as the
 * code (`not_found` 404, `conflict` 409, `invalid` 400). So neither a page in a browser on the
 * operator's machine nor a guesser of tokens can empty the bucket of the callers that may act.
 * Nothing is read from Redis before the caller is authorized.
 *
 * With `access:` (docs/access.md), the gate knows a person (access-control.ts), whose role is
 * checked before Redis is read (403 naming the role) and whose organizations once the rollout's
 * are known (403 naming those missing; without `org`, an action needs all of the rollout's).
 * Every control request, allowed or refused, is one audit record (audit-trail.ts): an action's
 * own in its atomic step. The history records the person's name (without `access`: `admin` for
 * the control token, `http:<address>` for a loopback caller). `GET /audit` reads the trail, `GET
 * /whoami` says who the caller is and what they may do (get-whoami.ts), `GET /fleet` the inventory
 * as `fleet --format json` and `GET /fleet/history` its compliance over time (get-fleet.ts), `GET
 * /eta` each unfinished rollout's time left (get-eta.ts), `POST /plan` what `plan` would do with a
 * policy in the body (post-plan.ts). `pause`, `resume`, `retry` and `rollback` take an optional
 * `org`: that organization's part only (one the rollout does not cover is a 400 naming those it
 * covers).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { AuditNote } from '../rollout/index.js';
import {
  AuditLog,
  type ControlDeps,
  type ControlResult,
  DEFAULT_ORG,
  type EventLog,
  orgsOf,
  readFleetStatus,
} from '../rollout/index.js';
import {
  type AccessControl,
  type Identity,
  readableOrgs,
  requireGrant,
  requireRole,
} from './access-control.js';
import { type AuditAsk, type AuditedWork, AuditTrail, auditRecord, runAudited } from './audit-trail.js';
import type { ControlToken } from './authorize-request.js';
import { ACTIONS, type Action } from './control-actions.js';
import { createControlGate, identifyCaller } from './control-gate.js';
import { sendAudit } from './get-audit.js';
import { readEta } from './get-eta.js';
import { readFleet, readFleetHistory } from './get-fleet.js';
import { sendWhoAmI } from './get-whoami.js';
import { echo, HttpError, sendJson } from './http-error.js';
import type { RequestTarget } from './parse-request-target.js';
import { PLAN_BODY_LIMIT_BYTES, planPolicy } from './post-plan.js';
import { type OneOffDeps, oneOffOrgOf, postUpgrade } from './post-upgrade.js';
import { CONTROL_RATE, RateLimiter } from './rate-limiter.js';
import { readJsonBody } from './read-json-body.js';
import { type ReadScope, scopeFleetStatus } from './read-scope.js';
import { checkId, rolloutReads } from './rollout-reads.js';
import { describeIssues, UPGRADE_BODY_LIMIT_BYTES, UpgradeBody } from './schema.js';
import { sendTaggedJson } from './send-tagged-json.js';

/** Longest wait for Redis in one request: ioredis queues commands while Redis is away. */
const REDIS_WAIT_MS = 10_000;
const TIMED_OUT = Symbol('timed out');

export interface RolloutApiOptions {
  deps: ControlDeps & { events: EventLog };
  /** `forget` deletes keys directly; the list reads every rollout's counts in one pipeline. */
  redis: Redis;
  /** Undefined: control endpoints answer only to loopback callers. */
  token: ControlToken | undefined;
  /** `--auth-reads`: the read endpoints need the token (or loopback) too. */
  authReads: boolean;
  logger: Logger;
  /** `access:`: named people (access-control.ts). Undefined: the token or loopback rule. */
  access?: AccessControl;
  /** The audit trail (default: one with the default bounds on `redis`). */
  audit?: AuditLog;
  /** Default: CONTROL_RATE per remote address (control actions and `POST /upgrades` alike). */
  rateLimiter?: RateLimiter;
  /** `GET /fleet`: the organizations whose inventory it reads (default: those of `oneOffs`; absent: 404). */
  fleetOrgs?: readonly string[];
  /** `POST /upgrades`: the settings' organizations and the daemon's client of each (absent: 404). */
  oneOffs?: Pick<OneOffDeps, 'orgs' | 'client'>;
  redisWaitMs?: number;
}

export interface RolloutApi {
  /** For the index at `/`. */
  endpoints: readonly string[];
  /**
   * Throws a 401/403 HttpError unless the caller may read (always, without `--auth-reads`);
   * answers the organizations the caller may read (undefined: all of them; read-scope.ts).
   */
  authorizeRead(req: IncomingMessage): ReadScope;
  /** Answers the request and resolves true when the path is one of the API's; false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<boolean>;
}

const READ = ['GET', 'HEAD'] as const;

function allow(req: IncomingMessage, methods: readonly string[]): void {
  if (!methods.includes(req.method ?? ''))
    throw new HttpError('method_not_allowed', `use ${methods.join(' or ')}`, { allow: methods.join(', ') });
}

export function createRolloutApi(options: RolloutApiOptions): RolloutApi {
  const { deps, redis, logger } = options;
  const limiter = options.rateLimiter ?? new RateLimiter(CONTROL_RATE);
  const { access } = options;
  const gate = createControlGate({ token: options.token, access, limiter, logger });
  const waitMs = options.redisWaitMs ?? REDIS_WAIT_MS;
  // Made at first use: the read endpoints work on a Redis that is not yet there.
  let madeTrail: AuditTrail | undefined;
  const trail = () => {
    madeTrail ??= new AuditTrail(options.audit ?? new AuditLog(redis, deps.keys), logger);
    return madeTrail;
  };

  const decide = (req: IncomingMessage) => identifyCaller(access, options.token, req);
  /** A refusal, logged at warn for control requests (rate-limited), at debug for reads (not). */
  const refuse = (req: IncomingMessage, error: HttpError, level: 'warn' | 'debug'): never => {
    logger[level](
      { remote: req.socket.remoteAddress, method: req.method, code: error.code },
      'http request refused',
    );
    throw error;
  };
  const authorize = (req: IncomingMessage, level: 'warn' | 'debug' = 'warn'): Identity => {
    const decision = decide(req);
    return decision.ok ? decision.who : refuse(req, decision.error, level);
  };
  /**
   * Reads: with `access`, a person with the role viewer (or more), who reads the organizations of
   * their grants only (read-scope.ts); else `--auth-reads` decides, and every caller reads all.
   */
  const authorizeRead = (req: IncomingMessage): ReadScope => {
    if (access) {
      const who = authorize(req, 'debug');
      try {
        requireRole(who, 'viewer', 'reading');
      } catch (err) {
        refuse(req, err as HttpError, 'debug');
      }
      return readableOrgs(who);
    }
    if (options.authReads) authorize(req, 'debug');
    return undefined;
  };
  /** Redis work within time: a 503 rather than a request that hangs while Redis is away. */
  const redisWork = <T>(work: Promise<T>, what: string): Promise<T> =>
    withTimeout<T | typeof TIMED_OUT>(work, waitMs, () => TIMED_OUT).then((r) => {
      if (r === TIMED_OUT)
        throw new HttpError('unavailable', `Redis did not answer within ${waitMs / 1000} s; ${what}`);
      return r;
    });

  const { getRollout, getHistory, getReport } = rolloutReads({ deps, redis, redisWork });

  const audited = (req: IncomingMessage, ask: AuditAsk, work: AuditedWork) =>
    runAudited({ trail, logger }, req, ask, work);

  const control = async (req: IncomingMessage, res: ServerResponse, id: string, name: string) => {
    const act = ACTIONS[name] as Action<z.ZodType>;
    await audited(req, { what: name, rollout: echo(id) }, async (admitted, scoped) => {
      // Who calls, an Origin, the content type, the caller's rate (control-gate.ts).
      const who = gate.admit(req);
      admitted(who);
      // The role, before anything is read from Redis.
      requireRole(who, act.role, name);
      checkId(id);
      const parsed = act.body.safeParse(await readJsonBody(req));
      if (!parsed.success) throw new HttpError('invalid', describeIssues(parsed.error));
      // The organizations: the one named, else every one of the rollout's.
      const named = (parsed.data as { org?: string }).org;
      // (Without `access` every caller may act everywhere: nothing to read.)
      const record =
        access && named === undefined ? await redisWork(deps.rollouts.get(id), 'try again') : undefined;
      const orgs = named !== undefined ? [named] : record ? orgsOf(record) : undefined;
      scoped(orgs);
      requireGrant(who, act.role, name, orgs);
      const note = trail().note(
        auditRecord(
          who,
          req.socket.remoteAddress,
          { what: name, rollout: id, ...(orgs ? { orgs } : {}) },
          {
            answer: 'allowed',
            status: 200,
          },
        ),
      );
      const result: ControlResult = await redisWork(
        act.run({ ...deps, rollouts: deps.rollouts.audited(note) }, id, who, parsed.data),
        `the ${name} may still take effect: see GET /rollouts/{id}/history`,
      );
      return { note, answer: () => sendJson(res, 200, result) };
    });
  };

  const upgrade = async (
    req: IncomingMessage,
    res: ServerResponse,
    oneOffs: NonNullable<RolloutApiOptions['oneOffs']>,
  ) => {
    await audited(req, { what: 'upgrade' }, async (admitted, scoped) => {
      const who = gate.admit(req);
      admitted(who);
      requireRole(who, 'operator', 'upgrade');
      const parsed = UpgradeBody.safeParse(await readJsonBody(req, UPGRADE_BODY_LIMIT_BYTES));
      if (!parsed.success) throw new HttpError('invalid', describeIssues(parsed.error));
      const orgs = [oneOffOrgOf(parsed.data, oneOffs.orgs.length ? oneOffs.orgs : [DEFAULT_ORG])];
      scoped(orgs);
      requireGrant(who, 'operator', 'upgrade', orgs);
      // Its audit record is written in the one-off's own step (lua/add-one-off-3.lua).
      let note: AuditNote | undefined;
      const audit = () => {
        note = trail().note(
          auditRecord(
            who,
            req.socket.remoteAddress,
            { what: 'upgrade', orgs },
            {
              answer: 'allowed',
              status: 201,
              reason: `${parsed.data.collectors.length} Collectors to ${parsed.data.to}`,
            },
          ),
        );
        return note;
      };
      await postUpgrade(
        res,
        { ...oneOffs, redis, keys: deps.keys, clock: deps.clock },
        parsed.data,
        who.name,
        audit,
      );
      return { ...(note ? { note } : {}), answer: () => {} };
    });
  };

  return {
    endpoints: [
      '/rollouts',
      '/rollouts/{id}',
      '/rollouts/{id}/history',
      '/rollouts/{id}/report',
      '/audit',
      '/whoami',
      '/eta',
      ...((options.fleetOrgs ?? options.oneOffs) ? ['/fleet', '/fleet/history'] : []),
      ...Object.keys(ACTIONS).map((a) => `POST /rollouts/{id}/${a}`),
      ...(options.oneOffs ? ['POST /upgrades', 'POST /plan'] : []),
    ],
    authorizeRead,
    async handle(req, res, target) {
      const [root, id, sub, ...rest] = target.segments;
      if (root === 'upgrades' && id === undefined && options.oneOffs) {
        allow(req, ['POST']);
        await upgrade(req, res, options.oneOffs);
        return true;
      }
      if (root === 'plan' && id === undefined && options.oneOffs) {
        allow(req, ['POST']);
        // A read that pages through the services: the gate's rate and Origin rule, the role viewer.
        const who = gate.admit(req);
        requireRole(who, 'viewer', 'plan');
        const state = { rollouts: deps.rollouts, redis, keys: deps.keys, clock: deps.clock };
        const plan = await planPolicy(
          { ...options.oneOffs, state },
          await readJsonBody(req, PLAN_BODY_LIMIT_BYTES),
        );
        sendJson(res, 200, plan);
        return true;
      }
      if (root === 'audit' && id === undefined) {
        allow(req, READ);
        // The trail is a read: the role viewer with `access`, else the control rule (it names people).
        let scope: ReadScope;
        if (access) scope = authorizeRead(req);
        else authorize(req, 'debug');
        await sendAudit(req, res, trail().log, target.query, Date.now(), scope);
        return true;
      }
      const fleetOrgs = options.fleetOrgs ?? options.oneOffs?.orgs;
      if (root === 'fleet' && id === undefined && fleetOrgs) {
        allow(req, READ);
        const scope = authorizeRead(req);
        const orgs = scope ? fleetOrgs.filter((o) => scope.includes(o)) : fleetOrgs;
        const fleet = await redisWork(
          readFleet({ redis, keys: deps.keys, orgs, now: deps.clock.now() }),
          'try again',
        );
        sendTaggedJson(req, res, fleet);
        return true;
      }
      if (root === 'fleet' && id === 'history' && sub === undefined && fleetOrgs) {
        allow(req, READ);
        authorizeRead(req);
        const history = await redisWork(
          readFleetHistory({ redis, keys: deps.keys, orgs: fleetOrgs, now: deps.clock.now() }),
          'try again',
        );
        sendTaggedJson(req, res, history);
        return true;
      }
      if (root === 'whoami' && id === undefined) {
        allow(req, READ);
        // Reads open (no `access`, no `--auth-reads`): an unknown caller is a reader without a name.
        sendWhoAmI(res, decide(req), {
          access: access !== undefined,
          readsOpen: !access && !options.authReads,
        });
        return true;
      }
      if (root === 'eta' && id === undefined) {
        allow(req, READ);
        authorizeRead(req);
        const eta = await redisWork(
          readFleetStatus({ redis, keys: deps.keys, rollouts: deps.rollouts }).then((status) =>
            readEta({ redis, keys: deps.keys, rollouts: status.rollouts }),
          ),
          'try again',
        );
        sendTaggedJson(req, res, eta);
        return true;
      }
      if (root !== 'rollouts' || rest.length > 0) return false;
      if (id === undefined) {
        allow(req, READ);
        const scope = authorizeRead(req);
        const status = await redisWork(
          readFleetStatus({ redis, keys: deps.keys, rollouts: deps.rollouts }),
          'try again',
        );
        const shown = scopeFleetStatus({ rollouts: status.rollouts, orgProblems: status.orgProblems }, scope);
        sendJson(res, 200, shown);
        return true;
      }
      if (sub === undefined) {
        allow(req, READ);
        await getRollout(req, res, id, authorizeRead(req));
        return true;
      }
      if (sub === 'history') {
        allow(req, READ);
        await getHistory(res, id, target.query, authorizeRead(req));
        return true;
      }
      if (sub === 'report') {
        allow(req, READ);
        await getReport(req, res, id, target.query, authorizeRead(req));
        return true;
      }
      if (!Object.hasOwn(ACTIONS, sub)) return false;
      allow(req, ['POST']);
      await control(req, res, id, sub);
      return true;
    },
  };
}
