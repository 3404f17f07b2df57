/** `fleet-upgrade promote ROLLOUT [--full]`: ends the current bake or approval wait. */
import { Command } from 'commander';
import { promote } from '../../rollout/index.js';
import { addStateOptions, operatorName, withControl } from '../boot/with-control.js';

export function promoteCommand(): Command {
  const command = new Command('promote')
    .description('End the current bake or approval wait of a rollout: its next wave starts now.')
    .argument('<rollout>', 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)')
    .option('--full', 'open every remaining wave at once', false);
  return addStateOptions(command).action(async (id: string, flags: { config?: string; full: boolean }) => {
    const result = await withControl(flags, (deps) => promote(deps, id, operatorName(), flags.full));
    process.stdout.write(`${result.message}\n`);
  });
}
