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
  orgsOf,
  REPORT_COLUMNS,
  type RolloutRecord,
  sortReportRecords,
  toCsvRow,
  toJsonRow,
  toWorklistCsvRow,
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
export function write(res: ServerResponse, text: string): Promise<void> {
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
  // The rows, written in chunks between a head and a tail: the report (`report`), or the worklist
  // (`report --worklist`: only the Collectors that need a person, each with the command that
  // resolves it), as CSV or JSON.
  const [first, rows, last] = worklist
    ? worklistParts(rollout.id, records, format)
    : reportParts(rollout, records, format);
  await write(res, first);
  for (let i = 0; i < rows.length; i += REPORT_CHUNK_ROWS) {
    const chunk = rows.slice(i, i + REPORT_CHUNK_ROWS);
    await write(res, format === 'csv' ? `${chunk.join('\n')}\n` : `${i > 0 ? ',' : ''}${chunk.join(',')}`);
  }
  res.end(last);
}

type Parts = [head: string, rows: string[], tail: string];

function reportParts(rollout: RolloutRecord, records: CollectorRecord[], format: ReportFormat): Parts {
  if (format === 'json')
    return [
      `{"rollout":${JSON.stringify(rollout)},"collectors":[`,
      records.map((r) => JSON.stringify(toJsonRow(r))),
      ']}',
    ];
  return [
    `${REPORT_COLUMNS.join(',')}\n`,
    [
      ...records.map(toCsvRow),
      // A one-off's named Collectors it did not upgrade: a row each, with why (state `unmatched`).
      ...(rollout.unmatched ?? []).map(unmatchedCsvRow),
    ],
    '',
  ];
}

function worklistParts(rolloutId: string, records: CollectorRecord[], format: ReportFormat): Parts {
  const listed = records.filter((r) => WORKLIST_STATES.includes(r.state));
  if (format === 'json')
    return [
      `{"rollout":${JSON.stringify(rolloutId)},"worklist":[`,
      listed.map((r) => JSON.stringify(toWorklistRow(r, rolloutId))),
      ']}',
    ];
  return [`${WORKLIST_COLUMNS.join(',')}\n`, listed.map((r) => toWorklistCsvRow(r, rolloutId)), ''];
}
