/**
 * `fleet-upgrade rollback ROLLOUT [--only unhealthy,failed,... | --all]`: the chosen Collectors of
 * a rollout go back to the build they had before it, as rollouts of their own (src/rollout/
 * rollback.ts). Without --only or --all: what went wrong (unhealthy, failed, timed_out). `--org
 * NAME`: only that organization's Collectors.
 */
import { Command } from 'commander';
import {
  ControlError,
  DEFAULT_ROLLBACK_STATES,
  ROLLBACK_STATES,
  requestRollback,
  rollbackStates,
} from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { orgScope, ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addStateOptions, operatorName } from '../boot/with-control.js';

export function rollbackCommand(): Command {
  const command = new Command('rollback')
    .description(
      'Take Collectors of a rollout back to the build each had before it (recorded when the rollout found it), ' +
        'as rollouts of their own with one task each (same budget, slots, verification, gate and report). ' +
        'A previous build the service no longer offers is reported, not guessed.',
    )
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
    .option('--org <name>', "only this organization's Collectors");
  return addStateOptions(command).action(
    async (id: string, flags: { config?: string; only?: string; all: boolean; org?: string }) => {
      if (flags.only !== undefined && flags.all)
        throw new ControlError('invalid', 'give --only or --all, not both');
      const states = rollbackStates({
        ...(flags.only === undefined ? {} : { only: flags.only.split(',') }),
        all: flags.all,
      });
      await actAndTell(flags, (deps) => requestRollback(deps, id, operatorName(), states, orgScope(flags)));
    },
  );
}
