/**
 * `fleet-upgrade forget ROLLOUT [--force]`: removes a finished, aborted or orphaned rollout's
 * data. Refused (exit 3) while a rollback request of it waits for the daemon, or while its policy
 * (in the policy files `run` reads: --policies, FLEET_UPGRADE_POLICIES, the settings) is enabled
 * and still selects its build; `--force` forgets it anyway. Its quarantined cohorts stay held.
 */
import { Command } from 'commander';
import { loadPolicies } from '../../policy/load/load-policies.js';
import { forget, type PolicyView } from '../../rollout/index.js';
import { actAndTell } from '../boot/act-and-tell.js';
import { loadDaemonConfig } from '../boot/daemon-config.js';
import { ROLLOUT_ARGUMENT } from '../boot/rollout-argument.js';
import { addServerOption, addStateOptions } from '../boot/with-control.js';
import { ACTION_SENTENCES } from '../render/action-sentences.js';

export function forgetCommand(): Command {
  const command = new Command('forget')
    .description(ACTION_SENTENCES.forget)
    .argument('<rollout>', ROLLOUT_ARGUMENT)
    .option('--policies <dir>', 'folder of policy files (default config/policies, as `run`)')
    .option(
      '--force',
      'forget it even so (the rollback request is dropped; the daemon may start it again)',
      false,
    );
  return addServerOption(addStateOptions(command)).action(
    (id: string, flags: { config?: string; server?: string; policies?: string; force: boolean }) =>
      actAndTell(
        flags,
        (deps) => forget({ ...deps, policies: policiesOf(flags) }, id, { force: flags.force }),
        { action: 'forget', id, body: flags.force ? { force: true } : {} },
      ),
  );
}

/** The policies `run` would read here, or undefined when they cannot be read. */
function policiesOf(flags: { config?: string; policies?: string }): () => readonly PolicyView[] | undefined {
  return () => {
    try {
      const config = loadDaemonConfig({
        env: process.env,
        flags: {
          ...(flags.config ? { config: flags.config } : {}),
          ...(flags.policies ? { policies: flags.policies } : {}),
        },
        needApi: false,
      });
      const loaded = config.policyFiles.length
        ? loadPolicies({ files: config.policyFiles })
        : loadPolicies({ dir: config.policyDir });
      return loaded.map((l) => l.policy);
    } catch {
      return undefined;
    }
  };
}
