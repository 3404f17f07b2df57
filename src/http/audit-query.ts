/**
 * The audit trail's filters and formats, one for `GET /audit` and `fleet-upgrade audit`: `since`
 * (an ISO 8601 time, or a duration back from now: `24h`, `7d`), `user`, `rollout`; `json` (one
 * JSON object per line, JSON Lines, so that a reader streams it), `csv` (a header, then a row per
 * record) and `table` (the CLI's, for a person).
 */
import { parseDuration } from '../lib/duration.js';
import { type AuditEntry, type AuditFilter, csvCell } from '../rollout/index.js';

export const AUDIT_FORMATS = ['table', 'json', 'csv'] as const;
export type AuditFormat = (typeof AUDIT_FORMATS)[number];

export const AUDIT_COLUMNS = [
  'time',
  'who',
  'via',
  'from',
  'proxy',
  'what',
  'rollout',
  'orgs',
  'answer',
  'status',
  'reason',
] as const;

/** `since`: a time, or how long ago; the problem in words (for a 400 or an exit 64) when neither. */
export function parseSince(text: string, now: number): number | string {
  const t = text.trim();
  const ago = parseDuration(t);
  if (ago !== undefined) return now - ago;
  const at = /^\d{4}-\d{2}-\d{2}/.test(t) ? Date.parse(t) : Number.NaN;
  if (Number.isFinite(at)) return at;
  return `since: expected a time (2026-11-28T09:00:00Z) or a duration back from now (24h, 7d), not '${t.slice(0, 60)}'`;
}

/** The filter of `since`/`user`/`rollout` as given (strings), or the problem in words. */
export function auditFilterOf(
  given: { since?: string | undefined; user?: string | undefined; rollout?: string | undefined },
  now: number,
): AuditFilter | string {
  const filter: AuditFilter = {};
  if (given.since !== undefined) {
    const since = parseSince(given.since, now);
    if (typeof since === 'string') return since;
    filter.sinceMs = since;
  }
  if (given.user !== undefined) {
    if (given.user.length > 256) return 'user: at most 256 characters';
    filter.user = given.user;
  }
  if (given.rollout !== undefined) {
    if (given.rollout.length > 256) return 'rollout: at most 256 characters';
    filter.rollout = given.rollout;
  }
  return filter;
}

/** A record's cells, by column. */
export function auditCells(e: AuditEntry): Record<(typeof AUDIT_COLUMNS)[number], string> {
  const reason =
    e.file !== undefined
      ? `${e.file}: ${e.oldDigest ?? 'none'} -> ${e.newDigest ?? 'none'}`
      : (e.reason ?? '');
  return {
    time: new Date(e.at).toISOString(),
    who: e.who,
    via: e.via,
    from: e.from ?? '',
    proxy: e.proxy ?? '',
    what: e.what,
    rollout: e.rollout ?? '',
    orgs: (e.orgs ?? []).join(' '),
    answer: e.answer,
    status: e.status === undefined ? '' : String(e.status),
    reason,
  };
}

export const auditCsvHeader = () => `${AUDIT_COLUMNS.join(',')}\n`;

export function auditCsvRow(e: AuditEntry): string {
  const cells = auditCells(e);
  return `${AUDIT_COLUMNS.map((c) => csvCell(cells[c])).join(',')}\n`;
}

export const auditJsonLine = (e: AuditEntry) => `${JSON.stringify(e)}\n`;
