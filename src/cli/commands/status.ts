/**
 * `fleet-upgrade status`: every rollout with its progress and, under its row, what it waits for
 * and each organization's part that is not done (format-status.ts); `--org NAME` only that
 * organization's (focus-org.ts). Needs no daemon (open-state.ts). `--watch` redraws; when Redis (or the
 * daemon whose private Redis it read) goes away it says so in one sentence and keeps trying,
 * waiting 1, 2, 4 … 30 s between attempts, until Ctrl-C. Holding a private Redis it started
 * itself, it hands the folder over when a `run` starts, and then reads that run's Redis. With
 * `--server URL` it reads the daemon's `GET /status` instead (as the person of FLEET_UPGRADE_TOKEN),
 * `--watch` too: the same screen, the daemon's going away said and waited out alike (watch-loop.ts).
 */
import { Command } from 'commander';
import { FleetError } from '../../lib/errors.js';
import { ControlError, type FleetStatus, readFleetStatus } from '../../rollout/index.js';
import { type DaemonConfig, loadDaemonConfig, orgNamesOf } from '../boot/daemon-config.js';
import {
  isConnectionError,
  openState,
  redisTrouble,
  type StateAccess,
  withState,
} from '../boot/open-state.js';
import { askServer, refusalOfAnswer, type ServerTarget, serverOf } from '../boot/server-client.js';
import { type Look, watchLoop } from '../boot/watch-loop.js';
import { addServerOption, addStateOptions } from '../boot/with-control.js';
import { focusOrg } from '../render/focus-org.js';
import { formatStatus } from '../render/format-status.js';
import { safeJson } from '../render/sanitize.js';

export { retryDelayMs, watchHeader } from '../boot/watch-loop.js';

interface StatusFlags {
  config?: string;
  server?: string;
  json?: boolean;
  wide?: boolean;
  watch?: boolean;
  interval: string;
  org?: string;
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
      'redraw until interrupted; when Redis (with --server, the daemon) goes away, say so and try again (1 s, 2 s … 30 s apart)',
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
        return watchLoop({ intervalMs: intervalOf(flags), look: lookThroughServer(server, flags, config) });
      const asked = Date.now();
      const answer = await askServer(server, 'GET', '/status');
      if (answer.status !== 200) throw refusalOfAnswer(answer);
      const clock = clockOfAnswer(answer.headers['x-fleet-upgrade-clock'], asked);
      const at = { ...clock, daemonRunning: true };
      process.stdout.write(`${renderStatus(answer.json as FleetStatus, flags, config, at)}\n`);
      return;
    }
    if (flags.watch) return watchStatus(config, flags);
    const text = await withState(config, (state) => render(state, flags, config), { name: 'status' });
    process.stdout.write(`${text}\n`);
  });
}

/**
 * The daemon's clock as `/status` tells it (`X-Fleet-Upgrade-Clock: <ms>; scale=<n>`), so that the
 * screen is drawn on the deployment's clock as on Redis; an older daemon's: this machine's.
 */
export function clockOfAnswer(header: unknown, asked: number): { now: number; scale: number } {
  const m = typeof header === 'string' ? /^(\d{1,16}); scale=(\d{1,9}(?:\.\d{1,9})?)$/.exec(header) : null;
  const scale = Number(m?.[2]);
  return m && scale > 0 ? { now: Number(m[1]), scale } : { now: asked, scale: 1 };
}

/** With --watch: real ms between two redraws (at least 0.2 s). */
const intervalOf = (flags: StatusFlags) => Math.max(0.2, Number(flags.interval) || 2) * 1000;

/**
 * One look of `status --watch --server`: `GET /status` with the last answer's ETag in
 * `If-None-Match` (a 304 redraws what was held, on the time now: nothing crosses the network
 * while nothing changed). A daemon that cannot be reached or answers 5xx or 429 is away (a
 * sentence; the loop tries again later); a refusal (401, 403) ends the watch with its exit code.
 * Times are on the daemon's clock as its answer tells it (clockOfAnswer).
 */
function lookThroughServer(
  server: ServerTarget,
  flags: StatusFlags,
  config: DaemonConfig,
): () => Promise<Look> {
  let held: { status: FleetStatus; etag?: string } | undefined;
  let told: { now: number; scale: number; at: number } | undefined;
  return async () => {
    const now = Date.now();
    // While the daemon is away, its clock as last told, run on since.
    const away = (why: string): Look => ({
      away: `The daemon at ${server.url} ${why}.`,
      now: told ? told.now + (now - told.at) * told.scale : now,
      scale: told?.scale ?? 1,
    });
    let answer: Awaited<ReturnType<typeof askServer>>;
    try {
      answer = await askServer(server, 'GET', '/status', held?.etag ? { ifNoneMatch: held.etag } : {});
    } catch (err) {
      if (err instanceof ControlError) throw err;
      return away(
        `does not answer (${(err as Error).message.replace(/^cannot reach the daemon at \S+ \((.*)\)$/, '$1')})`,
      );
    }
    if (answer.status === 200)
      held = { status: answer.json as FleetStatus, ...(answer.etag ? { etag: answer.etag } : {}) };
    else if (answer.status >= 500 || answer.status === 429) return away(`answered ${answer.status}`);
    else if (answer.status !== 304 || !held) throw refusalOfAnswer(answer);
    const clock = clockOfAnswer(answer.headers['x-fleet-upgrade-clock'], now);
    told = { ...clock, at: now };
    const screen = renderStatus(held.status, flags, config, { ...clock, daemonRunning: true }, true);
    return { screen, ...clock };
  };
}

/** `status --watch` on Redis (its private one, or REDIS_URL's), handing a private one over to a `run`. */
async function watchStatus(config: DaemonConfig, flags: StatusFlags): Promise<void> {
  let state: StateAccess | undefined;
  // The deployment's clock, kept when Redis goes away: the header and "last seen" stay on it.
  let clock: { now(): number } = { now: () => Date.now() };
  let scale = 1;
  const handover = () => state?.handoverWanted() ?? false;
  try {
    await watchLoop({
      intervalMs: intervalOf(flags),
      look: async () => {
        try {
          state ??= await openState(config, { name: 'status --watch' });
          clock = state.clock;
          scale = scaleOf(state.clock);
          const screen = await render(state, flags, config, true);
          return { screen, now: clock.now(), scale };
        } catch (err) {
          if (!isConnectionError(err)) throw err;
          const where = state?.where;
          await state?.close().catch(() => undefined);
          state = undefined;
          const told = where ? redisTrouble(err, where) : err;
          const away = told instanceof FleetError ? told.message : 'Redis does not answer.';
          return { away, now: clock.now(), scale };
        }
      },
      wake: handover,
      afterPause: async () => {
        if (!handover()) return;
        // A `run` waits for the folder of the private Redis this watch started: give it over.
        await state?.close();
        state = undefined;
      },
    });
  } finally {
    await state?.close();
  }
}
