/**
 * The reads of one rollout (`GET /rollouts/{id}`, `/rollouts/{id}/history`, `/rollouts/{id}/report`)
 * for create-rollout-api.ts, each within the person's read scope (read-scope.ts): a rollout with none
 * of their organizations is a 403, its parts and records of the others are withheld.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Redis } from 'ioredis';
import type { CollectorRecord, ControlDeps, EventLog } from '../rollout/index.js';
import { HISTORY_LIMIT, OrgHealth, readRollbackAccounts, rolloutStatus } from '../rollout/index.js';
import { reportFormat, reportWorklist, sendReport } from './get-report.js';
import { echo, HttpError, sendJson } from './http-error.js';
import {
  isReadable,
  outOfScope,
  type ReadScope,
  requireReadable,
  scopeEvents,
  scopeOne,
  scopeRecord,
} from './read-scope.js';
import { sendTaggedJson } from './send-tagged-json.js';

/** Longest rollout id looked up (a policy name, `@`, a build). */
export const ID_LIMIT = 256;

/** An id that names no rollout for sure is not looked up (nor written into a key name). */
export function checkId(id: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (id.length > ID_LIMIT || /[\u0000-\u001f\u007f]/.test(id))
    throw new HttpError('not_found', `no rollout '${echo(id)}' (see GET /rollouts)`);
}

export function rolloutReads({
  deps,
  redis,
  redisWork,
}: {
  deps: ControlDeps & { events: EventLog };
  redis: Redis;
  /** Redis work within time (a 503 rather than a request that hangs). */
  redisWork: <T>(work: Promise<T>, what: string) => Promise<T>;
}) {
  /** The rollout `id`, when it exists and the caller may read it (else 404, or 403 out of scope). */
  const readable = async (id: string, scope: ReadScope) => {
    checkId(id);
    const record = await redisWork(deps.rollouts.get(id), 'try again');
    if (!record) throw new HttpError('not_found', `no rollout '${id}' (see GET /rollouts)`);
    requireReadable(record, scope);
    return record;
  };

  const getRollout = async (req: IncomingMessage, res: ServerResponse, id: string, scope: ReadScope) => {
    const record = await readable(id, scope);
    const [counts, orgCounts, problems] = await redisWork(
      Promise.all([
        deps.store.counts(id),
        deps.store.orgCounts(id),
        new OrgHealth(redis, deps.keys).problems(),
      ]),
      'try again',
    );
    // What became of its rollbacks (the caller's organizations' only), as their rollouts stand now
    // (rollback-account.ts).
    const mine = scopeRecord(record, scope);
    const accounts = await redisWork(readRollbackAccounts(deps.rollouts, mine), 'try again');
    const status = scopeOne(rolloutStatus(mine, counts, orgCounts, problems), scope);
    if (!status) throw outOfScope(record.id, scope as readonly string[]);
    sendTaggedJson(req, res, { ...status, ...accounts });
  };

  const getHistory = async (res: ServerResponse, id: string, query: URLSearchParams, scope: ReadScope) => {
    const raw = query.get('limit');
    const limit = raw === null ? HISTORY_LIMIT : Number(raw);
    if (!Number.isInteger(limit) || limit < 1 || limit > HISTORY_LIMIT)
      throw new HttpError('invalid', `limit: expected a whole number from 1 to ${HISTORY_LIMIT}`);
    await readable(id, scope);
    const events = await redisWork(deps.events.history(id, limit), 'try again');
    sendJson(res, 200, { rollout: id, events: scopeEvents(events, scope) });
  };

  const getReport = async (
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    query: URLSearchParams,
    scope: ReadScope,
  ) => {
    const format = reportFormat(query, req.headers.accept);
    const worklist = reportWorklist(query);
    const record = await readable(id, scope);
    const records = await redisWork(
      (async () => {
        const all: CollectorRecord[] = [];
        for await (const r of deps.store.all(id)) if (isReadable(r.org, scope)) all.push(r);
        return all;
      })(),
      'try again',
    );
    // As `report --format json`: the rollout with what became of its rollbacks (rollback-account.ts).
    const mine = scopeRecord(record, scope);
    const accounts = await redisWork(readRollbackAccounts(deps.rollouts, mine), 'try again');
    const shown = { ...mine, ...accounts };
    await sendReport(res, shown, records, format, req.method === 'HEAD', worklist);
  };

  return { getRollout, getHistory, getReport };
}
