/**
 * The daemon's settings file (`config/fleet-upgrade.yaml`, or `--config FILE`), parsed with zod by
 * daemon-config.ts. Every object is strict, so a misspelt field is an error that names it (with
 * its line). Durations are written like `90s`, `10m`, `2h`; their bounds are checked where the
 * value is combined with the environment's (daemon-config.ts), so that an error names where it
 * came from. Each field's default is stated on it and in docs/operations.md; the environment and
 * the flags win over the file. No secret is written here: the API key and the control token come
 * from the environment or from a file named here.
 */
import { z } from 'zod';
import { AccessSettings, AuditSettings } from '../../http/access-settings.js';
import { parseDuration } from '../../lib/duration.js';
import { PublicUrl, ReceiverListFile, WebhookListFile } from '../../notify/schema.js';

/** An organization's name: a short slug, shown in status, metrics labels and events. */
export const ORG_NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;

/** The largest time scale of a rehearsal (a day in 8.6 s of real time). */
export const MAX_TIME_SCALE = 10_000;

/** pino's levels, and `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const duration = z
  .string()
  .refine((t) => parseDuration(t) !== undefined, { message: 'expected a duration like 90s, 10m, 2h' });

export const DaemonConfigFile = z.strictObject({
  /**
   * The Redis of the daemon (`REDIS_URL`). Default none: `run` starts a private redis-server with
   * append-only persistence in `<dataDir>/redis`, and the operator commands find it there.
   */
  redisUrl: z.string().optional(),
  /**
   * Redis behind Sentinel or as a Cluster, its credentials and the durability of a create's
   * pre-write (read-redis-settings.ts). A topology named in the environment replaces the one here.
   */
  redis: z
    .strictObject({
      /** The sentinels, `host:port,host:port` or a list (`REDIS_SENTINELS`); with `sentinelName`. */
      sentinels: z.union([z.string(), z.array(z.string())]).optional(),
      /** The name of the primary the sentinels monitor (`REDIS_SENTINEL_NAME`). */
      sentinelName: z.string().optional(),
      /** Some nodes of a Redis Cluster, `host:port,...` or a list (`REDIS_CLUSTER_NODES`). */
      clusterNodes: z.union([z.string(), z.array(z.string())]).optional(),
      /** An ACL user name (`REDIS_USERNAME`). Default none (the default user). */
      username: z.string().optional(),
      /** A file that holds the password (`REDIS_PASSWORD_FILE`; `REDIS_PASSWORD` wins). Default none. */
      passwordFile: z.string().min(1).optional(),
      /** A file that holds the sentinels' own password (`REDIS_SENTINEL_PASSWORD_FILE`). Default none. */
      sentinelPasswordFile: z.string().min(1).optional(),
      /** Refused: a password written here would leak with the file. */
      password: z
        .never({
          error:
            'an inline password is refused: name a file that holds it (passwordFile: PATH) or set REDIS_PASSWORD',
        })
        .optional(),
      /**
       * Replicas that must acknowledge a create's pre-write (WAIT) before the create is sent
       * (`FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE`); 0 to 16. Default: follows the topology (1 behind
       * Sentinel or once the primary has reported a replica, else 0).
       */
      minReplicasForCreate: z.number().int().min(0).max(16).optional(),
      /** How long that WAIT may take before the create is held back; 10ms to 60s. Default 1s. */
      waitTimeout: z.string().optional(),
      /**
       * How long `run` or `worker` goes on without Redis before it exits 1, for a supervisor to
       * restart it (`FLEET_UPGRADE_REDIS_GIVE_UP_AFTER`); 10s to 24h. Default 5m.
       */
      giveUpAfter: z.string().optional(),
    })
    .optional(),
  /** Prefix of every Redis key, for deployments that share one Redis (`FLEET_UPGRADE_KEY_PREFIX`). Default empty. */
  keyPrefix: z.string().optional(),
  /** HOST:PORT of the HTTP endpoints (`FLEET_UPGRADE_LISTEN`, `--listen`). Default `127.0.0.1:9464`. */
  listen: z.string().optional(),
  /** The folder of policy files (`FLEET_UPGRADE_POLICIES`, `--policies`). Default `config/policies`. */
  policies: z.string().optional(),
  /** The log level (`LOG_LEVEL`, `--log-level`). Default `info`. */
  logLevel: z.enum(LOG_LEVELS).optional(),
  /** Upgrade steps run at once by one process (`FLEET_UPGRADE_CONCURRENCY`, `--concurrency`). Default 20 per organization (at most 1,000). */
  workerConcurrency: z.number().int().min(1).max(1000).optional(),
  /** How often a running rollout pages through the listing again; 10s to 1d. Default 5m. */
  scanInterval: duration.optional(),
  /** Real time between two scheduler rounds; 50ms to 60s. Default 2s. */
  tick: duration.optional(),
  /**
   * Rehearsals against the simulator: policy durations and API limits run this many times faster
   * (`FLEET_UPGRADE_TIME_SCALE`, `--time-scale`); above 0, at most 10000. Default 1.
   */
  timeScale: z.number().positive().max(MAX_TIME_SCALE).optional(),
  /** After this, the jobs of a dead process are taken up by others; 1s to 1h. Default 30s. */
  stalledInterval: duration.optional(),
  /** Finished rollouts are removed this long after they finished; 1h to 3650d. Default 30d. */
  retention: duration.optional(),
  /** The private Redis's data, its address and its lock (`FLEET_UPGRADE_DATA_DIR`). Default `.data`. */
  dataDir: z.string().optional(),
  /** The inventory of the whole fleet that `run` keeps per organization (src/inventory). */
  inventory: z
    .strictObject({
      /** Whether `run` keeps it (`FLEET_UPGRADE_INVENTORY`). Default true. */
      enabled: z.boolean().optional(),
      /** Time between two passes of an organization (`FLEET_UPGRADE_INVENTORY_INTERVAL`); 1m to 1d. Default 15m. */
      interval: duration.optional(),
      /** Time between the requests of two pages of a pass (`FLEET_UPGRADE_INVENTORY_PAGE_INTERVAL`); 250ms to 10m. Default 5s. */
      pageInterval: duration.optional(),
    })
    .optional(),
  /** This process's share of the API budget (`run` lowers it to its policies' `api`). */
  apiBudget: z
    .strictObject({
      /** Requests per second (`FLEET_UPGRADE_API_REQUESTS_PER_SECOND`). Default 4. */
      requestsPerSecond: z.number().positive().max(1000).optional(),
      /** Requests under way at once (`FLEET_UPGRADE_API_MAX_CONCURRENT`). Default 10. */
      maxConcurrent: z.number().int().min(1).max(1000).optional(),
      /**
       * The share of the access ID's rate this deployment spends (`FLEET_UPGRADE_API_SHARE`); the
       * rest is left to the key's other users (scripts, the UI, Terraform). Above 0, at most 1. Default 0.8.
       */
      share: z.number().gt(0, 'must be above 0').max(1, 'must be at most 1').optional(),
    })
    .optional(),
  /** The service; each field loses to its `SUMOLOGIC_*` variable (docs/client.md). Default none. */
  api: z
    .strictObject({
      /** `SUMOLOGIC_BASE_URL`; a base URL from the environment wins over a deployment here. Default none. */
      baseUrl: z.string().optional(),
      /** `SUMOLOGIC_DEPLOYMENT` (us1, eu, ...); one from the environment wins over a base URL here. Default none. */
      deployment: z.string().optional(),
      /** `SUMOLOGIC_ACCESSID`. Default none. */
      accessId: z.string().optional(),
      /** A file that holds the access key (`SUMOLOGIC_ACCESSKEY_FILE`; `SUMOLOGIC_ACCESSKEY` wins). Default none. */
      accessKeyFile: z.string().optional(),
    })
    .optional(),
  /**
   * The organizations this deployment drives (read-orgs.ts). Default none: the `SUMOLOGIC_*`
   * variables (or `api` above) define one organization named `default`.
   */
  orgs: z
    .array(
      z.strictObject({
        /** A short slug shown everywhere: `^[a-z][a-z0-9-]{0,31}$`. Required. */
        name: z
          .string()
          .regex(
            ORG_NAME_PATTERN,
            'expected a short slug: a lowercase letter, then letters, digits or dashes (at most 32)',
          ),
        /** The deployment (us1, eu, au, ...), or `baseUrl`; one of the two. */
        deployment: z.string().optional(),
        /** The service's base URL, e.g. https://api.eu.sumologic.com/api/v1, or `deployment`. */
        baseUrl: z.string().optional(),
        /** The access ID of the organization's API user. Required. */
        accessId: z.string().min(1, 'must not be empty'),
        /** A file that holds the access key (a mounted secret); or `accessKeyEnv`. */
        accessKeyFile: z.string().min(1).optional(),
        /** An environment variable that holds the access key; or `accessKeyFile`. */
        accessKeyEnv: z.string().min(1).optional(),
        /** Refused: a key written here would leak with the file. */
        accessKey: z
          .never({
            error:
              'an inline access key is refused: name a file (accessKeyFile) or a variable (accessKeyEnv) that holds it',
          })
          .optional(),
      }),
    )
    .max(200, 'at most 200 organizations')
    .optional(),
  /** Webhook notifications of rollout events (src/notify, docs/notifications.md). Default none. */
  webhooks: WebhookListFile.optional(),
  /** Slack, Teams and PagerDuty receivers of rollout events (docs/notifications.md). Default none. */
  notify: ReceiverListFile.optional(),
  /**
   * Where people reach this deployment's HTTP API (`https://fleet.example.com`): receivers' messages
   * link to the rollout there (`/rollouts/{id}`). Default none: no link.
   */
  publicUrl: PublicUrl.optional(),
  /**
   * The HTTP control API's token is read from this file (docs/http-api.md). Default none: the
   * control endpoints answer only to loopback callers.
   */
  controlTokenFile: z.string().min(1).optional(),
  /** Refused: a token written here would leak with the file. */
  controlToken: z
    .never({
      error:
        'an inline token is refused: name a file that holds it (controlTokenFile: PATH) or set FLEET_UPGRADE_CONTROL_TOKEN',
    })
    .optional(),
  /** The HTTP read endpoints need the control token too (`FLEET_UPGRADE_AUTH_READS`, `--auth-reads`). Default false. */
  authReads: z.boolean().optional(),
  /**
   * Named people, their roles and organizations, and an authenticating proxy (docs/access.md).
   * Default none: the control token (or loopback) alone. Once set, reads need an identity too.
   */
  access: AccessSettings.optional(),
  /** The audit trail's bounds (docs/access.md). Default: 400 days, 1,000,000 records. */
  audit: AuditSettings.optional(),
});
export type DaemonConfigFile = z.infer<typeof DaemonConfigFile>;
