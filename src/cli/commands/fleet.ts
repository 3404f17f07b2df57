/**
 * `fleet-upgrade fleet [--org NAME] [--format table|csv|json] [--wide] [--live]`: the whole fleet
 * as the daemon's inventory last saw it (src/inventory, in Redis): installed Collectors by build
 * and organization, the oldest builds, and each policy's share on its target per organization.
 * Needs no daemon (open-state.ts); before the first inventory pass it says so and how to get one.
 * The newest builds with when this deployment first saw them (what `minAge` counts from).
 * `--live` reads the service itself instead (every organization of the settings, its pages paced
 * one per `inventory.pageInterval`), for the counts only: the policies' shares need the targets
 * the daemon resolved. In a rehearsal its times are on the simulator's clock (told on its answers),
 * and the screen says so.
 */
import { Command, Option } from 'commander';
import { InventoryStore, type OrgInventory, runInventoryPass } from '../../inventory/index.js';
import { formatDuration } from '../../lib/duration.js';
import { FleetError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { alignableClock, originFor, type SharedClock } from '../../lib/shared-clock.js';
import { createKeys, readBuildsSeen } from '../../rollout/index.js';
import { createApi } from '../boot/create-api.js';
import { type DaemonConfig, loadDaemonConfig, orgNamesOf } from '../boot/daemon-config.js';
import { withState } from '../boot/open-state.js';
import { callServer, serverOf } from '../boot/server-client.js';
import { addServerOption, addStateOptions } from '../boot/with-control.js';
import { type FleetView, fleetView, hasInventory } from '../render/fleet-view.js';
import { fleetCsv, formatFleet } from '../render/format-fleet.js';
import { clockNote, wrapText } from '../render/format-status.js';
import { safeJson } from '../render/sanitize.js';
import { scaleOf } from './status.js';

interface FleetFlags {
  config?: string;
  org?: string;
  format: 'table' | 'csv' | 'json';
  wide: boolean;
  live: boolean;
  server?: string;
}

/** What `fleet` says before the first inventory pass. */
export function noInventoryMessage(config: Pick<DaemonConfig, 'inventory'>): string {
  const how = config.inventory.enabled
    ? `\`fleet-upgrade run\` keeps one: a pass of every organization when it starts, then every ${formatDuration(config.inventory.intervalMs)} (inventory.interval)`
    : '`fleet-upgrade run` keeps one unless inventory.enabled is false, as in these settings (or FLEET_UPGRADE_INVENTORY)';
  return `No inventory of the fleet yet: ${how}. \`fleet-upgrade fleet --live\` reads the service now.`;
}

/** The organizations asked for: all those of the settings, or the one of `--org`. */
function orgsOf(config: DaemonConfig, org: string | undefined): string[] {
  const known = orgNamesOf(config);
  if (org === undefined) return known;
  if (!known.includes(org))
    throw new FleetError('FLEET_ERR_USAGE', `--org: no organization '${org}' (known: ${known.join(', ')})`);
  return [org];
}

/** Every organization's inventory read from the service now (counts only, no policies). */
async function readLive(
  config: DaemonConfig,
  orgs: readonly string[],
  clock: SharedClock,
): Promise<OrgInventory[]> {
  const logger = createLogger({ level: config.logLevel, name: 'fleet' });
  // A rehearsal's times are the simulator's: its first answer that tells its now sets this clock.
  let told = false;
  const onNow = (simNow: number, wallAt: number) => {
    if (told || clock.scale <= 1) return;
    told = true;
    clock.setOrigin(originFor(clock.scale, simNow, wallAt));
  };
  const keys = createKeys(config.keyPrefix);
  const out: OrgInventory[] = [];
  for (const org of orgs) {
    const settings = config.orgs.find((o) => o.name === org);
    if (!settings) continue;
    const reading = `reading the inventory of org ${org} from its service: one page of 1,000 every ${formatDuration(config.inventory.pageEveryMs)}`;
    process.stderr.write(`${wrapText(reading, 80, '', '  ').join('\n')}\n`);
    const { client } = createApi({
      api: settings.api,
      org,
      config,
      keys,
      clock,
      logger,
      watchTimeScale: { onNow },
    });
    try {
      const pass = await runInventoryPass({
        client,
        clock,
        org,
        policies: [],
        pageEveryMs: config.inventory.pageEveryMs,
      });
      out.push({ org, pass });
    } finally {
      await client.close();
    }
  }
  return out;
}

export function fleetCommand(): Command {
  const command = new Command('fleet')
    .description(
      "The whole fleet from the daemon's inventory: installed Collectors by build and organization (alive and offline), the oldest builds, and each policy's share on its target. Works while the daemon is down. With --server: GET /fleet, every organization the daemon reads (--org and --live local only; no simulated-clock line).",
    )
    .option('--org <name>', 'only this organization')
    .addOption(
      new Option('--format <format>', 'output format').choices(['table', 'csv', 'json']).default('table'),
    )
    .option('--wide', 'every organization a column of its own (wider than 80 columns)', false)
    .option(
      '--live',
      'read the service now instead of the inventory (needs the API settings; pages paced by inventory.pageInterval; counts only)',
      false,
    );
  return addServerOption(addStateOptions(command)).action(async (flags: FleetFlags) => {
    const server = serverOf(flags, process.env);
    if (server) {
      // GET /fleet: the inventory of every organization the daemon reads, as `--format json`.
      if (flags.live || flags.org !== undefined)
        throw new FleetError('FLEET_ERR_USAGE', 'with --server, --live and --org are local only');
      const {
        source: _source,
        now,
        ...view
      } = (await callServer(server, 'GET', '/fleet')) as {
        source: string;
        now: number;
      } & FleetView;
      if (flags.format === 'json')
        process.stdout.write(`${safeJson({ source: 'inventory', now, ...view }, 2)}\n`);
      else if (flags.format === 'csv') process.stdout.write(`${fleetCsv(view)}\n`);
      else process.stdout.write(`${formatFleet(view, now, { wide: flags.wide })}\n`);
      return;
    }
    const config = loadDaemonConfig({ env: process.env, flags, needApi: flags.live });
    const orgs = orgsOf(config, flags.org);
    const live = flags.live ? alignableClock(config.timeScale) : undefined;
    const { inventories, now, seen, scale } = live
      ? {
          inventories: await readLive(config, orgs, live),
          now: live.now(),
          seen: undefined,
          scale: live.scale,
        }
      : await withState(config, async (state) => ({
          inventories: await new InventoryStore(state.redis, state.keys).read(orgs),
          now: state.clock.now(),
          scale: scaleOf(state.clock),
          // When this deployment first saw each build (what minAge counts from).
          seen: new Map(
            await Promise.all(
              orgs.map(async (org) => [org, await readBuildsSeen(state.redis, state.keys, org)] as const),
            ),
          ),
        }));
    const view = fleetView(inventories, seen);
    const empty = !hasInventory(view);
    if (flags.format === 'json') {
      const note = empty ? { note: noInventoryMessage(config) } : {};
      process.stdout.write(
        `${safeJson({ source: flags.live ? 'live' : 'inventory', now, ...view, ...note }, 2)}\n`,
      );
      return;
    }
    if (flags.format === 'csv') {
      if (empty) process.stderr.write(`${noInventoryMessage(config)}\n`);
      process.stdout.write(`${fleetCsv(view)}\n`);
      return;
    }
    if (empty) {
      process.stdout.write(`${noInventoryMessage(config)}\n`);
      return;
    }
    // Which clock the times are on, first (a rehearsal's simulated one), as status says it.
    const note = clockNote(scale, now);
    process.stdout.write(`${note ? `${note}\n` : ''}${formatFleet(view, now, { wide: flags.wide })}\n`);
  });
}
