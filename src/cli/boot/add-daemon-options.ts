/** The options that `run` and `worker` share: the settings file, log level, concurrency, time scale. */
import { type Command, InvalidArgumentError, Option } from 'commander';
import { intOption } from './int-option.js';
import { LOG_LEVELS, MAX_TIME_SCALE } from './schema.js';
import { addStateOptions } from './with-control.js';

export function addDaemonOptions(command: Command): Command {
  return addStateOptions(command)
    .addOption(new Option('--log-level <level>', 'log level').choices(LOG_LEVELS))
    .option(
      '--concurrency <n>',
      'upgrade steps run at once by this process (default 20 per organization, at most 1000)',
      intOption('--concurrency', 1, 1000),
    )
    .option(
      '--time-scale <k>',
      'rehearsal against the simulator: policy durations and API limits run K times faster (default 1)',
      (v) => {
        const n = Number(v);
        if (!Number.isFinite(n) || n <= 0 || n > MAX_TIME_SCALE)
          throw new InvalidArgumentError(
            `--time-scale must be a number above 0 and at most ${MAX_TIME_SCALE}, got '${v}'`,
          );
        return n;
      },
    );
}
