/** `fleet-upgrade simulate`: runs the simulated Collector Upgrade Service until interrupted. */
import { Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError, FleetError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { loadSourceFile } from '../../lib/source/yaml-source.js';
import { type AnyFleetInput, FleetSource } from '../../simulator/fleet-source.js';
import { MAX_ORG_COLLECTORS } from '../../simulator/schema.js';
import { startSimulator } from '../../simulator/start-simulator.js';
import { intOption } from '../boot/int-option.js';

function positiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0)
    throw new InvalidArgumentError(`must be a positive number, got '${value}'.`);
  return n;
}

interface SimulateFlags {
  host: string;
  port: number;
  fleet?: string;
  collectors?: number;
  seed: number;
  timeScale: number;
  lenientContentType: boolean;
  logLevel: string;
}

/**
 * The fleet to simulate: the file (one organization, or several under `orgs:`), or a generated
 * one with a default user from the environment. More Collectors than an organization can hold
 * is a bad fleet (ConfigError, exit 78), in a file or by --collectors.
 */
export function fleetFromFlags(
  flags: Pick<SimulateFlags, 'fleet' | 'collectors' | 'seed'>,
  env: NodeJS.ProcessEnv,
): AnyFleetInput {
  if (flags.fleet && flags.collectors !== undefined) {
    throw new FleetError('FLEET_ERR_USAGE', 'give either --fleet FILE or --collectors N, not both');
  }
  if (flags.fleet) return loadSourceFile(flags.fleet, FleetSource);
  if (flags.collectors !== undefined && flags.collectors > MAX_ORG_COLLECTORS) {
    const n = (x: number) => x.toLocaleString('en-US');
    const reason =
      `an organization holds at most ${n(MAX_ORG_COLLECTORS)} Collectors (the vendor's limit), got ` +
      `${n(flags.collectors)}: for more, write a fleet file with several organizations (orgs:)`;
    throw new ConfigError(`--collectors: ${reason}`, [{ file: '--collectors', field: '', reason }]);
  }
  const id = env.SUMOLOGIC_ACCESSID;
  const key = env.SUMOLOGIC_ACCESSKEY;
  return {
    builds: ['19.400-5', '19.418-9', '19.432-7', '19.450-12', '19.470-4'],
    users: id && key ? [{ accessId: id, accessKey: key }] : [{ accessId: 'demo', accessKey: 'demo-secret' }],
    generate: { count: flags.collectors ?? 1000, seed: flags.seed },
    seed: flags.seed,
  };
}

export function simulateCommand(): Command {
  return new Command('simulate')
    .description(
      'Run a simulated Collector Upgrade Service (the four /api/v1 endpoints, basic auth, rate limits, ' +
        'faults, an accelerated clock) plus /_sim introspection, until interrupted.',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option(
      '--port <n>',
      'port to listen on (0 = any free port; the URL is logged)',
      intOption('--port', 0, 65535),
      0,
    )
    .option(
      '--fleet <file>',
      'fleet file (YAML or JSON) describing builds, users, Collectors, behaviour, faults; orgs: for several organizations',
    )
    .option(
      '--collectors <n>',
      `generate a fleet of N Collectors (at most ${MAX_ORG_COLLECTORS}, the vendor's limit per organization) instead of reading a fleet file`,
      intOption('--collectors', 0, 2_000_000),
    )
    .option('--seed <s>', 'seed of the generated fleet and its behaviour', intOption('--seed', 0), 1)
    .option('--time-scale <k>', 'simulated time runs K times faster than the wall clock', positiveNumber, 1)
    .option('--lenient-content-type', 'accept GET requests that carry no Content-Type header', false)
    .addOption(
      new Option('--log-level <level>', 'log level')
        .choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
        .default('info'),
    )
    .addHelpText(
      'after',
      '\nWithout --fleet, the generated fleet has one user: SUMOLOGIC_ACCESSID/SUMOLOGIC_ACCESSKEY when both are\n' +
        'set, else demo/demo-secret. Every duration and rate of the fleet file is in simulated time.\n' +
        'A fleet file with orgs: serves several organizations on one port (the credentials decide which\n' +
        'answers); or run one simulate per organization, each on its own port.\n\n' +
        'Example:\n  fleet-upgrade simulate --port 8080 --collectors 500 --seed 7 --time-scale 60',
    )
    .action(async (flags: SimulateFlags) => {
      const logger = createLogger({ level: flags.logLevel as 'info', name: 'simulator' });
      const fleet = fleetFromFlags(flags, process.env);
      const started = performance.now();
      const sim = await startSimulator({
        fleet,
        host: flags.host,
        port: flags.port,
        timeScale: flags.timeScale,
        lenientContentType: flags.lenientContentType,
        logger,
      });
      const orgs = [...sim.orgs.values()];
      logger.info(
        {
          url: sim.url,
          baseUrl: sim.baseUrl,
          collectors: orgs.reduce((n, o) => n + o.model.size, 0),
          builds: sim.model.builds.length,
          latest: sim.model.latest,
          users: orgs.flatMap((o) => [...o.accounts.keys()]),
          orgs: orgs.map((o) => ({
            name: o.name,
            collectors: o.model.size,
            latest: o.model.latest,
            users: [...o.accounts.keys()],
          })),
          timeScale: flags.timeScale,
          startMs: Math.round(performance.now() - started),
        },
        'simulator listening',
      );
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info({ signal }, 'simulator stopping');
          resolve();
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
      });
      await sim.close();
    });
}
