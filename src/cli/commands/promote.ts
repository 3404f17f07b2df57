/** `fleet-upgrade promote ROLLOUT [--full]`: ends the current bake or approval wait. */
import { Command } from 'commander';
import { promote } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';
import { ACTION_SENTENCES } from '../render/action-sentences.js';

export function promoteCommand(): Command {
  const command = new Command('promote')
    .description(ACTION_SENTENCES.promote)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--full', 'open every remaining wave at once', false);
  return addServerOption(addStateOptions(command)).action(
    (id: string, flags: { config?: string; server?: string; full: boolean }) =>
      actAndTell(flags, (deps) => promote(deps, id, operatorName(), flags.full), {
        action: 'promote',
        id,
        body: flags.full ? { full: true } : {},
      }),
  );
}
