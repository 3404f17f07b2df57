/**
 * `fleet-upgrade report [ROLLOUT] [--worklist]`: every Collector of a rollout with its outcome, as
 * a table on a terminal (format-report.ts: 80 columns, ISO 8601 times; `--wide` for more), JSON
 * (the default elsewhere) or CSV; `--worklist`: only those that need a person (states `manual`
 * and `unknown`). Each row names its organization (`org`, the last column: scripts that cut
 * columns by position keep working); rows go by organization, in the rollout's order, then by
 * Collector id (ids repeat across organizations).
 */
import { Command, Option } from 'commander';
import { FleetError } from '../../lib/errors.js';
import {
  type CollectorRecord,
  DEFAULT_ORG,
  FINDING_WORDS,
  orgOf,
  orgsOf,
  type RolloutRecord,
  type RolloutStatus,
  readFleetStatus,
  type UnmatchedCollector,
} from '../../rollout/index.js';
import { loadDaemonConfig } from '../boot/daemon-config.js';
import { withState } from '../boot/open-state.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addStateOptions } from '../boot/with-control.js';
import { formatReport } from '../render/format-report.js';

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

/** A report's JSON row: the record with its organization named (the default one too). */
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

export function toJsonRow(r: CollectorRecord): CollectorRecord & { org: string } {
  return { ...r, org: orgOf(r) };
}

export function reportCommand(): Command {
  const command = new Command('report')
    .description(
      'Every Collector of a rollout (default: the newest) with from/to build, task id, outcome, attempts (each with its answer and task), times, message, failure class, cohort and organization.',
    )
    .argument('[rollout]', ROLLOUT_ARGUMENT)
    .addOption(
      new Option(
        '--format <format>',
        'output format (default: table on a terminal, json otherwise; table: within 80 columns, times in ISO 8601)',
      ).choices(['table', 'json', 'csv']),
    )
    .option('--wide', 'with --format table: more columns, nothing cut (wider than 80 columns)', false)
    .option(
      '--worklist',
      'only the Collectors on the worklist, with the command that tries them again: state manual (their failure needs a person, e.g. disk space or upgrades disabled; class and message) and unknown (a create cut off before its answer: what became of it cannot be known)',
      false,
    );
  return addStateOptions(command).action(
    async (
      rolloutArg: string | undefined,
      flags: { format?: 'table' | 'json' | 'csv'; worklist: boolean; wide: boolean; config?: string },
    ) => {
      // A person at a terminal gets a table; a pipe or a script gets JSON, as before.
      const format = flags.format ?? (process.stdout.isTTY ? 'table' : 'json');
      const config = loadDaemonConfig({ env: process.env, flags, needApi: false });
      await withState(config, async (state) => {
        const all = await state.rollouts.list();
        const rollout = rolloutArg ? all.find((r) => r.id === rolloutArg) : all[0];
        if (!rollout) {
          const known = all.map((r) => r.id).join(', ') || 'none';
          throw new FleetError(
            'FLEET_ERR_USAGE',
            rolloutArg ? `no rollout '${rolloutArg}' (known: ${known})` : 'no rollouts yet',
          );
        }
        const records: CollectorRecord[] = [];
        for await (const r of state.store.all(rollout.id))
          if (!flags.worklist || WORKLIST_STATES.includes(r.state)) records.push(r);
        const order = orgsOf(rollout);
        const rank = (r: CollectorRecord) => {
          const i = order.indexOf(orgOf(r));
          return i < 0 ? order.length : i;
        };
        records.sort((a, b) => rank(a) - rank(b) || orgOf(a).localeCompare(orgOf(b)) || a.id - b.id);
        if (format === 'table') {
          const text = formatReport(
            {
              rollout,
              records,
              worklist: flags.worklist,
              resolve: (r) => toWorklistRow(r, rollout.id).resolve as string,
              ...(flags.worklist ? {} : { unmatched: rollout.unmatched ?? [] }),
            },
            { wide: flags.wide },
          );
          process.stdout.write(`${text}\n`);
          return;
        }
        if (flags.worklist) {
          const rows = records.map((r) => toWorklistRow(r, rollout.id));
          if (format === 'csv') {
            process.stdout.write(`${WORKLIST_COLUMNS.join(',')}\n`);
            for (const row of rows)
              process.stdout.write(`${WORKLIST_COLUMNS.map((c) => csvCell(row[c], c)).join(',')}\n`);
          } else
            process.stdout.write(`${JSON.stringify({ rollout: rollout.id, worklist: rows }, null, 2)}\n`);
          return;
        }
        if (format === 'csv') {
          process.stdout.write(`${REPORT_COLUMNS.join(',')}\n`);
          for (const r of records) process.stdout.write(`${toCsvRow(r)}\n`);
          // A one-off's named Collectors it did not upgrade: a row each, with why (state `unmatched`).
          for (const u of rollout.unmatched ?? []) process.stdout.write(`${unmatchedCsvRow(u)}\n`);
        } else {
          process.stdout.write(
            `${JSON.stringify({ rollout: await rolloutWithAccounts(state, rollout), collectors: records.map(toJsonRow) }, null, 2)}\n`,
          );
        }
      });
    },
  );
}

/**
 * The rollout with what became of its rollbacks as `status` reads them: each entry with the phase
 * its rollout is in now, and the account of each request (rollback-account.ts).
 */
async function rolloutWithAccounts(
  state: Parameters<typeof readFleetStatus>[0],
  rollout: RolloutRecord,
): Promise<RolloutRecord | RolloutStatus> {
  if (!rollout.rollbacks?.length) return rollout;
  const now = (await readFleetStatus(state)).rollouts.find((r) => r.id === rollout.id);
  return now ? { ...rollout, rollbacks: now.rollbacks, rollbackAccounts: now.rollbackAccounts } : rollout;
}
