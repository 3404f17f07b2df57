/** `fleet-upgrade pause ROLLOUT`: nothing new starts (first attempts and retries); tasks under way finish. */
import { Command } from 'commander';
import { pause } from '../../rollout/index.js';
import { addStateOptions, operatorName, withControl } from '../boot/with-control.js';

export function pauseCommand(): Command {
  const command = new Command('pause')
    .description(
      'Pause a rollout: no Collector is admitted (first attempts and retries); tasks under way are followed to their end. `resume` lets it go on.',
    )
    .argument('<rollout>', 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)');
  return addStateOptions(command).action(async (id: string, flags: { config?: string }) => {
    const result = await withControl(flags, (deps) => pause(deps, id, operatorName()));
    process.stdout.write(`${result.message}\n`);
  });
}
