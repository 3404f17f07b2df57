/**
 * A rollout's report, row by row, as `fleet-upgrade report` and `GET /rollouts/{id}/report` give
 * it: the CSV columns (times as ISO 8601), the JSON row (the record with its organization named),
 * the worklist's columns and rows (with the command that resolves each), and a one-off's named
 * Collectors that were not upgraded (state `unmatched`, with why). One place, so that the CLI and
 * the HTTP API cannot drift apart.
 */
import { type CollectorRecord, DEFAULT_ORG, orgOf } from '../collector/index.js';
import { FINDING_WORDS, type UnmatchedCollector } from './rollout-record.js';

export const REPORT_COLUMNS = [
  'id',
  'name',
  'hostName',
  'from',
  'to',
  'state',
  'taskId',
  'attempts',
  'admissions',
  'statusReads',
  'discoveredAt',
  'requestTime',
  'finishedAt',
  'message',
  'retries',
  'attemptLog',
  'failureClass',
  'cohort',
  'org',
] as const;

/**
 * `report --worklist`: the Collectors a person must look at: `manual` (their failure's class needs
 * one) and `unknown` (what became of their create cannot be known), each with the command that
 * resolves it once looked at.
 */
export const WORKLIST_COLUMNS = [
  'id',
  'name',
  'hostName',
  'from',
  'to',
  'state',
  'failureClass',
  'message',
  'finishedAt',
  'cohort',
  'org',
  'resolve',
] as const;

/** The states on the worklist. */
export const WORKLIST_STATES: readonly string[] = ['manual', 'unknown'];

const TIME_COLUMNS: ReadonlySet<string> = new Set(['discoveredAt', 'requestTime', 'finishedAt']);

/**
 * One row of the worklist: what the failure's class says to do, the service's own words (or why
 * the outcome cannot be known), and the command that tries it again.
 */
export function toWorklistRow(
  r: CollectorRecord,
  rolloutId: string,
): Record<(typeof WORKLIST_COLUMNS)[number], unknown> {
  const org = orgOf(r);
  const resolve = `fleet-upgrade retry ${rolloutId} --only ${r.state}${r.org ? ` --org ${org}` : ''}`;
  return Object.fromEntries(
    WORKLIST_COLUMNS.map((c) => [c, c === 'org' ? org : c === 'resolve' ? resolve : r[c]]),
  ) as Record<(typeof WORKLIST_COLUMNS)[number], unknown>;
}

/** A worklist row as a CSV line of WORKLIST_COLUMNS (`report --worklist`, and over HTTP). */
export function toWorklistCsvRow(r: CollectorRecord, rolloutId: string): string {
  const row = toWorklistRow(r, rolloutId);
  return WORKLIST_COLUMNS.map((c) => csvCell(row[c], c)).join(',');
}

/** One CSV cell; times (epoch ms) as ISO 8601. */
export function csvCell(value: unknown, column?: string): string {
  if (value === undefined || value === null) return '';
  const isTime = typeof value === 'number' && column !== undefined && TIME_COLUMNS.has(column);
  const text = isTime ? new Date(value).toISOString() : String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** `1:created 10000012 succeeded; 2:not_alive` — each attempt's number, answer, task and outcome. */
export function formatAttempts(log: CollectorRecord['attemptLog']): string {
  return (log ?? [])
    .map((a) => [`${a.n}:${a.answer ?? 'sent'}`, a.taskId, a.outcome].filter(Boolean).join(' '))
    .join('; ');
}

/** The cell of `column` of a Collector's row (its attempts in words, its organization named). */
function cellOf(r: CollectorRecord, column: (typeof REPORT_COLUMNS)[number]): unknown {
  if (column === 'attemptLog') return formatAttempts(r.attemptLog);
  if (column === 'org') return orgOf(r);
  return r[column];
}

export function toCsvRow(r: CollectorRecord): string {
  return REPORT_COLUMNS.map((c) => csvCell(cellOf(r, c), c)).join(',');
}

/** A one-off's named Collector that its scan did not find: id, organization, and why in `message`. */
export function unmatchedCsvRow(u: UnmatchedCollector): string {
  const cells: Partial<Record<(typeof REPORT_COLUMNS)[number], unknown>> = {
    id: u.id,
    state: 'unmatched',
    message: FINDING_WORDS[u.finding],
    org: u.org ?? DEFAULT_ORG,
  };
  return REPORT_COLUMNS.map((c) => csvCell(cells[c] ?? '', c)).join(',');
}

/** A report's JSON row: the record with its organization named (the default one too). */
export function toJsonRow(r: CollectorRecord): CollectorRecord & { org: string } {
  return { ...r, org: orgOf(r) };
}

/** A report's order: by organization, in the rollout's order, then by Collector id (ids repeat across organizations). */
export function sortReportRecords(
  orgOrder: readonly string[],
  records: CollectorRecord[],
): CollectorRecord[] {
  const rank = (r: CollectorRecord) => {
    const i = orgOrder.indexOf(orgOf(r));
    return i < 0 ? orgOrder.length : i;
  };
  return records.sort((a, b) => rank(a) - rank(b) || orgOf(a).localeCompare(orgOf(b)) || a.id - b.id);
}
