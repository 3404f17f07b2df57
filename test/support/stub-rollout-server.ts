/**
 * The daemon's HTTP server with the rollout API on stub stores and no Redis, for tests of the
 * HTTP layer itself: the rollouts answer `get` and `list` with what the test gives; the other
 * stores are empty objects, so any other use of them is an unexpected error (a 500).
 */
import { createRolloutApi } from '../../src/http/create-rollout-api.js';
import { type RunningHttpServer, startHttpServer } from '../../src/http/start-http-server.js';
import { createManualClock } from '../../src/lib/clock.js';
import type { Logger } from '../../src/lib/logger.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import { type ControlDeps, createKeys, type EventLog } from '../../src/rollout/index.js';

export interface StubRolloutServerOptions {
  /** What `rollouts.get` answers. */
  get: () => Promise<unknown>;
  /** What `rollouts.list` answers. */
  list: () => Promise<unknown>;
  /** The API's Redis: a stub of what the test needs of it. */
  redis: unknown;
  logger: Logger;
  /** How long the API waits for Redis. Default: the API's. */
  redisWaitMs?: number;
}

export function startStubRolloutServer(options: StubRolloutServerOptions): Promise<RunningHttpServer> {
  const deps = {
    rollouts: {
      get: options.get,
      list: options.list,
      // An action's audited store (rollout-store.ts): the same stub.
      audited() {
        return this;
      },
    },
    store: {},
    events: {},
    clock: createManualClock(0),
    keys: createKeys('stub:'),
  } as unknown as ControlDeps & { events: EventLog };
  return startHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: createMetrics().registry,
    readiness: [],
    status: async () => ({ rollouts: [] }),
    api: createRolloutApi({
      deps,
      redis: options.redis as never,
      token: undefined,
      authReads: false,
      logger: options.logger,
      ...(options.redisWaitMs === undefined ? {} : { redisWaitMs: options.redisWaitMs }),
    }),
    logger: options.logger,
  });
}
