/**
 * `fleet-upgrade resume ROLLOUT`: a rollout halted by its failure gate or paused by an operator
 * goes on (the gate then judges only later outcomes); on an aborted rollout it releases the
 * policy, so that a newer build starts a new rollout. It says what it released. `--org NAME`:
 * lets the part of that organization that `pause --org` held go on.
 */
import { Command } from 'commander';
import { resume } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { orgScope, ROLLOUT_ARGUMENT, remoteOf } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';
import { ACTION_SENTENCES, ORG_SENTENCES } from '../render/action-sentences.js';

export function resumeCommand(): Command {
  const command = new Command('resume')
    .description(ACTION_SENTENCES.resume)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--org <name>', ORG_SENTENCES.resume);
  return addServerOption(addStateOptions(command)).action(
    (id: string, flags: { config?: string; server?: string; org?: string }) =>
      actAndTell(
        flags,
        (deps) => resume(deps, id, operatorName(), orgScope(flags)),
        remoteOf('resume', id, flags),
      ),
  );
}
