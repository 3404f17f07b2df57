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
  orgsOf,
  REPORT_COLUMNS,
  type RolloutRecord,
  type RolloutStatus,
  readFleetStatus,
  sortReportRecords,
  toCsvRow,
  toJsonRow,
  toWorklistCsvRow,
  toWorklistRow,
  unmatchedCsvRow,
  WORKLIST_COLUMNS,
  WORKLIST_STATES,
} from '../../rollout/index.js';
import { loadDaemonConfig } from '../boot/daemon-config.js';
import { withState } from '../boot/open-state.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { openServer, refusalOf, type ServerTarget, serverOf } from '../boot/server-client.js';
import { addServerOption, addStateOptions } from '../boot/with-control.js';
import { formatReport } from '../render/format-report.js';

// The rows live in rollout/life/report-rows.ts (GET /rollouts/{id}/report gives the same).
export {
  csvCell,
  REPORT_COLUMNS,
  toCsvRow,
  toJsonRow,
  toWorklistRow,
  unmatchedCsvRow,
  WORKLIST_COLUMNS,
  WORKLIST_STATES,
} from '../../rollout/index.js';

/** The time scale of the deployment's clock (1: the wall clock). */
function scaleOf(clock: object): number {
  const scale = (clock as { scale?: unknown }).scale;
  return typeof scale === 'number' && scale > 0 ? scale : 1;
}

export function reportCommand(): Command {
  const command = new Command('report')
    .description(
      'Every Collector of a rollout (default: the newest) with from/to build, task id, outcome, attempts (each with its answer and task), times, message, failure class, cohort and organization. With --server: name the rollout, --format csv or json (the table is local only).',
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
  return addServerOption(addStateOptions(command)).action(
    async (
      rolloutArg: string | undefined,
      flags: {
        format?: 'table' | 'json' | 'csv';
        worklist: boolean;
        wide: boolean;
        config?: string;
        server?: string;
      },
    ) => {
      // A person at a terminal gets a table; a pipe or a script gets JSON, as before.
      const format = flags.format ?? (process.stdout.isTTY ? 'table' : 'json');
      const server = serverOf(flags, process.env);
      if (server) {
        await reportThroughServer(server, rolloutArg, format, flags.worklist);
        return;
      }
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
        sortReportRecords(orgsOf(rollout), records);
        if (format === 'table') {
          const text = formatReport(
            {
              rollout,
              records,
              worklist: flags.worklist,
              resolve: (r) => toWorklistRow(r, rollout.id).resolve as string,
              ...(flags.worklist ? {} : { unmatched: rollout.unmatched ?? [] }),
              // A rehearsal's records are on its simulated clock: the header says so.
              timeScale: scaleOf(state.clock),
            },
            { wide: flags.wide },
          );
          process.stdout.write(`${text}\n`);
          return;
        }
        if (flags.worklist) {
          if (format === 'csv') {
            process.stdout.write(`${WORKLIST_COLUMNS.join(',')}\n`);
            for (const r of records) process.stdout.write(`${toWorklistCsvRow(r, rollout.id)}\n`);
          } else {
            const rows = records.map((r) => toWorklistRow(r, rollout.id));
            process.stdout.write(`${JSON.stringify({ rollout: rollout.id, worklist: rows }, null, 2)}\n`);
          }
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

/**
 * `report --server`: GET /rollouts/{id}/report (`?worklist=true`), CSV streamed as it comes, JSON
 * indented as the local command prints it. The table is not served (usage, exit 64), nor is the
 * default rollout: the endpoint needs its id.
 */
async function reportThroughServer(
  server: ServerTarget,
  rolloutArg: string | undefined,
  format: 'table' | 'json' | 'csv',
  worklist: boolean,
): Promise<void> {
  if (!rolloutArg)
    throw new FleetError('FLEET_ERR_USAGE', 'with --server, name the rollout (see `fleet-upgrade status`)');
  if (format === 'table')
    throw new FleetError('FLEET_ERR_USAGE', 'with --server, --format csv or json (the table is local only)');
  const query = `?format=${format}${worklist ? '&worklist=true' : ''}`;
  const res = await openServer(server, 'GET', `/rollouts/${encodeURIComponent(rolloutArg)}/report${query}`);
  if (res.statusCode < 200 || res.statusCode >= 300) {
    const text = (await res.body.text()).slice(0, 4096);
    let message = `status ${res.statusCode}`;
    try {
      const m = (JSON.parse(text) as { error?: { message?: unknown } })?.error?.message;
      if (typeof m === 'string') message = m;
    } catch {}
    throw refusalOf(res.statusCode, message);
  }
  if (format === 'csv') {
    for await (const chunk of res.body) process.stdout.write(chunk as Buffer);
    return;
  }
  process.stdout.write(`${JSON.stringify(await res.body.json(), null, 2)}\n`);
}
