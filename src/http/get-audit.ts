/**
 * `GET /audit?since=&user=&rollout=&format=json|csv`: the audit trail (rollout/life/audit-log.ts),
 * oldest first, with the filters of `fleet-upgrade audit` (audit-query.ts). Streamed: read a page
 * at a time from Redis and written as it comes, each page after the socket took the last, so that
 * 100,000 records hold one page in memory. JSON is JSON Lines (one record per line). Needs the
 * role viewer (the caller is checked before: create-rollout-api.ts); a person whose `orgs` are
 * limited reads only the records that name one of them (docs/access.md).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuditLog } from '../rollout/index.js';
import { auditCsvHeader, auditCsvRow, auditFilterOf, auditJsonLine } from './audit-query.js';
import { write } from './get-report.js';
import { echo, HttpError } from './http-error.js';

/** Records gathered into one write. */
const CHUNK = 200;

export async function sendAudit(
  req: IncomingMessage,
  res: ServerResponse,
  log: AuditLog,
  query: URLSearchParams,
  now: number,
  /** The organizations the caller may read (read-scope.ts); undefined: all. */
  scope?: readonly string[],
): Promise<void> {
  const format = query.get('format') ?? 'json';
  if (format !== 'json' && format !== 'csv')
    throw new HttpError('invalid', `format: expected json or csv, not '${echo(format)}'`);
  const filter = auditFilterOf(
    {
      since: query.get('since') ?? undefined,
      user: query.get('user') ?? undefined,
      rollout: query.get('rollout') ?? undefined,
    },
    now,
  );
  if (typeof filter === 'string') throw new HttpError('invalid', filter);
  const dropped = await log.dropped();
  res.writeHead(200, {
    'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    // What the bounds removed so far: the trail is whole only when both are 0.
    'x-audit-dropped': `cap=${dropped.cap}, retention=${dropped.retention}`,
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  let chunk = format === 'csv' ? auditCsvHeader() : '';
  let n = 0;
  for await (const entry of log.read(filter)) {
    // A person of some organizations reads the records that name one of them.
    if (scope && !entry.orgs?.some((o) => scope.includes(o))) continue;
    chunk += format === 'csv' ? auditCsvRow(entry) : auditJsonLine(entry);
    if (++n % CHUNK === 0) {
      await write(res, chunk);
      chunk = '';
    }
  }
  res.end(chunk);
}
