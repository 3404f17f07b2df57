/**
 * `fleet-upgrade upgrade --collector ID[,ID...] --to BUILD|latest [--allow-downgrade] [--org NAME]`:
 * a one-off rollout for the named Collectors, run by the daemon like any policy (the same API
 * budget, slots, records, report and history). The ids are of one organization (ids repeat across
 * organizations): `--org` names it, required when the settings name several, else the one. It
 * needs only Redis: a daemon that is down picks it up when it starts.
 */
import { Command } from 'commander';
import { FleetError } from '../../lib/errors.js';
import { isBuildVersion } from '../../lib/version.js';
import { LATEST } from '../../policy/schema.js';
import { DEFAULT_ORG, ONE_OFF_MAX_COLLECTORS, OneOffPolicies } from '../../rollout/index.js';
import { loadDaemonConfig, orgNamesOf } from '../boot/daemon-config.js';
import { intOption } from '../boot/int-option.js';
import { addStateOptions, operatorName, withControl } from '../boot/with-control.js';

/** `1,2, 3` → [1, 2, 3]; refuses anything that is not a list of positive whole numbers. */
export function parseCollectorIds(text: string): number[] {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  const ids = parts.map(Number);
  const bad = parts.filter(
    (p, i) => !/^\d{1,15}$/.test(p) || !Number.isSafeInteger(ids[i]) || (ids[i] as number) < 1,
  );
  if (parts.length === 0 || bad.length)
    throw new FleetError(
      'FLEET_ERR_USAGE',
      `--collector: expected Collector ids separated by commas, e.g. 101,102${bad.length ? `; not ${bad.slice(0, 3).join(', ')}` : ''}`,
    );
  const unique = [...new Set(ids)];
  if (unique.length > ONE_OFF_MAX_COLLECTORS)
    throw new FleetError(
      'FLEET_ERR_USAGE',
      `--collector: at most ${ONE_OFF_MAX_COLLECTORS} Collectors in one upgrade, got ${unique.length}`,
    );
  return unique;
}

/** The organization of a one-off's ids: `--org` (one the settings name), or the settings' only one. */
export function oneOffOrg(org: string | undefined, names: readonly string[]): string {
  if (org !== undefined) {
    if (names.includes(org)) return org;
    throw new FleetError(
      'FLEET_ERR_USAGE',
      `--org: the settings name no organization '${org}' (they name ${names.join(', ')})`,
    );
  }
  if (names.length === 1) return names[0] as string;
  throw new FleetError(
    'FLEET_ERR_USAGE',
    `--org is required: Collector ids repeat across organizations, and the settings name ${names.length} (${names.join(', ')})`,
  );
}

export function upgradeCommand(): Command {
  const command = new Command('upgrade')
    .description(
      'Start a one-off rollout of the named Collectors to a build (or latest): the daemon runs it like a policy, with the same budget, slots, records and report.',
    )
    .requiredOption(
      '--collector <ids>',
      'Collector ids, separated by commas (repeat the option for more)',
      (v, prev: string[] = []) => [...prev, v],
    )
    .requiredOption('--to <build>', 'a build such as 19.470-4, or latest')
    .option('--allow-downgrade', 'move Collectors on a newer build down to it', false)
    .option(
      '--max-in-flight <n>',
      'Collectors with an unfinished task at once (default: 10, or fewer Collectors)',
      intOption('--max-in-flight', 1, 100_000),
    )
    .option(
      '--org <name>',
      'the organization the ids are of (required when the settings name several; default: the only one)',
    );
  return addStateOptions(command).action(
    async (flags: {
      config?: string;
      collector: string[];
      to: string;
      allowDowngrade: boolean;
      maxInFlight?: number;
      org?: string;
    }) => {
      const collectors = parseCollectorIds(flags.collector.join(','));
      const names = orgNamesOf(loadDaemonConfig({ env: process.env, flags, needApi: false }));
      const org = oneOffOrg(flags.org, names);
      if (flags.to !== LATEST && !isBuildVersion(flags.to))
        throw new FleetError(
          'FLEET_ERR_USAGE',
          `--to: expected "latest" or a build shaped <major>.<minor>-<build> such as 19.470-4, got '${flags.to}'`,
        );
      const name = await withControl(flags, (deps) =>
        new OneOffPolicies(deps.state.redis, deps.keys).add(
          {
            collectors,
            to: flags.to,
            allowDowngrade: flags.allowDowngrade,
            org,
            ...(flags.maxInFlight === undefined ? {} : { maxInFlight: flags.maxInFlight }),
          },
          operatorName(),
          deps.clock.now(),
        ),
      );
      process.stdout.write(
        `one-off rollout ${name}: ${collectors.length} Collectors${names.length > 1 || org !== DEFAULT_ORG ? ` of org ${org}` : ''} to ${flags.to}; the daemon starts it at its next round ` +
          `(follow it with \`fleet-upgrade status\`; its report: \`fleet-upgrade report ${name}@<build>\`)\n`,
      );
    },
  );
}
