/** `fleet-upgrade pause ROLLOUT`: nothing new starts (first attempts and retries); tasks under way finish. */
import { Command } from 'commander';
import { pause } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addStateOptions, operatorName } from '../boot/with-control.js';

export function pauseCommand(): Command {
  const command = new Command('pause')
    .description(
      'Pause a rollout: no Collector is admitted (first attempts and retries); tasks under way are followed to their end. `resume` lets it go on.',
    )
    .argument('<rollout>', ROLLOUT_ARGUMENT);
  return addStateOptions(command).action((id: string, flags: { config?: string }) =>
    actAndTell(flags, (deps) => pause(deps, id, operatorName())),
  );
}
