/** `fleet-upgrade status`: every rollout with its counts per state and progress; `--watch` redraws. */
import { Command } from 'commander';
import { readFleetStatus } from '../rollout/read-fleet-status.js';
import { loadDaemonConfig } from './daemon-config.js';
import { formatRolloutTable } from './format-status.js';
import { openState } from './open-state.js';

interface StatusFlags {
  config?: string;
  json?: boolean;
  watch?: boolean;
  interval: string;
}

export function statusCommand(): Command {
  return new Command('status')
    .description('Show every rollout: phase, progress, in-flight against the limit, Collectors per state.')
    .option('--json', 'print JSON instead of a table', false)
    .option('--watch', 'redraw live progress bars until interrupted', false)
    .option('--interval <seconds>', 'with --watch: seconds between redraws', '2')
    .option('--config <file>', 'settings file (default config/fleet-upgrade.yaml when it exists)')
    .action(async (flags: StatusFlags) => {
      const config = loadDaemonConfig({ env: process.env, flags, needApi: false });
      const state = await openState(config);
      try {
        const once = async () => {
          const status = await readFleetStatus(state);
          return flags.json ? JSON.stringify(status, null, 2) : formatRolloutTable(status.rollouts);
        };
        if (!flags.watch) {
          process.stdout.write(`${await once()}\n`);
          return;
        }
        const seconds = Math.max(0.2, Number(flags.interval) || 2);
        let stop = false;
        process.once('SIGINT', () => {
          stop = true;
        });
        while (!stop) {
          const text = await once();
          // Clear the screen and home the cursor, then draw.
          process.stdout.write(`\x1b[2J\x1b[H${new Date().toISOString()}  (Ctrl-C to stop)\n\n${text}\n`);
          await new Promise((r) => setTimeout(r, seconds * 1000));
        }
      } finally {
        await state.close();
      }
    });
}
