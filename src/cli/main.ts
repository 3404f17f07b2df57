/**
 * The one `fleet-upgrade` command. Each sub-command lives in its own file under src/cli/ and
 * exports a function that builds its commander `Command`.
 */
import { Command, CommanderError } from 'commander';
import { ConfigError, FleetError } from '../lib/errors.js';
import { ControlError } from '../rollout/index.js';
import { EXIT } from './boot/exit-codes.js';
import { abortCommand } from './commands/abort.js';
import { approveCommand } from './commands/approve.js';
import { auditCommand } from './commands/audit.js';
import { demoCommand } from './commands/demo.js';
import { fleetCommand } from './commands/fleet.js';
import { forgetCommand } from './commands/forget.js';
import { historyCommand } from './commands/history.js';
import { notifyCommand } from './commands/notify.js';
import { pauseCommand } from './commands/pause.js';
import { planCommand } from './commands/plan.js';
import { promoteCommand } from './commands/promote.js';
import { reportCommand } from './commands/report.js';
import { resumeCommand } from './commands/resume.js';
import { retryCommand } from './commands/retry.js';
import { rollbackCommand } from './commands/rollback.js';
import { runCommand } from './commands/run.js';
import { simulateCommand } from './commands/simulate.js';
import { statusCommand } from './commands/status.js';
import { upgradeCommand } from './commands/upgrade.js';
import { workerCommand } from './commands/worker.js';

export function buildProgram(): Command {
  const program = new Command('fleet-upgrade')
    .description(
      'Upgrade and downgrade fleets of installed Collectors through the Collector Upgrade Service, ' +
        'and simulate that service for rehearsals and tests.',
    )
    .version(process.env.npm_package_version ?? '0.1.0', '-V, --version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();
  program.addCommand(runCommand());
  program.addCommand(workerCommand());
  program.addCommand(planCommand());
  program.addCommand(statusCommand());
  program.addCommand(reportCommand());
  program.addCommand(fleetCommand());
  program.addCommand(pauseCommand());
  program.addCommand(resumeCommand());
  program.addCommand(abortCommand());
  program.addCommand(promoteCommand());
  program.addCommand(approveCommand());
  program.addCommand(retryCommand());
  program.addCommand(rollbackCommand());
  program.addCommand(historyCommand());
  program.addCommand(auditCommand());
  program.addCommand(notifyCommand());
  program.addCommand(forgetCommand());
  program.addCommand(upgradeCommand());
  program.addCommand(simulateCommand());
  program.addCommand(demoCommand());
  // Sub-commands made apart from the program do not inherit these; usage errors must exit 64 everywhere.
  for (const command of program.commands)
    command.exitOverride().showHelpAfterError('(run with --help for usage)');
  return program;
}

/**
 * A reader that went away (`fleet-upgrade report | head`) ends the command quietly with the exit
 * code so far, as Unix tools do, instead of a stack trace from the unhandled EPIPE.
 */
function endQuietlyOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? EXIT.ok);
  });
}

export async function main(argv: readonly string[]): Promise<void> {
  endQuietlyOnClosedPipe(process.stdout);
  const program = buildProgram();
  try {
    await program.parseAsync(argv as string[]);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
    if (err instanceof CommanderError) return; // commander already printed help or the usage error
    process.stderr.write(`fleet-upgrade: ${err instanceof Error ? err.message : String(err)}\n`);
  }
}

export function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    if (err.exitCode === 0 || err.code === 'commander.helpDisplayed' || err.code === 'commander.version')
      return EXIT.ok;
    return EXIT.usage;
  }
  if (err instanceof ConfigError) return EXIT.config;
  if (err instanceof ControlError)
    return err.kind === 'conflict' ? EXIT.conflict : err.kind === 'forbidden' ? EXIT.denied : EXIT.usage;
  if (err instanceof FleetError && err.code === 'FLEET_ERR_USAGE') return EXIT.usage;
  return EXIT.failure;
}
