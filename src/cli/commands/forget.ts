/** `fleet-upgrade forget ROLLOUT`: removes a finished, aborted or orphaned rollout's data. */
import { Command } from 'commander';
import { forget } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addStateOptions } from '../boot/with-control.js';

export function forgetCommand(): Command {
  const command = new Command('forget')
    .description(
      "Remove a converged, aborted, superseded or orphaned (policy removed) rollout's data: records, counts, history; its metric series disappear at the next scrape.",
    )
    .argument('<rollout>', ROLLOUT_ARGUMENT);
  return addStateOptions(command).action((id: string, flags: { config?: string }) =>
    actAndTell(flags, (deps) => forget(deps, id)),
  );
}
