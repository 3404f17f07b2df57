/**
 * `fleet-upgrade pause ROLLOUT [--org NAME]`: nothing new starts (first attempts and retries);
 * tasks under way finish. `--org`: only that organization's part; the others go on.
 */
import { Command } from 'commander';
import { pause } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { orgScope, ROLLOUT_ARGUMENT, remoteOf } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';

export function pauseCommand(): Command {
  const command = new Command('pause')
    .description(
      'Pause a rollout: no Collector is admitted (first attempts and retries); tasks under way are followed to their end. `resume` lets it go on.',
    )
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--org <name>', "only this organization's part: nothing new starts there; the others go on");
  return addServerOption(addStateOptions(command)).action(
    (id: string, flags: { config?: string; server?: string; org?: string }) =>
      actAndTell(
        flags,
        (deps) => pause(deps, id, operatorName(), orgScope(flags)),
        remoteOf('pause', id, flags),
      ),
  );
}
