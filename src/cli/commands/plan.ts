/**
 * `fleet-upgrade plan --policy FILE`: a dry run. Resolves the target, pages through the
 * upgradable Collectors, applies the selection, and shows which Collectors would move from which
 * build to which. Creates nothing and needs no Redis. The vendor's names reach the terminal only
 * through `sanitizeLine` (the table) and `safeJson` (--json).
 */
import { Command } from 'commander';
import type { Collector, CollectorUpgradeClient } from '../../api/index.js';
import { FleetError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { closeRedis, createRedis } from '../../lib/redis/create-redis.js';
import { loadPolicies } from '../../policy/load/load-policies.js';
import type { Policy } from '../../policy/schema.js';
import { planMove } from '../../policy/select/plan-move.js';
import { compileSelection, policyOrgs } from '../../policy/select/select-collectors.js';
import { createKeys, resolveTarget } from '../../rollout/index.js';
import { createOrgApis } from '../boot/create-api.js';
import { loadDaemonConfig, redisTargetOf } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { safeJson, sanitizeLine } from '../render/sanitize.js';

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

export function planCommand(): Command {
  return new Command('plan')
    .description(
      'Dry run of a policy: which Collectors would move, from which build to which. Nothing is created.',
    )
    .requiredOption('--policy <file>', 'the policy file')
    .option('--json', 'print JSON instead of a table', false)
    .option('--config <file>', 'settings file (default config/fleet-upgrade.yaml when it exists)')
    .action(async (flags: { policy: string; json: boolean; config?: string }) => {
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
      const builds: Record<string, string> = {};
      const failed: string[] = [];
      let listed = 0;
      try {
        for (const org of orgs) {
          try {
            const found = await planOrg(apis.get(org).client, policy, org);
            rows.push(...found.rows);
            listed += found.listed;
            builds[org] = found.build;
          } catch (err) {
            if (!(err instanceof FleetError)) throw err;
            if (orgs.length === 1) throw err;
            failed.push(`org ${org}: ${sanitizeLine(err.message)}`);
          }
        }
        const build = [...new Set(Object.values(builds))].join(', ');
        if (flags.json) {
          process.stdout.write(
            `${safeJson({ policy: policy.name, target: policy.target, build, builds, listed, collectors: rows, failed }, 2)}\n`,
          );
        } else {
          process.stdout.write(`${formatPlan(rows, orgs.length > 1)}\n`);
          const offline = rows.filter((r) => !r.alive).length;
          process.stdout.write(
            `\npolicy ${policy.name}: ${rows.length} of ${listed} offered Collectors would move to ${sanitizeLine(build || '(none)')}` +
              `${offline ? ` (${offline} offline now)` : ''}; nothing was created.\n`,
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

/** One organization's part of a plan: its build, and the Collectors that would move there. */
async function planOrg(
  client: CollectorUpgradeClient,
  policy: Policy,
  org: string,
): Promise<{ build: string; rows: PlanRow[]; listed: number }> {
  const targets = await client.listTargets();
  const build = resolveTarget(policy.target, targets);
  if (!build) {
    throw new FleetError(
      'FLEET_ERR_TARGET',
      `target ${policy.target} is not offered by the service (offers: ${targets.map((t) => sanitizeLine(t.version)).join(', ')})`,
    );
  }
  const matches = compileSelection(policy);
  const rows: PlanRow[] = [];
  let listed = 0;
  for await (const page of client.collectorPages({ toVersion: build, limit: policy.pageSize })) {
    for (const c of page as Collector[]) {
      listed++;
      if (c.collectorType !== 'Installable' || !matches({ ...c, org })) continue;
      const move = planMove(policy, c.collectorVersion, build);
      if (move.kind === 'skip') continue;
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
  return { build, rows, listed };
}

export function formatPlan(rows: readonly PlanRow[], withOrg = false): string {
  const header = [...(withOrg ? ['ORG'] : []), 'ID', 'NAME', 'HOST', 'OS', 'FROM', 'TO', 'MOVE', 'ALIVE'];
  const cells = rows.map((r) => [
    ...(withOrg ? [sanitizeLine(r.org)] : []),
    String(r.id),
    sanitizeLine(r.name),
    sanitizeLine(r.hostName),
    sanitizeLine(r.osName),
    sanitizeLine(r.from),
    sanitizeLine(r.to),
    r.move,
    r.alive ? 'yes' : 'no',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] as string).length)));
  const line = (c: string[]) =>
    c
      .map((x, i) => x.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  return [line(header), ...cells.map(line)].join('\n');
}
