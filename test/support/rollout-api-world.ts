/**
 * `run`'s HTTP server with the rollout API on a loopback port, over the real Redis and the real
 * stores, for the tests that drive the API (test/integration/http/ and the CLI's races): `openRolloutApi` starts one (closed by the returned `close`), `seedRollout`
 * starts a rollout with Collectors in chosen states, `postAction` sends one control request.
 */
import { request } from 'undici';
import { createState, type FleetState } from '../../src/cli/boot/create-state.js';
import { ControlToken } from '../../src/http/authorize-request.js';
import { createRolloutApi } from '../../src/http/create-rollout-api.js';
import type { RateLimiter } from '../../src/http/rate-limiter.js';
import { type RunningHttpServer, startHttpServer } from '../../src/http/start-http-server.js';
import { createManualClock, type ManualClock } from '../../src/lib/clock.js';
import type { Redis } from '../../src/lib/redis/create-redis.js';
import { createMetrics } from '../../src/metrics/create-metrics.js';
import type { CollectorState } from '../../src/rollout/collector/index.js';
import type { ControlDeps, EventLog } from '../../src/rollout/index.js';
import { readFleetStatus } from '../../src/rollout/life/index.js';
import { type CapturedLogger, captureLogger } from './capture-logger.js';
import { TEST_SETTINGS as SETTINGS } from './rollout-settings.js';
import { newRecord, seedCollector } from './seed-collector.js';

export const T0 = Date.UTC(2025, 0, 6, 9, 0, 0);
const _MINUTE = 60_000;

export interface ApiWorld extends FleetState {
  clock: ManualClock;
  deps: ControlDeps & { events: EventLog };
  server: RunningHttpServer;
  log: CapturedLogger;
  close(): Promise<void>;
}

export async function openRolloutApi(
  redis: Redis,
  prefix: string,
  options: { token?: string; authReads?: boolean; rateLimiter?: RateLimiter; at?: number } = {},
): Promise<ApiWorld> {
  const state = createState(redis, prefix);
  const clock = createManualClock(options.at ?? T0);
  const deps: ControlDeps & { events: EventLog } = {
    rollouts: state.rollouts,
    store: state.store,
    events: state.events,
    clock,
    keys: state.keys,
  };
  const log = captureLogger('debug');
  const server = await startHttpServer({
    host: '127.0.0.1',
    port: 0,
    registry: createMetrics().registry,
    readiness: [{ name: 'redis', check: async () => undefined }],
    status: () => readFleetStatus(state),
    api: createRolloutApi({
      deps,
      redis,
      token: options.token === undefined ? undefined : new ControlToken(options.token),
      authReads: options.authReads ?? false,
      logger: log.logger,
      ...(options.rateLimiter ? { rateLimiter: options.rateLimiter } : {}),
    }),
    logger: log.logger,
  });
  return { ...state, clock, deps, server, log, close: () => server.close() };
}

/** Starts the rollout `id` (`policy@build`) with Collectors in the states given. */
export async function seedRollout(
  w: ApiWorld,
  id: string,
  states: Partial<Record<CollectorState, number>>,
): Promise<void> {
  const [policy, build] = id.split('@') as [string, string];
  await w.rollouts.start({ policy, target: 'latest', build, maxInFlight: 50, settings: SETTINGS, now: T0 });
  let next = 1;
  for (const [state, n] of Object.entries(states) as [CollectorState, number][]) {
    for (let i = 0; i < n; i++) {
      const cid = next++;
      await seedCollector(
        { store: w.store, rolloutId: id, settings: SETTINGS, now: T0 },
        newRecord({ id: cid, name: `c-${cid}`, collectorVersion: '19.400-5' }, build, T0),
        state,
      );
    }
  }
}

/** One control request; its status and JSON answer (any: each test reads the fields it expects). */
export async function postAction(
  w: ApiWorld,
  id: string,
  action: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
  // biome-ignore lint/suspicious/noExplicitAny: each test reads the fields it expects
): Promise<{ status: number; headers: Record<string, unknown>; json: any }> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  const res = await request(`${w.server.url}/rollouts/${encodeURIComponent(id)}/${action}`, {
    method: 'POST',
    headers,
    body: JSON.stringify(options.body ?? {}),
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, json };
}
