/**
 * `report` on a terminal: a table a person reads, with times in ISO 8601 (UTC, to the second)
 * instead of epoch milliseconds. Within `width` columns (default 80): the id, the build it came
 * from, the state and when it finished are never cut; the name is cut to fit (`…`), the
 * service's message goes whole below its row (indented, wrapped), the target build is said once
 * above the table when every row shares it. With more than one organization, the rows go under a
 * line naming each (`org NAME`) rather than in a column: organizations' names are long, and a
 * table of three of them did not fit 80 columns; the worklist's failure class may be cut (`…`).
 * `wide`: more columns (host, task, attempts, failure class, cohort, organization), nothing cut.
 * `--format json` or `csv` give every field.
 */
import type { CollectorRecord, RolloutRecord, UnmatchedCollector } from '../../rollout/index.js';
import { DEFAULT_ORG, FINDING_WORDS, orgOf } from '../../rollout/index.js';
import { commandLines } from './demo-next-steps.js';
import { type FitColumn, fitTable } from './fit-table.js';
import { isoSecond } from './format-history.js';
import { clockName, wrapText } from './format-status.js';
import { sanitizeLine } from './sanitize.js';

export interface ReportTableInput {
  rollout: Pick<RolloutRecord, 'id' | 'phase'>;
  records: readonly CollectorRecord[];
  unmatched?: readonly UnmatchedCollector[];
  /** Only the worklist: each row's command is said below the table. */
  worklist?: boolean;
  /** The command that resolves a worklist row (report.ts `toWorklistRow`). */
  resolve?: (r: CollectorRecord) => string;
  /** The deployment clock's time scale: a rehearsal's times are on its simulated clock (default 1). */
  timeScale?: number;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const when = (at: number | undefined) => (at === undefined ? '' : isoSecond(at));

export function formatReport(
  input: ReportTableInput,
  format: { wide?: boolean; width?: number } = {},
): string {
  const width = format.wide ? undefined : (format.width ?? 80);
  const { records } = input;
  const unmatched = input.unmatched ?? [];
  const orgs = new Set([...records.map(orgOf), ...unmatched.map((u) => u.org ?? DEFAULT_ORG)]);
  const withOrg = orgs.size > 1;
  const targets = new Set(records.map((r) => r.to));
  const withTo = width === undefined || targets.size > 1;
  const wide = width === undefined;
  const columns: FitColumn[] = [
    { title: 'ID' },
    { title: 'NAME', shrink: true, min: 6 },
    ...(wide ? [{ title: 'HOST' }] : []),
    { title: 'FROM' },
    ...(withTo ? [{ title: 'TO' }] : []),
    { title: 'STATE' },
    ...(wide ? [{ title: 'TASK' }, { title: 'ATTEMPTS' }] : []),
    { title: 'FINISHED' },
    ...(wide ? [{ title: 'CLASS' }] : input.worklist ? [{ title: 'CLASS', shrink: true, min: 8 }] : []),
    ...(wide ? [{ title: 'MESSAGE' }] : []),
    ...(wide ? [{ title: 'COHORT' }] : []),
    ...(withOrg && wide ? [{ title: 'ORG' }] : []),
  ];
  const row = (r: CollectorRecord): string[] => [
    String(r.id),
    sanitizeLine(r.name ?? ''),
    ...(wide ? [sanitizeLine(r.hostName ?? '')] : []),
    sanitizeLine(r.from ?? ''),
    ...(withTo ? [sanitizeLine(r.to ?? '')] : []),
    r.state,
    ...(wide ? [r.taskId === undefined ? '' : String(r.taskId), String(r.attempts ?? 0)] : []),
    when(r.finishedAt),
    ...(wide || input.worklist ? [sanitizeLine(r.failureClass ?? '')] : []),
    ...(wide ? [sanitizeLine(r.message ?? '')] : []),
    ...(wide ? [sanitizeLine(r.cohort ?? '')] : []),
    ...(withOrg && wide ? [sanitizeLine(orgOf(r))] : []),
  ];
  const unmatchedRow = (u: UnmatchedCollector): string[] =>
    columns.map((c) =>
      c.title === 'ID'
        ? String(u.id)
        : c.title === 'STATE'
          ? 'unmatched'
          : c.title === 'MESSAGE'
            ? FINDING_WORDS[u.finding]
            : c.title === 'ORG'
              ? sanitizeLine(u.org ?? DEFAULT_ORG)
              : '',
    );
  // Within the width, a row's message (the service's words, or why) goes whole below it.
  const messages = [
    ...records.map((r) => sanitizeLine(r.message ?? '')),
    ...unmatched.map((u) => FINDING_WORDS[u.finding]),
  ];
  const what = input.worklist ? 'on the worklist' : 'in the rollout';
  const to = !withTo && targets.size === 1 ? ` to ${sanitizeLine([...targets][0] as string)}` : '';
  const head = `${sanitizeLine(input.rollout.id)} (${input.rollout.phase}): ${plural(records.length, 'Collector', 'Collectors')} ${what}${to}; times in UTC (ISO 8601) on the ${clockName(input.timeScale)}. \`--format csv\` or \`json\` for every field.`;
  const lines = [...(wide ? [head] : wrapText(head, width, '', '  ')), ''];
  if (records.length + unmatched.length === 0) lines.push('(none)');
  else {
    const table = fitTable(columns, [...records.map(row), ...unmatched.map(unmatchedRow)], width);
    // Within the width, each organization's rows under a line naming it (they come grouped).
    const orgOfRow = [...records.map(orgOf), ...unmatched.map((u) => u.org ?? DEFAULT_ORG)];
    lines.push(table[0] as string);
    table.slice(1).forEach((line, i) => {
      if (withOrg && !wide && orgOfRow[i] !== orgOfRow[i - 1])
        lines.push(...wrapText(`org ${sanitizeLine(orgOfRow[i] as string)}`, width, '', '  '));
      lines.push(line);
      const message = messages[i];
      if (width !== undefined && message) lines.push(...wrapText(message, width, '    ', '    '));
    });
  }
  if (input.worklist && input.resolve && records.length) {
    const commands = [...new Set(records.map(input.resolve))];
    lines.push('', 'Once looked at, each is tried again by:');
    // Broken between words only, each line but the last ending in ` \\`: it can be copied whole.
    for (const c of commands) lines.push(...(wide ? [`  ${c}`] : commandLines(c.split(' '), '  ', width)));
  }
  return lines.join('\n');
}
