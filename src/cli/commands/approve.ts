/**
 * `fleet-upgrade approve ROLLOUT`: one person's approval of the wave a rollout waits for
 * (`approval: { approvers: N, from }`; rollout/operator/approve.ts). The Nth distinct person opens
 * it; the same person twice is refused (exit 3), one not among `from` too (exit 77).
 */
import { Command } from 'commander';
import { approve } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';
import { ACTION_SENTENCES } from '../render/action-sentences.js';

export function approveCommand(): Command {
  const command = new Command('approve')
    .description(ACTION_SENTENCES.approve)
    .argument('<rollout>', ROLLOUT_ARGUMENT);
  return addServerOption(addStateOptions(command)).action(
    (id: string, flags: { config?: string; server?: string }) =>
      actAndTell(flags, (deps) => approve(deps, id, { name: operatorName() }), { action: 'approve', id }),
  );
}
