/**
 * `fleet-upgrade retry ROLLOUT --only failed,timed_out,... [--org NAME]`: exactly those Collectors
 * (of that organization only, with `--org`) get one new attempt.
 */
import { Command } from 'commander';
import type { CollectorState } from '../../rollout/index.js';
import { ControlError, RETRYABLE_STATES, retry } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { orgScope, ROLLOUT_ARGUMENT, remoteOf } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions, operatorName } from '../boot/with-control.js';
import { ACTION_SENTENCES, ORG_SENTENCES } from '../render/action-sentences.js';

export function retryCommand(): Command {
  const command = new Command('retry')
    .description(ACTION_SENTENCES.retry)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .requiredOption('--only <outcomes>', `comma-separated outcomes: ${RETRYABLE_STATES.join(', ')}`)
    .option('--org <name>', ORG_SENTENCES.retry);
  return addServerOption(addStateOptions(command)).action(
    async (id: string, flags: { config?: string; server?: string; only: string; org?: string }) => {
      const only = flags.only
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean) as CollectorState[];
      if (only.length === 0) throw new ControlError('invalid', `--only takes ${RETRYABLE_STATES.join(', ')}`);
      await actAndTell(flags, (deps) => retry(deps, id, operatorName(), only, orgScope(flags)), {
        ...remoteOf('retry', id, flags),
        body: { only, ...orgScope(flags) },
      });
    },
  );
}
