/**
 * `fleet-upgrade plan --policy FILE`: a dry run. Resolves the target, pages through the
 * upgradable Collectors, applies the selection, and shows which Collectors would move from which
 * build to which, in 80 columns (`--wide`: every column whole). Creates nothing and needs no
 * Redis, except to decide a policy's `minAge` and `after` as the daemon would
 * (plan-version-rules.ts). The vendor's names reach the terminal only through `sanitizeLine` (the
 * table) and `safeJson` (--json).
 */
import { Command } from 'commander';
import type { BuildTarget, Collector, CollectorUpgradeClient } from '../../api/index.js';
import { FleetError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { closeRedis, createRedis } from '../../lib/redis/create-redis.js';
import { loadPolicies } from '../../policy/load/load-policies.js';
import type { Policy } from '../../policy/schema.js';
import { knownIssueFor } from '../../policy/select/known-issue-match.js';
import { planMove } from '../../policy/select/plan-move.js';
import { compileSelection, policyOrgs } from '../../policy/select/select-collectors.js';
import { createKeys, resolveTarget } from '../../rollout/index.js';
import { createOrgApis } from '../boot/create-api.js';
import { loadDaemonConfig, redisTargetOf } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { cut, type FitColumn, fitTable } from '../render/fit-table.js';
import { wrapText } from '../render/format-status.js';
import { safeJson, sanitizeLine } from '../render/sanitize.js';
import { plannedBuilds } from './plan-version-rules.js';

export interface PlanRow {
  /** The Collector's organization. */
  org: string;
  id: number;
  name: string;
  hostName: string;
  osName: string;
  from: string;
  to: string;
  move: 'upgrade' | 'downgrade';
  alive: boolean;
}

/** A Collector a known issue of the build holds back (policy `knownIssues`): it would get no task. */
export interface PlanHeld {
  org: string;
  id: number;
  name: string;
  build: string;
  action: 'skip' | 'manual';
  note: string;
}

/** A sentence per known issue that holds Collectors back: how many, what becomes of them, the note. */
export function heldLines(held: readonly PlanHeld[]): string[] {
  const groups = new Map<string, PlanHeld[]>();
  for (const h of held) {
    const key = JSON.stringify([h.action, h.build, h.note]);
    groups.set(key, [...(groups.get(key) ?? []), h]);
  }
  return [...groups.values()].map((g) => {
    const h = g[0] as PlanHeld;
    const n = `${g.length} ${g.length === 1 ? 'Collector' : 'Collectors'}`;
    const fate = h.action === 'skip' ? 'left out' : 'put on the worklist';
    return `known issue of ${sanitizeLine(h.build)}: ${n} ${fate} (${sanitizeLine(h.note)})`;
  });
}

export function planCommand(): Command {
  return new Command('plan')
    .description(
      'Dry run of a policy: which Collectors would move, from which build to which. Nothing is created.',
    )
    .requiredOption('--policy <file>', 'the policy file')
    .option('--json', 'print JSON instead of a table', false)
    .option('--wide', 'every column whole (wider than 80 columns)', false)
    .option('--config <file>', 'settings file (default config/fleet-upgrade.yaml when it exists)')
    .action(async (flags: { policy: string; json: boolean; wide: boolean; config?: string }) => {
      const config = loadDaemonConfig({ env: process.env, flags: { config: flags.config }, needApi: true });
      const [loaded] = loadPolicies({ files: [flags.policy] });
      const policy = loaded?.policy;
      if (!policy || config.orgs.length === 0)
        throw new FleetError('FLEET_ERR_USAGE', `no policy in ${flags.policy}`);
      const logger = createLogger({
        level: config.logLevel === 'info' ? 'warn' : config.logLevel,
        name: 'plan',
      });
      const orgs = policyOrgs(
        policy,
        config.orgs.map((o) => o.name),
      );
      if (orgs.length === 0)
        throw new FleetError(
          'FLEET_ERR_USAGE',
          `policy ${policy.name} covers no organization of the settings (orgs: ${policy.orgs.join(', ')}; the settings name ${config.orgs.map((o) => o.name).join(', ')})`,
        );
      // With the daemon's Redis at hand, plan spends the budget it shares with the daemon.
      const target = redisTargetOf(config);
      const redis = target ? createRedis(target, { name: 'plan', logger }) : undefined;
      const apis = createOrgApis(
        config.orgs.filter((o) => orgs.includes(o.name)),
        {
          config,
          ...(redis ? { redis } : {}),
          keys: createKeys(config.keyPrefix),
          policies: [{ ...policy, enabled: true }],
          logger,
        },
      );
      const rows: PlanRow[] = [];
      const held: PlanHeld[] = [];
      const builds: Record<string, string> = {};
      const failed: string[] = [];
      let listed = 0;
      const orgFailed = (org: string, err: unknown) => {
        if (!(err instanceof FleetError)) throw err;
        if (orgs.length === 1) throw err;
        failed.push(`org ${org}: ${sanitizeLine(err.message)}`);
      };
      try {
        // What the target names in each organization; then what minAge and after let start now.
        const lists = new Map<string, readonly BuildTarget[]>();
        const named: Record<string, string> = {};
        for (const org of orgs) {
          try {
            const targets = await apis.get(org).client.listTargets();
            named[org] = targetOf(policy, targets);
            lists.set(org, targets);
          } catch (err) {
            orgFailed(org, err);
          }
        }
        const planned = await plannedBuilds(config, policy, lists, named);
        for (const [org, build] of Object.entries(planned.builds)) {
          try {
            const found = await planOrg(apis.get(org).client, policy, org, build);
            rows.push(...found.rows);
            held.push(...found.held);
            listed += found.listed;
            builds[org] = build;
          } catch (err) {
            orgFailed(org, err);
          }
        }
        // The builds the moving Collectors go to (not another organization's, which none of them
        // goes to); with none moving, what the target names in each organization.
        const moving = new Set(rows.map((r) => r.org));
        const build = [
          ...new Set(
            Object.entries(builds)
              .filter(([org]) => moving.size === 0 || moving.has(org))
              .map(([, b]) => b),
          ),
        ].join(', ');
        const notes = planned.notes;
        if (flags.json) {
          process.stdout.write(
            `${safeJson({ policy: policy.name, target: policy.target, build, builds, listed, collectors: rows, held, notes, failed }, 2)}\n`,
          );
        } else {
          process.stdout.write(`${formatPlan(rows, orgs.length > 1, { wide: flags.wide })}\n`);
          const offline = rows.filter((r) => !r.alive).length;
          const summary =
            `policy ${policy.name}: ${rows.length} of ${listed} offered ${listed === 1 ? 'Collector' : 'Collectors'} would move to ${sanitizeLine(build || '(none)')}` +
            `${offline ? ` (${offline} offline now)` : ''}; nothing was created.`;
          process.stdout.write(
            `\n${[summary, ...heldLines(held), ...notes].flatMap((l) => (flags.wide ? [l] : wrapText(l, 80, '', '  '))).join('\n')}\n`,
          );
          for (const f of failed) process.stderr.write(`${f}\n`);
        }
        if (failed.length) process.exitCode = EXIT.failure;
      } finally {
        await apis.close();
        if (redis) await closeRedis(redis);
      }
    });
}

/** The build the policy's target names in a build list; refused when the list offers none. */
export function targetOf(policy: Policy, targets: readonly BuildTarget[]): string {
  const build = resolveTarget(policy.target, targets);
  if (!build) {
    throw new FleetError(
      'FLEET_ERR_TARGET',
      `target ${policy.target} is not offered by the service (offers: ${targets.map((t) => sanitizeLine(t.version)).join(', ')})`,
    );
  }
  return build;
}

/** One organization's part of a plan: the Collectors that would move to `build` there. */
export async function planOrg(
  client: CollectorUpgradeClient,
  policy: Policy,
  org: string,
  build: string,
): Promise<{ rows: PlanRow[]; held: PlanHeld[]; listed: number }> {
  const matches = compileSelection(policy);
  const rows: PlanRow[] = [];
  const held: PlanHeld[] = [];
  let listed = 0;
  for await (const page of client.collectorPages({ toVersion: build, limit: policy.pageSize })) {
    for (const c of page as Collector[]) {
      listed++;
      if (c.collectorType !== 'Installable' || !matches({ ...c, org })) continue;
      const move = planMove(policy, c.collectorVersion, build);
      if (move.kind === 'skip') continue;
      // A known issue of the build: no task, ever (skip: left out; manual: the worklist).
      const issue = knownIssueFor(policy, { ...c, org }, build);
      if (issue) {
        held.push({ org, id: c.id, name: c.name, build, action: issue.action, note: issue.note });
        continue;
      }
      rows.push({
        org,
        id: c.id,
        name: c.name,
        hostName: c.hostName ?? '',
        osName: c.osName ?? '',
        from: c.collectorVersion,
        to: build,
        move: move.kind,
        alive: c.alive,
      });
    }
  }
  return { rows, held, listed };
}

/**
 * The plan as a table. Within `width` columns (default 80): the name, host and OS columns are cut
 * to fit (`…`), and TO is left out when every row goes to the same build (the line below the
 * table names it); `wide`: every column whole.
 */
export function formatPlan(
  rows: readonly PlanRow[],
  withOrg = false,
  format: { wide?: boolean; width?: number } = {},
): string {
  const width = format.wide ? undefined : (format.width ?? 80);
  const withTo = width === undefined || new Set(rows.map((r) => r.to)).size > 1;
  // Within the width, an organization's rows go under a line naming it (its name can be long).
  const orgColumn = withOrg && width === undefined;
  const columns: FitColumn[] = [
    ...(orgColumn ? [{ title: 'ORG' }] : []),
    { title: 'ID' },
    { title: 'NAME', shrink: true, min: 8 },
    { title: 'HOST', shrink: true, min: 8 },
    { title: 'OS', shrink: true, min: 6 },
    { title: 'FROM' },
    ...(withTo ? [{ title: 'TO' }] : []),
    { title: 'MOVE' },
    { title: 'ALIVE' },
  ];
  const cells = rows.map((r) => [
    ...(orgColumn ? [sanitizeLine(r.org)] : []),
    String(r.id),
    sanitizeLine(r.name),
    sanitizeLine(r.hostName),
    sanitizeLine(r.osName),
    sanitizeLine(r.from),
    ...(withTo ? [sanitizeLine(r.to)] : []),
    r.move,
    r.alive ? 'yes' : 'no',
  ]);
  const [header, ...lines] = fitTable(columns, cells, width);
  if (!withOrg || orgColumn) return [header, ...lines].join('\n');
  return [
    header,
    ...lines.flatMap((line, i) =>
      rows[i]?.org !== rows[i - 1]?.org
        ? [cut(`org ${sanitizeLine(rows[i]?.org ?? '')}`, width ?? 80), line]
        : [line],
    ),
  ].join('\n');
}
