/**
 * `fleet-upgrade upgrade --collector ID[,ID...] --to BUILD|latest [--allow-downgrade] [--org NAME]`:
 * a one-off rollout for the named Collectors, run by the daemon like any policy (the same API
 * budget, slots, records, report and history). The ids are of one organization (ids repeat across
 * organizations): `--org` names it, required when the settings name several, else the one. It
 * needs only Redis: a daemon that is down picks it up when it starts. Where the organization's
 * service can be asked (its key is here), it is asked first (check-one-off.ts): a build it does
 * not offer is refused (exit 64, nothing written), and each named Collector that is hosted or
 * unknown there is named and left out (exit 2, the others' one-off written); already on the build:
 * named and left out; offline: named and kept. None left to upgrade: nothing written, exit 3 (the
 * HTTP API's 409). `latest` is pinned to the build the service names now, so that the printed id
 * (`upgrade-…@BUILD`) is the one `status` and `report` know; when the service could not be asked
 * the daemon resolves it, and the message says where to read the id. With `--server URL` (or
 * `FLEET_UPGRADE_SERVER`) the daemon's `POST /upgrades` does the same as the person of
 * FLEET_UPGRADE_TOKEN (upgrade-through-server.ts): the same lines, the same exit codes, 77 when
 * refused (docs/access.md).
 */
import { hostname } from 'node:os';
import { Command } from 'commander';
import { FleetError } from '../../lib/errors.js';
import { plural } from '../../lib/plural.js';
import { isBuildVersion } from '../../lib/version.js';
import { LATEST } from '../../policy/schema.js';
import { DEFAULT_ORG, ONE_OFF_MAX_COLLECTORS, OneOffPolicies } from '../../rollout/index.js';
import { checkOneOff, describeFinding } from '../boot/check-one-off.js';
import { loadDaemonConfig, orgNamesOf } from '../boot/daemon-config.js';
import { EXIT } from '../boot/exit-codes.js';
import { intOption } from '../boot/int-option.js';
import { serverOf } from '../boot/server-client.js';
import { type OneOffOutcome, upgradeThroughServer } from '../boot/upgrade-through-server.js';
import { addServerOption, addStateOptions, operatorName, withControl } from '../boot/with-control.js';
import { wrapText } from '../render/format-status.js';

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
    )
    .addHelpText(
      'after',
      '\nExit codes:\n' +
        '  0   written: its id printed (`latest` pinned to the build the service names)\n' +
        '  2   written, but some named Collectors are left out (hosted, not in the\n' +
        '      organization: each named)\n' +
        '  3   nothing written: none of the named Collectors is left to upgrade\n' +
        '  64  a bad flag, or a build the service does not offer\n' +
        '  77  with --server: refused (no identity, or no operator of the organization)\n' +
        '\nWith --server URL (or FLEET_UPGRADE_SERVER), the daemon checks and writes the\n' +
        'one-off (POST /upgrades) as the person of FLEET_UPGRADE_TOKEN or\n' +
        "FLEET_UPGRADE_TOKEN_FILE; --org then names one of the daemon's organizations.",
    );
  return addServerOption(addStateOptions(command)).action(
    async (flags: {
      config?: string;
      server?: string;
      collector: string[];
      to: string;
      allowDowngrade: boolean;
      maxInFlight?: number;
      org?: string;
    }) => {
      const collectors = parseCollectorIds(flags.collector.join(','));
      if (flags.to !== LATEST && !isBuildVersion(flags.to))
        throw new FleetError(
          'FLEET_ERR_USAGE',
          `--to: expected "latest" or a build shaped <major>.<minor>-<build> such as 19.470-4, got '${flags.to}'`,
        );
      const server = serverOf(flags, process.env);
      // Through the daemon's POST /upgrades as the person of FLEET_UPGRADE_TOKEN (docs/access.md).
      const outcome = server
        ? await upgradeThroughServer(server, {
            collectors,
            to: flags.to,
            allowDowngrade: flags.allowDowngrade,
            ...(flags.maxInFlight === undefined ? {} : { maxInFlight: flags.maxInFlight }),
            ...(flags.org === undefined ? {} : { org: flags.org }),
          })
        : await upgradeOnRedis(flags, collectors);
      tellOneOff(outcome, collectors.length, flags.to);
    },
  );
}

/** The one-off checked and written on Redis as `local:<user>@<host>`, with its audit record in the same step. */
async function upgradeOnRedis(
  flags: { config?: string; to: string; allowDowngrade: boolean; maxInFlight?: number; org?: string },
  collectors: number[],
): Promise<OneOffOutcome> {
  const names = orgNamesOf(loadDaemonConfig({ env: process.env, flags, needApi: false }));
  const org = oneOffOrg(flags.org, names);
  const ofOrg = names.length > 1 || org !== DEFAULT_ORG ? ` of org ${org}` : '';
  return withControl(flags, async (deps) => {
    const check = await checkOneOff({
      flags,
      org,
      to: flags.to,
      collectors,
      state: { redis: deps.state.redis, keys: deps.keys },
    });
    const build = check.build ?? flags.to;
    const said = {
      ofOrg,
      lines: [...check.findings].map(([id, f]) => describeFinding(id, f, org, build)),
      ...(check.build === undefined ? {} : { build: check.build }),
      findings: check.findings,
      ...(check.unchecked ? { unchecked: check.unchecked } : {}),
      notUpgradable: [...check.findings.values()].some((f) => f === 'hosted' || f === 'unknown'),
    };
    const leftOut = new Set([...check.findings].filter(([, f]) => f !== 'offline').map(([id]) => id));
    const kept = collectors.filter((id) => !leftOut.has(id));
    if (kept.length === 0) return { ...said, kept: 0 };
    const name = await new OneOffPolicies(deps.state.redis, deps.keys).add(
      {
        collectors: kept,
        // `latest` as the service resolved it: the rollout's id is then known here.
        to: check.build ?? flags.to,
        allowDowngrade: flags.allowDowngrade,
        org,
        ...(flags.maxInFlight === undefined ? {} : { maxInFlight: flags.maxInFlight }),
      },
      operatorName(),
      deps.clock.now(),
      // Its audit record is written in the one-off's own step (lua/add-one-off-3.lua).
      (name) =>
        deps.audit.note({
          who: operatorName(),
          via: 'local',
          from: hostname(),
          what: 'upgrade',
          orgs: [org],
          answer: 'allowed',
          reason: `${kept.length} Collectors to ${flags.to}: ${name}`,
        }),
    );
    return { ...said, name, kept: kept.length };
  });
}

/**
 * What `upgrade` prints, on Redis or through a daemon alike: each named Collector's sentence and
 * why the service could not be asked (stderr), then what was written (stdout); exit 3 when
 * nothing was, 2 when some named Collectors are left out.
 */
function tellOneOff(outcome: OneOffOutcome, count: number, to: string): void {
  // Within 80 columns, a sentence's lines after its first indented.
  const say = (text: string) => `${wrapText(text, 80, '', '  ').join('\n')}\n`;
  for (const line of outcome.lines) process.stderr.write(say(line));
  if (outcome.unchecked)
    process.stderr.write(
      say(
        `${outcome.unchecked}; the daemon checks the build and the Collectors when it starts the one-off (see \`fleet-upgrade status\`)`,
      ),
    );
  const pinned = outcome.build ?? (to === LATEST ? undefined : to);
  const text =
    outcome.name === undefined
      ? notStartedText(count, outcome.ofOrg, to, outcome)
      : startedText({
          name: outcome.name,
          kept: outcome.kept,
          ofOrg: outcome.ofOrg,
          to,
          ...(pinned === undefined ? {} : { build: pinned }),
        });
  process.stdout.write(say(text));
  // A script can tell: nothing started (3), or some named Collectors left out (2).
  if (outcome.name === undefined) process.exitCode = EXIT.conflict;
  else if (outcome.notUpgradable) process.exitCode = EXIT.incomplete;
}

/** Why no one-off was written: every named Collector is already on the build, or none can be upgraded. */
export function notStartedText(
  count: number,
  ofOrg: string,
  to: string,
  check: { build?: string; findings: ReadonlyMap<number, string> },
): string {
  const the = count === 1 ? 'the Collector' : `none of the ${count} Collectors`;
  const build = check.build ?? to;
  if ([...check.findings.values()].every((f) => f === 'current'))
    return count === 1
      ? `no one-off started: the Collector${ofOrg} is already on ${build}`
      : `no one-off started: all ${count} Collectors${ofOrg} are already on ${build}`;
  return `no one-off started: ${the}${ofOrg} can${count === 1 ? 'not' : ''} be upgraded to ${build} (see above)`;
}

/** The one-off written: its rollout's id (known when the build is), and the commands that follow it. */
export function startedText(o: {
  name: string;
  kept: number;
  ofOrg: string;
  to: string;
  build?: string;
}): string {
  const moved = `${plural(o.kept, 'Collector')}${o.ofOrg} to ${o.build ?? o.to}`;
  const latest = o.to === LATEST && o.build ? ' (latest now)' : '';
  const follow = o.build
    ? `follow it with \`fleet-upgrade status\`; its report: \`fleet-upgrade report ${o.name}@${o.build}\``
    : `its id, ${o.name}@ and the build latest names then, shows in \`fleet-upgrade status\` once it starts`;
  const head = o.build ? `one-off rollout ${o.name}@${o.build}` : `one-off ${o.name}`;
  return (
    `${head}: ${moved}${latest}; the daemon starts it at its next round (${follow}; ` +
    `until it starts, \`fleet-upgrade abort ${o.name}\` removes it)`
  );
}
