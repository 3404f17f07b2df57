/**
 * `fleet-upgrade status`: every rollout with its progress and, under its row, what it waits for
 * and each organization's part that is not done (format-status.ts); `--org NAME` only that
 * organization's (focus-org.ts). Needs no daemon (open-state.ts). `--watch` redraws; when Redis (or the
 * daemon whose private Redis it read) goes away it says so in one sentence and keeps trying,
 * waiting 1, 2, 4 … 30 s between attempts, until Ctrl-C. Holding a private Redis it started
 * itself, it hands the folder over when a `run` starts, and then reads that run's Redis.
 */
import { Command } from 'commander';
import { FleetError } from '../../lib/errors.js';
import { type FleetStatus, readFleetStatus } from '../../rollout/index.js';
import { type DaemonConfig, loadDaemonConfig, orgNamesOf } from '../boot/daemon-config.js';
import {
  isConnectionError,
  openState,
  redisTrouble,
  type StateAccess,
  withState,
} from '../boot/open-state.js';
import { callServer, serverOf } from '../boot/server-client.js';
import { addServerOption, addStateOptions } from '../boot/with-control.js';
import { focusOrg } from '../render/focus-org.js';
import { clockName, formatStatus } from '../render/format-status.js';
import { safeJson } from '../render/sanitize.js';

interface StatusFlags {
  config?: string;
  server?: string;
  json?: boolean;
  wide?: boolean;
  watch?: boolean;
  interval: string;
  org?: string;
}

/** Real ms between two attempts after `failures` failed ones in a row: 1 s, 2 s, 4 s … 30 s. */
export function retryDelayMs(failures: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, Math.min(failures - 1, 15)));
}

/** The time scale of a deployment's clock (1: the system clock). */
export function scaleOf(clock: object): number {
  const scale = (clock as { scale?: unknown }).scale;
  return typeof scale === 'number' && scale > 0 ? scale : 1;
}

/**
 * The screen of `status`; with `watch`, the clock is named in the header line instead
 * (`watchHeader`), so the table does not say it again.
 */
async function render(
  state: StateAccess,
  flags: StatusFlags,
  config: DaemonConfig,
  watch = false,
): Promise<string> {
  const all = await readFleetStatus(state);
  const daemonRunning = (await state.redis.exists(state.keys.leader)) === 1;
  return renderStatus(
    all,
    flags,
    config,
    { now: state.clock.now(), daemonRunning, scale: scaleOf(state.clock) },
    watch,
  );
}

/** The status as read (from Redis, or a daemon's GET /status), as `status` prints it. */
function renderStatus(
  all: FleetStatus,
  flags: StatusFlags,
  config: DaemonConfig,
  at: { now: number; daemonRunning: boolean; scale: number },
  watch = false,
): string {
  const status = flags.org === undefined ? all : focusOrg(all, flags.org, orgNamesOf(config));
  // Reasons and cohorts from outside: escaped where a terminal would act on them.
  if (flags.json) return safeJson(status, 2);
  const { now, daemonRunning } = at;
  return formatStatus(
    {
      rollouts: status.rollouts,
      now,
      daemonRunning,
      orgProblems: status.orgProblems,
      oneOffs: status.oneOffs,
      daemonProblems: status.daemonProblems,
      targetWaits: status.targetWaits,
      ...(watch ? {} : { timeScale: at.scale }),
      ...(flags.org === undefined ? {} : { focusOrg: flags.org }),
    },
    { wide: flags.wide ?? false },
  );
}

export function statusCommand(): Command {
  const command = new Command('status')
    .description(
      'Show every rollout: phase, progress, in-flight against the limit, Collectors per state, and what it waits for. Works while the daemon is down.',
    )
    .option('--json', 'print JSON instead of a table', false)
    .option('--wide', 'a column per state (wider than 80 columns)', false)
    .option(
      '--watch',
      'redraw until interrupted; when Redis goes away, say so and try again (1 s, 2 s … 30 s apart)',
      false,
    )
    .option('--interval <seconds>', 'with --watch: seconds between redraws', '2')
    .option('--org <name>', 'only the rollouts that cover this organization, and only its part of each');
  return addServerOption(addStateOptions(command)).action(async (flags: StatusFlags) => {
    const config = loadDaemonConfig({ env: process.env, flags, needApi: false });
    const server = serverOf(flags, process.env);
    if (server) {
      // Through the daemon's GET /status as the person of FLEET_UPGRADE_TOKEN (docs/access.md).
      if (flags.watch)
        throw new FleetError(
          'FLEET_ERR_USAGE',
          '--watch reads Redis: leave out --server (or FLEET_UPGRADE_SERVER) to watch',
        );
      const all = (await callServer(server, 'GET', '/status')) as FleetStatus;
      process.stdout.write(
        `${renderStatus(all, flags, config, { now: Date.now(), daemonRunning: true, scale: 1 })}\n`,
      );
      return;
    }
    if (flags.watch) return watchStatus(config, flags);
    const text = await withState(config, (state) => render(state, flags, config), { name: 'status' });
    process.stdout.write(`${text}\n`);
  });
}

/**
 * The first line of `status --watch`: the deployment clock's time, and which clock it is, so that
 * the times below (on the same clock) are read right: `2026-11-26T03:34:12Z  (simulated clock,
 * ×60; Ctrl-C to stop)`.
 */
export function watchHeader(now: number, timeScale: number): string {
  return `${new Date(now).toISOString().slice(0, 19)}Z  (${clockName(timeScale)}; Ctrl-C to stop)`;
}

/** Sleeps `ms`, waking early when `wake()` turns true (looked at every 100 ms). */
async function sleepUnless(ms: number, wake: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end && !wake())
    await new Promise((r) => setTimeout(r, Math.min(100, end - Date.now())));
}

async function watchStatus(config: DaemonConfig, flags: StatusFlags): Promise<void> {
  const intervalMs = Math.max(0.2, Number(flags.interval) || 2) * 1000;
  let stop = false;
  const onSigint = () => {
    stop = true;
  };
  process.once('SIGINT', onSigint);
  let state: StateAccess | undefined;
  let failures = 0;
  let last: { text: string; at: number } | undefined;
  // The deployment's clock, kept when Redis goes away: the header and "last seen" stay on it.
  let clock: { now(): number } = { now: () => Date.now() };
  let scale = 1;
  const handover = () => state?.handoverWanted() ?? false;
  try {
    while (!stop) {
      let screen: string;
      let waitMs = intervalMs;
      try {
        state ??= await openState(config, { name: 'status --watch' });
        clock = state.clock;
        scale = scaleOf(state.clock);
        const text = await render(state, flags, config, true);
        last = { text, at: clock.now() };
        failures = 0;
        screen = text;
      } catch (err) {
        if (!isConnectionError(err)) throw err;
        const where = state?.where;
        await state?.close().catch(() => undefined);
        state = undefined;
        failures += 1;
        waitMs = retryDelayMs(failures);
        const told = where ? redisTrouble(err, where) : err;
        const sentence = told instanceof FleetError ? told.message : 'Redis does not answer.';
        screen = `${sentence} Trying again in ${waitMs / 1000} s (Ctrl-C to stop).`;
        if (last)
          screen += `\n\nLast seen at ${new Date(last.at).toISOString().slice(11, 19)} UTC:\n${last.text}`;
      }
      // Clear the screen and home the cursor, then draw.
      process.stdout.write(`\x1b[2J\x1b[H${watchHeader(clock.now(), scale)}\n\n${screen}\n`);
      await sleepUnless(waitMs, () => stop || handover());
      if (handover()) {
        // A `run` waits for the folder of the private Redis this watch started: give it over.
        await state?.close();
        state = undefined;
      }
    }
  } finally {
    process.removeListener('SIGINT', onSigint);
    await state?.close();
  }
}
