/** `fleet-upgrade worker`: workers only, for scale-out on more hosts (no scheduler, no HTTP). */
import { Command } from 'commander';
import { ConfigError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { addDaemonOptions } from '../boot/add-daemon-options.js';
import { type DaemonFlags, loadDaemonConfig, redisTargetOf } from '../boot/daemon-config.js';
import { guardDaemon } from '../boot/guard-daemon.js';
import { DEFAULT_GIVE_UP_AFTER_MS } from '../boot/read-redis-settings.js';
import { startDaemon } from '../boot/start-daemon.js';
import { createStopper } from '../boot/stop-on-signal.js';

export function workerCommand(): Command {
  const command = new Command('worker')
    .description(
      'Run upgrade workers only, sharing the queue and budgets in Redis with every other process (REDIS_URL is required).',
    )
    .option('--listen <host:port>', 'address of /metrics, /healthz, /readyz (default 127.0.0.1:9465)');
  addDaemonOptions(command).action(async (flags: DaemonFlags) => {
    const config = loadDaemonConfig({
      env: {
        FLEET_UPGRADE_LISTEN: '127.0.0.1:9465',
        ...process.env,
        ...(process.env.FLEET_UPGRADE_WORKER_LISTEN
          ? { FLEET_UPGRADE_LISTEN: process.env.FLEET_UPGRADE_WORKER_LISTEN }
          : {}),
      },
      flags,
      needApi: true,
    });
    const logger = createLogger({ level: config.logLevel, name: 'worker' });
    if (!redisTargetOf(config)) {
      throw new ConfigError(
        'REDIS_URL is not set (nor REDIS_SENTINELS or REDIS_CLUSTER_NODES): a worker shares the Redis of its `run` process',
        [{ file: 'environment', field: 'REDIS_URL', reason: 'is not set' }],
      );
    }
    const daemon = await startDaemon({ config, role: 'worker', logger });
    logger.info({ concurrency: config.workerConcurrency }, 'worker started');
    // As `run`: a bounded stop, exit 0 when clean (1 when Redis was away); a second signal exits at
    // once; through a Redis failover or restart it goes on, past redis.giveUpAfter it exits 1.
    const stopper = createStopper({ logger, close: () => daemon.stop() });
    guardDaemon({
      logger,
      redis: daemon.redis,
      giveUpAfterMs: config.redisGiveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS,
      stop: (code) => stopper.stop(code),
    });
    await stopper.signalled;
  });
  return command;
}
