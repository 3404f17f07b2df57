/**
 * The client of the Collector Upgrade Service as every command builds it: the process's share of
 * the API budget (its setting, lowered to the enabled policies' `api`), shared through Redis by
 * every process using the same access ID when there is a Redis, in memory otherwise (`plan`
 * without REDIS_URL). The daemons' client also warns when the simulator runs at another time scale.
 */
import {
  type ApiConfig,
  type ApiHooks,
  type CollectorUpgradeClient,
  createCollectorUpgradeClient,
  createMemoryRequestBudget,
  createRedisRequestBudget,
  createUndiciTransport,
} from '../../api/index.js';
import type { Clock } from '../../lib/clock.js';
import type { Logger } from '../../lib/logger.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import type { Policy } from '../../policy/schema.js';
import type { Keys } from '../../rollout/index.js';
import type { DaemonConfig } from './daemon-config.js';
import { DEFAULT_ORG, type OrgSettings } from './read-orgs.js';
import { watchTimeScale } from './watch-time-scale.js';

export interface ApiPieces {
  client: CollectorUpgradeClient;
  /** The budget this process keeps to, in requests per clock second and at once. */
  perSecond: number;
  concurrent: number;
}

export function createApi(options: {
  api: ApiConfig;
  /** The organization it is the client of (its budget is its own); none: the only one. */
  org?: string;
  config: Pick<DaemonConfig, 'apiBudget' | 'timeScale'>;
  /** The shared budget lives here; without it the budget is this process's alone. */
  redis?: Redis;
  keys: Keys;
  /** Their `api` lowers the budget. */
  policies?: readonly Policy[];
  clock?: Clock;
  logger: Logger;
  hooks?: ApiHooks;
  /**
   * Warn once when the simulator's time scale is not `config.timeScale` (watch-time-scale.ts);
   * `onChange` is told when it starts to differ (the simulator's scale) and when it agrees again.
   */
  watchTimeScale?:
    | boolean
    | {
        onChange?(simulatorTimeScale: number | undefined): void;
        /** The simulator's now as an answer tells it (watch-time-scale.ts). */
        onNow?(simulatorNow: number, wallAt: number): void;
      };
}): ApiPieces {
  const { config } = options;
  const limits = (options.policies ?? []).filter((p) => p.enabled).map((p) => p.api);
  // The deployment spends its share of the rate; the rest is left to the access ID's other users.
  const share = Math.min(config.apiBudget.share ?? 1, ...limits.map((l) => l.share ?? 1));
  const perSecond =
    Math.min(config.apiBudget.requestsPerSecond, ...limits.map((l) => l.requestsPerSecond)) * share;
  const concurrent = Math.min(config.apiBudget.maxConcurrent, ...limits.map((l) => l.maxConcurrent));
  const shared = { perSecond, concurrent, timeScale: config.timeScale };
  const budget = options.redis
    ? createRedisRequestBudget({
        redis: options.redis,
        accessId: options.api.accessId,
        ...(options.org && options.org !== DEFAULT_ORG ? { scope: options.org } : {}),
        keyPrefix: options.keys.apiBudget,
        ...shared,
        // At a high time scale a window is a few real ms: pad it more against scheduling lag.
        ...(config.timeScale > 1 ? { marginRatio: 0.15 } : {}),
      })
    : createMemoryRequestBudget(shared);
  const client = createCollectorUpgradeClient({
    config: options.api,
    budget,
    logger: options.logger,
    ...(options.clock ? { clock: options.clock } : {}),
    ...(options.hooks ? { hooks: options.hooks } : {}),
    ...(options.watchTimeScale
      ? {
          transport: watchTimeScale(createUndiciTransport(), {
            timeScale: config.timeScale,
            logger: options.logger,
            ...(typeof options.watchTimeScale === 'object' && options.watchTimeScale.onChange
              ? { onChange: options.watchTimeScale.onChange }
              : {}),
            ...(typeof options.watchTimeScale === 'object' && options.watchTimeScale.onNow
              ? { onNow: options.watchTimeScale.onNow }
              : {}),
          }),
        }
      : {}),
  });
  return { client, perSecond, concurrent };
}

/** The clients of every organization of the deployment, each with its own budget. */
export interface OrgApis {
  /** The organizations' names, in the settings' order. */
  readonly names: readonly string[];
  /** The client of `org`; throws for an organization the settings do not name. */
  get(org: string): ApiPieces;
  close(): Promise<void>;
}

export function createOrgApis(
  orgs: readonly OrgSettings[],
  options: Omit<Parameters<typeof createApi>[0], 'api' | 'org' | 'hooks'> & {
    /** The metrics' hooks of each organization's client. */
    hooks?: (org: string) => ApiHooks;
  },
): OrgApis {
  const { hooks, ...shared } = options;
  const pieces = new Map(
    orgs.map((o) => [
      o.name,
      createApi({ ...shared, api: o.api, org: o.name, ...(hooks ? { hooks: hooks(o.name) } : {}) }),
    ]),
  );
  return {
    names: orgs.map((o) => o.name),
    get(org) {
      const p = pieces.get(org);
      if (!p) throw new Error(`no organization '${org}' in the settings (${[...pieces.keys()].join(', ')})`);
      return p;
    },
    async close() {
      await Promise.all([...pieces.values()].map((p) => p.client.close()));
    },
  };
}
