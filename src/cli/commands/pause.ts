/**
 * `fleet-upgrade pause ROLLOUT [--org NAME]`: nothing new starts (first attempts and retries);
 * tasks under way finish. `--org`: only that organization's part; the others go on.
 */
import { Command } from 'commander';
import { pause } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { orgScope, ROLLOUT_ARGUMENT, remoteOf } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';
import { ACTION_SENTENCES, ORG_SENTENCES } from '../render/action-sentences.js';

export function pauseCommand(): Command {
  const command = new Command('pause')
    .description(ACTION_SENTENCES.pause)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--org <name>', ORG_SENTENCES.pause);
  return addServerOption(addStateOptions(command)).action(
    (id: string, flags: { config?: string; server?: string; org?: string }) =>
      actAndTell(
        flags,
        (deps) => pause(deps, id, operatorName(), orgScope(flags)),
        remoteOf('pause', id, flags),
      ),
  );
}
