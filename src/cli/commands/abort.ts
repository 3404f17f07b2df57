/** `fleet-upgrade abort ROLLOUT`: nothing more starts in the rollout, ever; tasks under way finish. */
import { Command } from 'commander';
import { abort } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';
import { ACTION_SENTENCES } from '../render/action-sentences.js';

export function abortCommand(): Command {
  const command = new Command('abort')
    .description(ACTION_SENTENCES.abort)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--reason <text>', 'why, for the history and the notifications');
  return addServerOption(addStateOptions(command)).action(
    async (id: string, flags: { config?: string; server?: string; reason?: string }) => {
      const actor = operatorName();
      const reason = flags.reason ? `by ${actor}: ${flags.reason.slice(0, 500)}` : `by ${actor}`;
      await actAndTell(flags, (deps) => abort(deps, id, actor, reason), {
        action: 'abort',
        id,
        body: flags.reason ? { reason: flags.reason.slice(0, 500) } : {},
      });
    },
  );
}
