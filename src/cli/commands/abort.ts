/** `fleet-upgrade abort ROLLOUT`: nothing more starts in the rollout, ever; tasks under way finish. */
import { Command } from 'commander';
import { abort } from '../../rollout/index.js';
import { addStateOptions, operatorName, withControl } from '../boot/with-control.js';

export function abortCommand(): Command {
  const command = new Command('abort')
    .description(
      'Abort a rollout: nothing more starts in it, ever (Collectors not yet started end `aborted`); tasks under way are followed to their end. Its policy starts no newer build until the policy file changes or `resume ROLLOUT` releases it.',
    )
    .argument('<rollout>', 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)')
    .option('--reason <text>', 'why, for the history and the notifications');
  return addStateOptions(command).action(async (id: string, flags: { config?: string; reason?: string }) => {
    const actor = operatorName();
    const reason = flags.reason ? `by ${actor}: ${flags.reason.slice(0, 500)}` : `by ${actor}`;
    const result = await withControl(flags, (deps) => abort(deps, id, actor, reason));
    process.stdout.write(`${result.message}\n`);
  });
}
