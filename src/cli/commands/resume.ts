/**
 * `fleet-upgrade resume ROLLOUT`: a rollout halted by its failure gate or paused by an operator
 * goes on (the gate then judges only later outcomes); on an aborted rollout it releases the
 * policy, so that a newer build starts a new rollout. It says what it released.
 */
import { Command } from 'commander';
import { resume } from '../../rollout/index.js';
import { addStateOptions, operatorName, withControl } from '../boot/with-control.js';

export function resumeCommand(): Command {
  const command = new Command('resume')
    .description(
      'Resume a halted or paused rollout (the failure gate then judges only later outcomes), or release the policy of an aborted one; says what it released.',
    )
    .argument('<rollout>', 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)');
  return addStateOptions(command).action(async (id: string, flags: { config?: string }) => {
    const result = await withControl(flags, (deps) => resume(deps, id, operatorName()));
    process.stdout.write(`${result.message}\n`);
  });
}
