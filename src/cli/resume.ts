/**
 * `fleet-upgrade resume ROLLOUT`: an operator lets a rollout that its failure gate halted go on.
 * From then on the gate judges only the outcomes that come after the resume.
 */
import { Command } from 'commander';
import { FleetError } from '../lib/errors.js';
import { loadDaemonConfig } from './daemon-config.js';
import { openState } from './open-state.js';

export function resumeCommand(): Command {
  return new Command('resume')
    .description('Resume a rollout halted by its failure gate; the gate then counts only later outcomes.')
    .argument('<rollout>', 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)')
    .option('--config <file>', 'settings file (default config/fleet-upgrade.yaml when it exists)')
    .action(async (id: string, flags: { config?: string }) => {
      const config = loadDaemonConfig({ env: process.env, flags, needApi: false });
      const state = await openState(config);
      try {
        const rollout = await state.rollouts.get(id);
        if (!rollout) throw new FleetError('FLEET_ERR_USAGE', `no rollout '${id}'`);
        if (rollout.phase !== 'halted')
          throw new FleetError('FLEET_ERR_USAGE', `rollout ${id} is ${rollout.phase}, not halted`);
        const counts = await state.store.counts(id);
        if (!(await state.rollouts.resume(id, counts, state.clock.now())))
          throw new FleetError(
            'FLEET_ERR_USAGE',
            `rollout ${id} could not be resumed: it is no longer halted`,
          );
        process.stdout.write(`resumed ${id} (was halted: ${rollout.haltReason ?? 'no reason recorded'})\n`);
      } finally {
        await state.close();
      }
    });
}
