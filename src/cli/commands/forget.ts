/** `fleet-upgrade forget ROLLOUT`: removes a finished, aborted or orphaned rollout's data. */
import { Command } from 'commander';
import { forget } from '../../rollout/index.js';
import { addStateOptions, withControl } from '../boot/with-control.js';

export function forgetCommand(): Command {
  const command = new Command('forget')
    .description(
      "Remove a converged, aborted, superseded or orphaned (policy removed) rollout's data: records, counts, history; its metric series disappear at the next scrape.",
    )
    .argument('<rollout>', 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)');
  return addStateOptions(command).action(async (id: string, flags: { config?: string }) => {
    const result = await withControl(flags, (deps) => forget(deps, id, deps.state.redis));
    process.stdout.write(`${result.message}\n`);
  });
}
