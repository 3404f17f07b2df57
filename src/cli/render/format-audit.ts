/**
 * `fleet-upgrade audit` as a table, a line per record: when (UTC, to the second), who, what, on
 * which rollout and organizations, the answer (with the status of a refusal) and why, from where.
 * Streamed: fixed columns, so that no line waits for the widest.
 */

import { auditCells } from '../../http/audit-query.js';
import type { AuditEntry } from '../../rollout/index.js';

const pad = (text: string, width: number) => (text.length >= width ? `${text} ` : text.padEnd(width + 1));

export function auditTableHeader(): string {
  return `${pad('TIME (UTC)', 19)}${pad('WHO', 16)}${pad('WHAT', 9)}${pad('ROLLOUT', 24)}${pad('ANSWER', 12)}DETAIL\n`;
}

export function auditTableRow(e: AuditEntry): string {
  const c = auditCells(e);
  const answer = e.answer === 'refused' && e.status ? `refused ${e.status}` : e.answer;
  const where = [c.orgs && `orgs ${c.orgs}`, c.from && `from ${c.from}`, c.proxy && `via proxy ${c.proxy}`]
    .filter(Boolean)
    .join(', ');
  const detail = [c.reason, where].filter(Boolean).join(' — ');
  return `${pad(c.time.slice(0, 19).replace('T', ' '), 19)}${pad(c.who, 16)}${pad(c.what, 9)}${pad(c.rollout || '-', 24)}${pad(answer, 12)}${detail}\n`;
}
