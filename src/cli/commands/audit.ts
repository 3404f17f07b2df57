/**
 * `fleet-upgrade audit [--since T] [--user NAME] [--rollout ID] [--format table|json|csv]`: the
 * audit trail (rollout/life/audit-log.ts), oldest first: every control request allowed or refused
 * and every policy file change the daemon loaded. Read from Redis, or with `--server` from the
 * daemon's `GET /audit` as the person of FLEET_UPGRADE_TOKEN. Streamed either way: a page at a
 * time, printed as it comes (JSON is JSON Lines).
 */
import { createInterface } from 'node:readline';
import { Command, Option } from 'commander';
import {
  AUDIT_FORMATS,
  type AuditFormat,
  auditCsvHeader,
  auditCsvRow,
  auditFilterOf,
  auditJsonLine,
} from '../../http/audit-query.js';
import { FleetError } from '../../lib/errors.js';
import type { AuditEntry } from '../../rollout/index.js';
import { openServer, refusalOf, serverOf } from '../boot/server-client.js';
import { addServerOption, addStateOptions, withControl } from '../boot/with-control.js';
import { auditTableHeader, auditTableRow } from '../render/format-audit.js';

interface AuditFlags {
  config?: string;
  server?: string;
  since?: string;
  user?: string;
  rollout?: string;
  format: AuditFormat;
}

export function auditCommand(): Command {
  const command = new Command('audit')
    .description(
      'Show the audit trail: every control request (allowed or refused: who, from where, what, on which rollout and organizations) and every policy file change the daemon loaded, oldest first.',
    )
    .option(
      '--since <time>',
      'only records since this time (2026-11-28T09:00:00Z) or this long ago (24h, 7d)',
    )
    .option('--user <name>', 'only the records of this person')
    .option('--rollout <id>', 'only the records of this rollout')
    .addOption(
      new Option('--format <format>', 'table, json (JSON Lines) or csv')
        .choices(AUDIT_FORMATS)
        .default('table'),
    );
  return addServerOption(addStateOptions(command)).action(async (flags: AuditFlags) => {
    const given = { since: flags.since, user: flags.user, rollout: flags.rollout };
    const filter = auditFilterOf(given, Date.now());
    if (typeof filter === 'string') throw new FleetError('FLEET_ERR_USAGE', `--${filter}`);
    const print = printer(flags.format);
    const server = serverOf(flags, process.env);
    if (server) {
      const query = new URLSearchParams({ format: 'json' });
      for (const [k, v] of Object.entries(given)) if (v !== undefined) query.set(k, v);
      const res = await openServer(server, 'GET', `/audit?${query}`);
      if (res.statusCode !== 200) {
        const text = await res.body.text();
        let message = `status ${res.statusCode}`;
        try {
          message = (JSON.parse(text) as { error: { message: string } }).error.message;
        } catch {
          // not JSON: the status says it
        }
        throw refusalOf(res.statusCode, message);
      }
      for await (const line of createInterface({ input: res.body, crlfDelay: Number.POSITIVE_INFINITY }))
        if (line.trim()) await print(JSON.parse(line) as AuditEntry);
      await print(undefined);
      return;
    }
    await withControl(flags, async (deps) => {
      for await (const entry of deps.audit.read(filter)) await print(entry);
      await print(undefined);
    });
  });
}

/** Writes each record as it comes (undefined: the end), waiting for stdout when it is full. */
function printer(format: AuditFormat): (entry: AuditEntry | undefined) => Promise<void> {
  let started = false;
  const out = (text: string) =>
    new Promise<void>((resolve) => {
      if (process.stdout.write(text)) resolve();
      else process.stdout.once('drain', () => resolve());
    });
  return async (entry) => {
    if (!started) {
      started = true;
      if (format === 'csv') await out(auditCsvHeader());
      if (format === 'table') await out(auditTableHeader());
    }
    if (!entry) return;
    await out(
      format === 'csv' ? auditCsvRow(entry) : format === 'json' ? auditJsonLine(entry) : auditTableRow(entry),
    );
  };
}
