/**
 * The daemon's HTTP server as `run` builds it (the rollout API, /status, the console), alone in a
 * process of its own so that the console benchmark can measure its CPU apart from the browser's
 * driver. Reads REDIS_URL and FLEET_UPGRADE_KEY_PREFIX; prints `{"url": ...}` once listening.
 */
import { createState } from '../../src/cli/boot/create-state.js';
import { createRolloutApi } from '../../src/http/create-rollout-api.js';
import { startHttpServer } from '../../src/http/start-http-server.js';
import { systemClock } from '../../src/lib/clock.js';
import { createLogger } from '../../src/lib/logger.js';
import { createRedis } from '../../src/lib/redis/create-redis.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { readFleetStatus } from '../../src/rollout/index.js';

const logger = createLogger({ level: 'silent', name: 'bench-console-server' });
const redis = createRedis(process.env.REDIS_URL ?? '', { name: 'bench-console-server' });
const state = createState(redis, process.env.FLEET_UPGRADE_KEY_PREFIX ?? '');
const api = createRolloutApi({
  deps: {
    rollouts: state.rollouts,
    store: state.store,
    events: state.events,
    clock: systemClock,
    keys: state.keys,
  },
  redis,
  token: undefined,
  authReads: false,
  logger,
});
const server = await startHttpServer({
  host: '127.0.0.1',
  port: 0,
  registry: createMetrics().registry,
  readiness: [],
  status: () => readFleetStatus(state),
  api,
  logger,
});
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
