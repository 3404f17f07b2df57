/** `fleet-upgrade history ROLLOUT [--json]`: the rollout's audit trail, oldest first. */
import { Command } from 'commander';
import { ControlError } from '../../rollout/index.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addStateOptions, withControl } from '../boot/with-control.js';
import { formatHistory } from '../render/format-history.js';

export function historyCommand(): Command {
  const command = new Command('history')
    .description(
      'Show the audit trail of a rollout: when, who (operator, gate, scheduler, policy), what, oldest first.',
    )
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--json', 'print JSON instead of lines', false)
    .option('--limit <n>', 'only the newest N events', (v) => Number(v));
  return addStateOptions(command).action(
    async (id: string, flags: { config?: string; json: boolean; limit?: number }) => {
      const events = await withControl(flags, async (deps) => {
        if (!(await deps.rollouts.get(id)))
          throw new ControlError('not_found', `no rollout '${id}' (see \`fleet-upgrade status\`)`);
        const limit =
          flags.limit && Number.isInteger(flags.limit) && flags.limit > 0 ? flags.limit : undefined;
        return deps.events.history(id, limit);
      });
      process.stdout.write(
        `${flags.json ? JSON.stringify({ rollout: id, events }, null, 2) : formatHistory(events)}\n`,
      );
    },
  );
}
