/**
 * `GET /rollouts/{id}/report`: every Collector of a rollout with its outcome, as `fleet-upgrade
 * report` gives it (the rows of rollout/life/report-rows.ts, in the same order): CSV or JSON, by
 * `?format=csv|json`, else by the `Accept` header (`text/csv`; JSON otherwise). The answer is
 * streamed: written in chunks of REPORT_CHUNK_ROWS rows, each after the socket has taken the last
 * (`drain`), so that 10,000 rows never make one string nor outrun a slow reader. `?worklist=true`:
 * only the Collectors that need a person, as `report --worklist`.
 */
import type { ServerResponse } from 'node:http';
import {
  type CollectorRecord,
  csvCell,
  orgsOf,
  REPORT_COLUMNS,
  type RolloutRecord,
  sortReportRecords,
  toCsvRow,
  toJsonRow,
  toWorklistRow,
  unmatchedCsvRow,
  WORKLIST_COLUMNS,
  WORKLIST_STATES,
} from '../rollout/index.js';
import { echo, HttpError } from './http-error.js';

/** Rows written at once before waiting for the socket. */
export const REPORT_CHUNK_ROWS = 500;

export type ReportFormat = 'csv' | 'json';

/** `?format=` wins; else `Accept: text/csv` asks for CSV; JSON otherwise. */
export function reportFormat(query: URLSearchParams, accept: string | undefined): ReportFormat {
  const asked = query.get('format');
  if (asked !== null) {
    if (asked === 'csv' || asked === 'json') return asked;
    throw new HttpError('invalid', `format: expected csv or json, not '${echo(asked)}'`);
  }
  const types = (accept ?? '')
    .split(',')
    .map((t) => t.split(';')[0]?.trim().toLowerCase())
    .filter(Boolean);
  const csv = types.indexOf('text/csv');
  const json = types.indexOf('application/json');
  return csv >= 0 && (json < 0 || csv < json) ? 'csv' : 'json';
}

/** `?worklist=true`: only the Collectors that need a person, as `report --worklist`. */
export function reportWorklist(query: URLSearchParams): boolean {
  const asked = query.get('worklist');
  if (asked === null || asked === 'false') return false;
  if (asked === 'true') return true;
  throw new HttpError('invalid', `worklist: expected true or false, not '${echo(asked)}'`);
}

/** Writes `text`; resolves once the socket can take more (at once when it can). */
function write(res: ServerResponse, text: string): Promise<void> {
  if (res.write(text)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', closed);
      resolve();
    };
    const closed = () => {
      res.off('drain', done);
      reject(new Error('the client went away'));
    };
    res.once('drain', done);
    res.once('close', closed);
  });
}

export async function sendReport(
  res: ServerResponse,
  rollout: RolloutRecord,
  records: CollectorRecord[],
  format: ReportFormat,
  head: boolean,
  worklist = false,
): Promise<void> {
  sortReportRecords(orgsOf(rollout), records);
  const safeId = rollout.id.replace(/[^\w.@-]/g, '_');
  res.writeHead(200, {
    'content-type': format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
    'content-disposition': `inline; filename="report-${safeId}.${format}"`,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  if (head) {
    res.end();
    return;
  }
  if (worklist) {
    await sendWorklist(res, rollout.id, records, format);
    return;
  }
  const rows =
    format === 'csv'
      ? [
          ...records.map(toCsvRow),
          // A one-off's named Collectors it did not upgrade: a row each, with why (state `unmatched`).
          ...(rollout.unmatched ?? []).map(unmatchedCsvRow),
        ]
      : records.map((r) => JSON.stringify(toJsonRow(r)));
  await write(
    res,
    format === 'csv'
      ? `${REPORT_COLUMNS.join(',')}\n`
      : `{"rollout":${JSON.stringify(rollout)},"collectors":[`,
  );
  for (let i = 0; i < rows.length; i += REPORT_CHUNK_ROWS) {
    const chunk = rows.slice(i, i + REPORT_CHUNK_ROWS);
    await write(res, format === 'csv' ? `${chunk.join('\n')}\n` : `${i > 0 ? ',' : ''}${chunk.join(',')}`);
  }
  res.end(format === 'csv' ? '' : ']}');
}

/**
 * The worklist (`report --worklist`'s rows and shapes): CSV with WORKLIST_COLUMNS, or JSON
 * `{rollout, worklist}`; each row names the command that resolves it. Few rows by nature (the
 * Collectors that need a person), so written at once.
 */
async function sendWorklist(
  res: ServerResponse,
  rolloutId: string,
  records: CollectorRecord[],
  format: ReportFormat,
): Promise<void> {
  const rows = records
    .filter((r) => WORKLIST_STATES.includes(r.state))
    .map((r) => toWorklistRow(r, rolloutId));
  if (format === 'json') {
    res.end(JSON.stringify({ rollout: rolloutId, worklist: rows }));
    return;
  }
  const lines = [
    WORKLIST_COLUMNS.join(','),
    ...rows.map((row) => WORKLIST_COLUMNS.map((c) => csvCell(row[c], c)).join(',')),
  ];
  for (let i = 0; i < lines.length; i += REPORT_CHUNK_ROWS)
    await write(res, `${lines.slice(i, i + REPORT_CHUNK_ROWS).join('\n')}\n`);
  res.end();
}
