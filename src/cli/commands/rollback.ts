/**
 * `fleet-upgrade rollback ROLLOUT [--only unhealthy,failed,... | --all] [--wait [SECONDS]]`: the
 * chosen Collectors of a rollout go back to the build they had before it, as rollouts of their
 * own (src/rollout/operator/rollback.ts). Without --only or --all: what went wrong (unhealthy,
 * failed, timed_out). `--org NAME`: only that organization's Collectors. It says how many were
 * requested; `--wait` then follows the rollback until nothing of it is under way and says what
 * became of them (rollout/life/rollback-account.ts): rolled back, already on their previous build
 * (nothing to do), not alive (cannot be moved now), failed, still under way. `status` says the
 * same at any time.
 */

import { Command } from 'commander';
import { isRedisUnavailable } from '../../lib/redis/redis-unavailable.js';
import {
  ControlError,
  type ControlResult,
  DEFAULT_ROLLBACK_STATES,
  describeRollbackAccount,
  type FleetStatus,
  ROLLBACK_STATES,
  type RollbackAccount,
  readFleetStatus,
  requestRollback,
  rollbackStates,
} from '../../rollout/index.js';
import { auditedLocally } from '../boot/act-and-tell.js';
import { orgScope, ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { callServer, serverOf } from '../boot/server-client.js';
import { addServerOption, addStateOptions, operatorName, withControl } from '../boot/with-control.js';
import { ACTION_SENTENCES, ORG_SENTENCES } from '../render/action-sentences.js';
import { wrapText } from '../render/format-status.js';

/** Real seconds `--wait` follows a rollback by default. */
const WAIT_SECONDS = 600;
/** Phases in which a rollback's rollout moves nothing more by itself. */
const STILL: ReadonlySet<string> = new Set([
  'converged',
  'halted',
  'paused',
  'aborted',
  'superseded',
  'gone',
]);

export function rollbackCommand(): Command {
  const command = new Command('rollback')
    .description(ACTION_SENTENCES.rollback)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option(
      '--only <outcomes>',
      `comma-separated outcomes: ${ROLLBACK_STATES.join(', ')} (default ${DEFAULT_ROLLBACK_STATES.join(',')})`,
    )
    .option(
      '--all',
      'every Collector whose task ran (succeeded, verifying, unhealthy, failed, timed_out)',
      false,
    )
    .option('--org <name>', ORG_SENTENCES.rollback)
    .option(
      '--wait [seconds]',
      `follow the rollback (needs the daemon) until nothing of it is under way, at most this long (default ${WAIT_SECONDS}), and say what became of each Collector`,
    );
  return addServerOption(addStateOptions(command)).action(
    async (
      id: string,
      flags: {
        config?: string;
        server?: string;
        only?: string;
        all: boolean;
        org?: string;
        wait?: boolean | string;
      },
    ) => {
      if (flags.only !== undefined && flags.all)
        throw new ControlError('invalid', 'give --only or --all, not both');
      const states = rollbackStates({
        ...(flags.only === undefined ? {} : { only: flags.only.split(',') }),
        all: flags.all,
      });
      const waitSeconds =
        flags.wait === undefined ? 0 : flags.wait === true ? WAIT_SECONDS : Number(flags.wait);
      if (!Number.isFinite(waitSeconds) || waitSeconds < 0)
        throw new ControlError('invalid', `--wait takes a number of seconds, not '${String(flags.wait)}'`);
      const server = serverOf(flags, process.env);
      if (server) {
        // Through the daemon's API as the person of FLEET_UPGRADE_TOKEN (docs/access.md).
        const body = {
          ...(flags.all ? { all: true } : flags.only === undefined ? {} : { only: states }),
          ...orgScope(flags),
        };
        const path = `/rollouts/${encodeURIComponent(id)}`;
        const result = (await callServer(server, 'POST', `${path}/rollback`, body)) as ControlResult;
        process.stdout.write(`${wrapText(result.message, 80, '', '  ').join('\n')}\n`);
        if (waitSeconds === 0 || result.request === undefined) return;
        const read = async () => ({
          rollouts: [(await callServer(server, 'GET', path)) as FleetStatus['rollouts'][number]],
        });
        const account = await follow(read, id, result.request, Date.now() + waitSeconds * 1000);
        process.stdout.write(`${sayAccount(account, id, waitSeconds)}\n`);
        return;
      }
      await withControl(flags, async (deps) => {
        const result = await auditedLocally(
          deps,
          { action: 'rollback', id, ...(flags.org === undefined ? {} : { orgs: [flags.org] }) },
          (d) => requestRollback(d, id, operatorName(), states, orgScope(flags)),
        );
        // Within 80 columns: a sentence's lines after its first indented (issue #26).
        const say = (text: string) => `${wrapText(text, 80, '', '  ').join('\n')}\n`;
        process.stdout.write(say(result.message));
        if (waitSeconds === 0 || result.request === undefined) return;
        const account = await follow(
          () => readFleetStatus(deps.state),
          id,
          result.request,
          Date.now() + waitSeconds * 1000,
        );
        process.stdout.write(say(sayAccount(account, id, waitSeconds)));
      });
    },
  );
}

/** Reads the account of `request` until nothing of it is under way, or the deadline. */
async function follow(
  read: () => Promise<Pick<FleetStatus, 'rollouts'>>,
  id: string,
  request: string,
  deadline: number,
): Promise<RollbackAccount | undefined> {
  let last: RollbackAccount | undefined;
  for (;;) {
    let status: Awaited<ReturnType<typeof read>>;
    try {
      status = await read();
    } catch (err) {
      // Redis away for a moment (a failover): the account is read again until the deadline.
      if (!isRedisUnavailable(err) || Date.now() >= deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      continue;
    }
    const rollout = status.rollouts.find((r) => r.id === id);
    last = rollout?.rollbackAccounts?.find((a) => a.request === request) ?? last;
    if (!rollout || (last && (last.underWay === 0 || last.rollouts.every((x) => STILL.has(x.phase)))))
      return last;
    if (Date.now() >= deadline) return last;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

function sayAccount(account: RollbackAccount | undefined, id: string, waited: number): string {
  if (!account)
    return `not carried out within ${waited} s: is the daemon running? \`fleet-upgrade status\` shows what becomes of ${id}'s rollback once it is`;
  const still = account.underWay > 0 ? ` (after ${waited} s; \`fleet-upgrade status\` follows it)` : '';
  return `${describeRollbackAccount(account)}${still}`;
}
