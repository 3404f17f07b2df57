/**
 * The rollout endpoints of `run`: reads (`GET /rollouts`, `/rollouts/{id}`,
 * `/rollouts/{id}/history`, `/rollouts/{id}/report` as CSV or JSON, streamed, or its worklist:
 * get-report.ts, and the access rule of `/status`), the operator actions of
 * src/rollout/operator/control.ts as
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
 * Nothing is read from Redis before the caller is authorized. The history records the actor
 * `http:<address>`. `pause`, `resume`, `retry` and `rollback` take an optional `org`: that
 * organization's part only (one the rollout does not cover is a 400 naming those it covers).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { z } from 'zod';
import type { Logger } from '../lib/logger.js';
import { withTimeout } from '../lib/with-timeout.js';
import type { CollectorRecord, CollectorState } from '../rollout/index.js';
import {
  abort,
  type ControlDeps,
  ControlError,
  type ControlResult,
  type EventLog,
  forget,
  HISTORY_LIMIT,
  OrgHealth,
  pause,
  promote,
  readFleetStatus,
  readRollbackAccounts,
  requestRollback,
  resume,
  retry,
  rollbackStates,
  rolloutStatus,
} from '../rollout/index.js';
import { authorizeRequest, type ControlToken } from './authorize-request.js';
import { createControlGate } from './control-gate.js';
import { reportFormat, reportWorklist, sendReport } from './get-report.js';
import { echo, HttpError, sendJson } from './http-error.js';
import type { RequestTarget } from './parse-request-target.js';
import { type OneOffDeps, postUpgrade } from './post-upgrade.js';
import { CONTROL_RATE, RateLimiter } from './rate-limiter.js';
import { readJsonBody } from './read-json-body.js';
import {
  AbortBody,
  describeIssues,
  ForgetBody,
  PromoteBody,
  RetryBody,
  RollbackBody,
  ScopeBody,
  UPGRADE_BODY_LIMIT_BYTES,
  UpgradeBody,
} from './schema.js';

/** Longest wait for Redis in one request: ioredis queues commands while Redis is away. */
const REDIS_WAIT_MS = 10_000;
const TIMED_OUT = Symbol('timed out');
/** Longest rollout id looked up (a policy name, `@`, a build). */
const ID_LIMIT = 256;

export interface RolloutApiOptions {
  deps: ControlDeps & { events: EventLog };
  /** `forget` deletes keys directly; the list reads every rollout's counts in one pipeline. */
  redis: Redis;
  /** Undefined: control endpoints answer only to loopback callers. */
  token: ControlToken | undefined;
  /** `--auth-reads`: the read endpoints need the token (or loopback) too. */
  authReads: boolean;
  logger: Logger;
  /** Default: CONTROL_RATE per remote address (control actions and `POST /upgrades` alike). */
  rateLimiter?: RateLimiter;
  /** `POST /upgrades`: the settings' organizations and the daemon's client of each (absent: 404). */
  oneOffs?: Pick<OneOffDeps, 'orgs' | 'client'>;
  redisWaitMs?: number;
}

export interface RolloutApi {
  /** For the index at `/`. */
  endpoints: readonly string[];
  /** Throws a 401/403 HttpError unless the caller may read (always, without `--auth-reads`). */
  authorizeRead(req: IncomingMessage): void;
  /** Answers the request and resolves true when the path is one of the API's; false otherwise. */
  handle(req: IncomingMessage, res: ServerResponse, target: RequestTarget): Promise<boolean>;
}

interface Action<S extends z.ZodType> {
  body: S;
  run(deps: ControlDeps, id: string, actor: string, body: z.infer<S>, redis: Redis): Promise<ControlResult>;
}
const action = <S extends z.ZodType>(body: S, run: Action<S>['run']): Action<S> => ({ body, run });

/** The organization a body scopes its action to, when it names one. */
const scopeOf = (body: { org?: string | undefined }): { org?: string } =>
  body.org === undefined ? {} : { org: body.org };

const ACTIONS: Record<string, Action<z.ZodType>> = {
  pause: action(ScopeBody, (deps, id, actor, body: ScopeBody) => pause(deps, id, actor, scopeOf(body))),
  resume: action(ScopeBody, (deps, id, actor, body: ScopeBody) => resume(deps, id, actor, scopeOf(body))),
  // Who, then why, as `fleet-upgrade abort --reason` records it: status and history name the actor.
  abort: action(AbortBody, (deps, id, actor, body: AbortBody) =>
    abort(deps, id, actor, body.reason === undefined ? undefined : `by ${actor}: ${body.reason}`),
  ),
  promote: action(PromoteBody, (deps, id, actor, body: PromoteBody) =>
    promote(deps, id, actor, body.full ?? false),
  ),
  retry: action(RetryBody, (deps, id, actor, body: RetryBody) =>
    retry(deps, id, actor, body.only as CollectorState[], scopeOf(body)),
  ),
  rollback: action(RollbackBody, (deps, id, actor, body: RollbackBody) =>
    requestRollback(deps, id, actor, rollbackStates(body), scopeOf(body)),
  ),
  forget: action(ForgetBody, (deps, id, _actor, body: ForgetBody) =>
    forget(deps, id, { force: body.force ?? false }),
  ),
};

const READ = ['GET', 'HEAD'] as const;

/** An id that names no rollout for sure is not looked up (nor written into a key name). */
function checkId(id: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (id.length > ID_LIMIT || /[\u0000-\u001f\u007f]/.test(id))
    throw new HttpError('not_found', `no rollout '${echo(id)}' (see GET /rollouts)`);
}

function allow(req: IncomingMessage, methods: readonly string[]): void {
  if (!methods.includes(req.method ?? ''))
    throw new HttpError('method_not_allowed', `use ${methods.join(' or ')}`, { allow: methods.join(', ') });
}

export function createRolloutApi(options: RolloutApiOptions): RolloutApi {
  const { deps, redis, logger } = options;
  const limiter = options.rateLimiter ?? new RateLimiter(CONTROL_RATE);
  const gate = createControlGate({ token: options.token, limiter, logger });
  const waitMs = options.redisWaitMs ?? REDIS_WAIT_MS;

  const decide = (req: IncomingMessage) =>
    authorizeRequest({
      token: options.token,
      authorization: req.headers.authorization,
      host: req.headers.host,
      remoteAddress: req.socket.remoteAddress,
    });
  /** A refusal, logged at warn for control requests (rate-limited), at debug for reads (not). */
  const refuse = (req: IncomingMessage, error: HttpError, level: 'warn' | 'debug'): never => {
    logger[level](
      { remote: req.socket.remoteAddress, method: req.method, code: error.code },
      'http request refused',
    );
    throw error;
  };
  const authorize = (req: IncomingMessage, level: 'warn' | 'debug' = 'warn'): string => {
    const decision = decide(req);
    return decision.ok ? decision.actor : refuse(req, decision.error, level);
  };
  const authorizeRead = (req: IncomingMessage) => {
    if (options.authReads) authorize(req, 'debug');
  };
  /** Redis work within time: a 503 rather than a request that hangs while Redis is away. */
  const redisWork = <T>(work: Promise<T>, what: string): Promise<T> =>
    withTimeout<T | typeof TIMED_OUT>(work, waitMs, () => TIMED_OUT).then((r) => {
      if (r === TIMED_OUT)
        throw new HttpError('unavailable', `Redis did not answer within ${waitMs / 1000} s; ${what}`);
      return r;
    });

  const getRollout = async (res: ServerResponse, id: string) => {
    checkId(id);
    const record = await redisWork(deps.rollouts.get(id), 'try again');
    if (!record) throw new HttpError('not_found', `no rollout '${id}' (see GET /rollouts)`);
    const [counts, orgCounts, problems] = await redisWork(
      Promise.all([
        deps.store.counts(id),
        deps.store.orgCounts(id),
        new OrgHealth(redis, deps.keys).problems(),
      ]),
      'try again',
    );
    // What became of its rollbacks, as their rollouts stand now (rollback-account.ts).
    const accounts = await redisWork(readRollbackAccounts(deps.rollouts, record), 'try again');
    sendJson(res, 200, { ...rolloutStatus(record, counts, orgCounts, problems), ...accounts });
  };

  const getHistory = async (res: ServerResponse, id: string, query: URLSearchParams) => {
    const raw = query.get('limit');
    const limit = raw === null ? HISTORY_LIMIT : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_LIMIT)
      throw new HttpError('invalid', `limit: expected a whole number from 1 to ${HISTORY_LIMIT}`);
    checkId(id);
    if (!(await redisWork(deps.rollouts.get(id), 'try again')))
      throw new HttpError('not_found', `no rollout '${id}' (see GET /rollouts)`);
    const events = await redisWork(deps.events.history(id, limit), 'try again');
    sendJson(res, 200, { rollout: id, events });
  };

  const control = async (req: IncomingMessage, res: ServerResponse, id: string, name: string) => {
    const act = ACTIONS[name] as Action<z.ZodType>;
    // The token, an Origin, the content type, the caller's rate (control-gate.ts).
    const actor = gate.admit(req);
    checkId(id);
    const parsed = act.body.safeParse(await readJsonBody(req));
    if (!parsed.success) throw new HttpError('invalid', describeIssues(parsed.error));
    let result: ControlResult;
    try {
      result = await redisWork(
        act.run(deps, id, actor, parsed.data, redis),
        `the ${name} may still take effect: see GET /rollouts/{id}/history`,
      );
    } catch (err) {
      if (err instanceof ControlError) {
        logger.info({ actor, rollout: id, action: name, refused: err.kind }, 'control action refused');
        throw new HttpError(err.kind, err.message);
      }
      throw err;
    }
    logger.info({ actor, rollout: id, action: name }, 'control action');
    sendJson(res, 200, result);
  };

  const getReport = async (req: IncomingMessage, res: ServerResponse, id: string, query: URLSearchParams) => {
    const format = reportFormat(query, req.headers.accept);
    const worklist = reportWorklist(query);
    checkId(id);
    const record = await redisWork(deps.rollouts.get(id), 'try again');
    if (!record) throw new HttpError('not_found', `no rollout '${id}' (see GET /rollouts)`);
    const records = await redisWork(
      (async () => {
        const all: CollectorRecord[] = [];
        for await (const r of deps.store.all(id)) all.push(r);
        return all;
      })(),
      'try again',
    );
    // As `report --format json`: the rollout with what became of its rollbacks (rollback-account.ts).
    const accounts = await redisWork(readRollbackAccounts(deps.rollouts, record), 'try again');
    await sendReport(res, { ...record, ...accounts }, records, format, req.method === 'HEAD', worklist);
  };

  const upgrade = async (
    req: IncomingMessage,
    res: ServerResponse,
    oneOffs: NonNullable<RolloutApiOptions['oneOffs']>,
  ) => {
    const actor = gate.admit(req);
    const parsed = UpgradeBody.safeParse(await readJsonBody(req, UPGRADE_BODY_LIMIT_BYTES));
    if (!parsed.success) throw new HttpError('invalid', describeIssues(parsed.error));
    await postUpgrade(res, { ...oneOffs, redis, keys: deps.keys, clock: deps.clock }, parsed.data, actor);
    logger.info({ actor, action: 'upgrade', collectors: parsed.data.collectors.length }, 'control action');
  };

  return {
    endpoints: [
      '/rollouts',
      '/rollouts/{id}',
      '/rollouts/{id}/history',
      '/rollouts/{id}/report',
      ...Object.keys(ACTIONS).map((a) => `POST /rollouts/{id}/${a}`),
      ...(options.oneOffs ? ['POST /upgrades'] : []),
    ],
    authorizeRead,
    async handle(req, res, target) {
      const [root, id, sub, ...rest] = target.segments;
      if (root === 'upgrades' && id === undefined && options.oneOffs) {
        allow(req, ['POST']);
        await upgrade(req, res, options.oneOffs);
        return true;
      }
      if (root !== 'rollouts' || rest.length > 0) return false;
      if (id === undefined) {
        allow(req, READ);
        authorizeRead(req);
        const status = await redisWork(
          readFleetStatus({ redis, keys: deps.keys, rollouts: deps.rollouts }),
          'try again',
        );
        sendJson(res, 200, { rollouts: status.rollouts, orgProblems: status.orgProblems });
        return true;
      }
      if (sub === undefined) {
        allow(req, READ);
        authorizeRead(req);
        await getRollout(res, id);
        return true;
      }
      if (sub === 'history') {
        allow(req, READ);
        authorizeRead(req);
        await getHistory(res, id, target.query);
        return true;
      }
      if (sub === 'report') {
        allow(req, READ);
        authorizeRead(req);
        await getReport(req, res, id, target.query);
        return true;
      }
      if (!Object.hasOwn(ACTIONS, sub)) return false;
      allow(req, ['POST']);
      await control(req, res, id, sub);
      return true;
    },
  };
}
