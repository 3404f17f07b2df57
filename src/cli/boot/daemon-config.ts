/**
 * Settings of `run`, `worker`, `status` and `report`: a pure function of its inputs, with the
 * precedence defaults < config file < environment < flags. The config file is
 * `config/fleet-upgrade.yaml` when it exists (or `--config FILE`), parsed by schema.ts; its errors
 * name file, line and field. The API credentials come from the environment (or the file's `api` section), never from
 * flags, so that no secret shows in a process list.
 */
import { existsSync, readFileSync } from 'node:fs';
import { type ApiConfig, readApiConfig } from '../../api/index.js';
import type { ControlToken } from '../../http/authorize-request.js';
import { type AccessPlan, readAccess } from '../../http/read-access.js';
import { readControlToken } from '../../http/read-control-token.js';
import { DEFAULT_INVENTORY_INTERVAL_MS, DEFAULT_INVENTORY_PAGE_EVERY_MS } from '../../inventory/index.js';
import { ConfigError, formatIssue, type SourceIssue } from '../../lib/errors.js';
import type { RedisTarget } from '../../lib/redis/redis-target.js';
import { loadSourceFile, locateField } from '../../lib/source/yaml-source.js';
import { readReceivers } from '../../notify/read-receivers.js';
import { readWebhooks, type Webhook } from '../../notify/read-webhooks.js';
import { DEFAULT_POLICY_DIR } from '../../policy/load/load-policies.js';
import {
  AUDIT_MAX_RECORDS,
  AUDIT_RETENTION_MS,
  type AuditBounds,
  DEFAULT_AUDIT_BOUNDS,
  DEFAULT_RETENTION_MS,
} from '../../rollout/index.js';
import { boundedDuration, type SETTING_BOUNDS } from './bounded-duration.js';
import { envBoolean, envNumber } from './env-values.js';
import { parseListen } from './parse-listen.js';
import { DEFAULT_ORG, type OrgSettings, readOrgs } from './read-orgs.js';
import { readRedisSettings } from './read-redis-settings.js';
import { DaemonConfigFile, LOG_LEVELS, type LogLevel, MAX_TIME_SCALE } from './schema.js';

export const DEFAULT_CONFIG_FILE = 'config/fleet-upgrade.yaml';
/** The share of an access ID's rate a deployment spends by default: a fifth is left to its other users. */
export const DEFAULT_API_SHARE = 0.8;

export interface DaemonFlags {
  config?: string;
  listen?: string;
  policy?: string[];
  policies?: string;
  logLevel?: string;
  concurrency?: number;
  timeScale?: number;
  /** `run --auth-reads`. */
  authReads?: boolean;
}

export interface DaemonConfig {
  /** A standalone Redis's URL (`REDIS_URL`); see `redis` for the other topologies. */
  redisUrl?: string;
  /**
   * The deployment's Redis as the settings name it (read-redis-settings.ts): a URL, Sentinel or
   * Cluster, with the password. Unset (and no `redisUrl`): `run` starts a private redis-server.
   * Read it through `redisTargetOf`.
   */
  redis?: RedisTarget;
  /** Replicas a create's pre-write waits for (WAIT); undefined: follows the topology. */
  minReplicasForCreate?: number;
  /** WAIT's time limit, real ms (default 1000). */
  replicaWaitMs?: number;
  /**
   * Whether a task id, like the pre-write, waits for the replicas (default true;
   * `FLEET_UPGRADE_CONFIRM_TASK_IDS=0` turns it off, for `bench failover --task-ids` to compare).
   */
  confirmTaskIds?: boolean;
  /** Real ms without Redis after which `run` or `worker` exits 1 for a supervisor to restart it (default 5 min). */
  redisGiveUpAfterMs?: number;
  keyPrefix: string;
  listen: { host: string; port: number };
  policyDir: string;
  /** `--policy FILE` (repeatable): these instead of the folder. */
  policyFiles: string[];
  logLevel: LogLevel;
  workerConcurrency: number;
  /** Clock ms between two scans of the listing of a running rollout. */
  scanIntervalMs: number;
  /** Real ms between two scheduler rounds. */
  tickMs: number;
  /** Rehearsals against the simulator: clock ms per real ms (policy durations are clock time). */
  timeScale: number;
  /** Real ms after which the job of a dead worker is taken up again. */
  stalledIntervalMs: number;
  /** Clock ms after which a finished rollout (converged, aborted, superseded) and its records are removed. */
  retentionMs: number;
  /** Folder of the private Redis's data (append-only file). */
  dataDir: string;
  /**
   * This process's API budget (run lowers it to its policies' `api`): it spends `share` of
   * `requestsPerSecond`, the rest is left to the access ID's other users.
   */
  apiBudget: { requestsPerSecond: number; maxConcurrent: number; share: number };
  /**
   * The inventory of the whole fleet `run` keeps (src/inventory): whether, clock ms between two
   * passes of an organization, and clock ms between the requests of two pages.
   */
  inventory: { enabled: boolean; intervalMs: number; pageEveryMs: number };
  /**
   * The `default` organization's service from the `SUMOLOGIC_*` variables (or the file's `api`),
   * when the settings have no `orgs`. Undefined when only settings that need no API were asked
   * for (status, report), or with `orgs`.
   */
  api?: ApiConfig;
  /**
   * Every organization this deployment drives (read-orgs.ts): the file's `orgs`, or the one
   * `default` of `api`. Empty when the API settings were not asked for.
   */
  orgs: OrgSettings[];
  /**
   * The names of the file's `orgs`, read even when their keys are not (the operator commands);
   * absent without `orgs` (see `orgNamesOf`).
   */
  orgNames?: string[];
  /** Where `run` sends rollout events (URLs and secrets resolved from the environment or files). */
  webhooks: Webhook[];
  /** The HTTP control API's token (read only when asked: `needControl`); unset: loopback callers only. */
  controlToken?: ControlToken;
  /** The HTTP read endpoints (/status, /rollouts...) need the token (or loopback without one) too. */
  authReads: boolean;
  /** `access:` resolved (read only when asked: `needControl`); unset: the control token or loopback. */
  access?: AccessPlan;
  /** The audit trail's bounds (`audit:`). */
  audit: AuditBounds;
}

export interface LoadDaemonConfigInput {
  env: NodeJS.ProcessEnv;
  flags: DaemonFlags;
  /** Read the config file (default: from disk when it exists). */
  readFile?: (file: string) => DaemonConfigFile;
  fileExists?: (file: string) => boolean;
  /** Whether the API settings are required (run, worker, plan) or not (status, report). */
  needApi: boolean;
  /** Reads a text file: a webhook's `secretFile`, the settings file to locate an error (default: from disk). */
  readText?: (file: string) => string;
  /** Whether the HTTP control token is read (run) or not. */
  needControl?: boolean;
}

export function loadDaemonConfig(input: LoadDaemonConfigInput): DaemonConfig {
  const { env, flags } = input;
  const exists = input.fileExists ?? existsSync;
  const read = input.readFile ?? ((f: string) => loadSourceFile(f, DaemonConfigFile));
  const configFile =
    flags.config ??
    env.FLEET_UPGRADE_CONFIG ??
    (exists(DEFAULT_CONFIG_FILE) ? DEFAULT_CONFIG_FILE : undefined);
  const file: DaemonConfigFile = configFile ? read(configFile) : {};
  const settingsFile = configFile ?? 'settings';
  const readText = input.readText ?? ((f: string) => readFileSync(f, 'utf8'));
  // The settings file is read again only to name the line of a field that an error is about.
  const locate = (path: readonly PropertyKey[]) => {
    try {
      return locateField(readText(settingsFile), path);
    } catch {
      return undefined;
    }
  };
  const issues: SourceIssue[] = [];
  // A duration from the environment, else from the file; each within its bounds.
  const duration = (setting: keyof typeof SETTING_BOUNDS & keyof DaemonConfigFile, variable: string) =>
    boundedDuration(env[variable], setting, variable, issues) ??
    boundedDuration(file[setting], setting, settingsFile, issues);

  const listenText = flags.listen ?? env.FLEET_UPGRADE_LISTEN ?? file.listen ?? '127.0.0.1:9464';
  const logLevel = (flags.logLevel ?? env.LOG_LEVEL ?? file.logLevel ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    issues.push({ file: 'environment', field: 'LOG_LEVEL', reason: `unknown level '${logLevel}'` });
  }
  const redis = readRedisSettings({ env, file, settingsFile, readFile: readText, locate });
  issues.push(...redis.issues);
  const config: DaemonConfig = {
    ...(redis.target?.kind === 'standalone' ? { redisUrl: redis.target.url } : {}),
    ...(redis.target ? { redis: redis.target } : {}),
    ...(redis.minReplicasForCreate === undefined ? {} : { minReplicasForCreate: redis.minReplicasForCreate }),
    replicaWaitMs: redis.waitTimeoutMs,
    redisGiveUpAfterMs: redis.giveUpAfterMs,
    ...(env.FLEET_UPGRADE_CONFIRM_TASK_IDS === '0' ? { confirmTaskIds: false } : {}),
    keyPrefix: env.FLEET_UPGRADE_KEY_PREFIX ?? file.keyPrefix ?? '',
    listen: parseListen(
      listenText,
      flags.listen
        ? '--listen'
        : env.FLEET_UPGRADE_LISTEN
          ? 'FLEET_UPGRADE_LISTEN'
          : `${configFile ?? 'default'}: listen`,
    ),
    policyDir: flags.policies ?? env.FLEET_UPGRADE_POLICIES ?? file.policies ?? DEFAULT_POLICY_DIR,
    policyFiles: flags.policy ?? [],
    logLevel,
    workerConcurrency:
      flags.concurrency ??
      envNumber(
        env,
        'FLEET_UPGRADE_CONCURRENCY',
        issues,
        (n) => Number.isInteger(n) && n >= 1 && n <= 1000,
      ) ??
      file.workerConcurrency ??
      defaultConcurrency(file.orgs?.length ?? 0),
    scanIntervalMs: duration('scanInterval', 'FLEET_UPGRADE_SCAN_INTERVAL') ?? 300_000,
    tickMs: duration('tick', 'FLEET_UPGRADE_TICK') ?? 2_000,
    timeScale:
      flags.timeScale ??
      envNumber(env, 'FLEET_UPGRADE_TIME_SCALE', issues, (n) => n > 0 && n <= MAX_TIME_SCALE) ??
      file.timeScale ??
      1,
    stalledIntervalMs: duration('stalledInterval', 'FLEET_UPGRADE_STALLED_INTERVAL') ?? 30_000,
    retentionMs: duration('retention', 'FLEET_UPGRADE_RETENTION') ?? DEFAULT_RETENTION_MS,
    dataDir: env.FLEET_UPGRADE_DATA_DIR ?? file.dataDir ?? '.data',
    apiBudget: {
      requestsPerSecond:
        envNumber(env, 'FLEET_UPGRADE_API_REQUESTS_PER_SECOND', issues, (n) => n > 0 && n <= 1000) ??
        file.apiBudget?.requestsPerSecond ??
        4,
      maxConcurrent:
        envNumber(
          env,
          'FLEET_UPGRADE_API_MAX_CONCURRENT',
          issues,
          (n) => Number.isInteger(n) && n >= 1 && n <= 1000,
        ) ??
        file.apiBudget?.maxConcurrent ??
        10,
      share:
        envNumber(env, 'FLEET_UPGRADE_API_SHARE', issues, (n) => n > 0 && n <= 1) ??
        file.apiBudget?.share ??
        DEFAULT_API_SHARE,
    },
    inventory: {
      enabled: envBoolean(env, 'FLEET_UPGRADE_INVENTORY', issues) ?? file.inventory?.enabled ?? true,
      intervalMs:
        boundedDuration(
          env.FLEET_UPGRADE_INVENTORY_INTERVAL,
          'inventory.interval',
          'FLEET_UPGRADE_INVENTORY_INTERVAL',
          issues,
        ) ??
        boundedDuration(file.inventory?.interval, 'inventory.interval', settingsFile, issues) ??
        DEFAULT_INVENTORY_INTERVAL_MS,
      pageEveryMs:
        boundedDuration(
          env.FLEET_UPGRADE_INVENTORY_PAGE_INTERVAL,
          'inventory.pageInterval',
          'FLEET_UPGRADE_INVENTORY_PAGE_INTERVAL',
          issues,
        ) ??
        boundedDuration(file.inventory?.pageInterval, 'inventory.pageInterval', settingsFile, issues) ??
        DEFAULT_INVENTORY_PAGE_EVERY_MS,
    },
    webhooks: [],
    orgs: [],
    audit: {
      maxRecords: file.audit?.maxRecords ?? AUDIT_MAX_RECORDS,
      retentionMs:
        boundedDuration(file.audit?.retention, 'audit.retention', settingsFile, issues) ?? AUDIT_RETENTION_MS,
    },
    authReads:
      flags.authReads ?? envBoolean(env, 'FLEET_UPGRADE_AUTH_READS', issues) ?? file.authReads ?? false,
  };
  if (input.needControl) {
    const control = readControlToken({
      env,
      fileField: file.controlTokenFile,
      settingsFile,
      readFile: readText,
      locate,
    });
    if (control.token) config.controlToken = control.token;
    issues.push(...control.issues);
    if (file.access) {
      const read = readAccess({
        settings: file.access,
        orgNames: file.orgs?.length ? file.orgs.map((o) => o.name) : [DEFAULT_ORG],
        env,
        settingsFile,
        readFile: readText,
        locate,
        ...(control.token ? { controlToken: control.token } : {}),
      });
      config.access = read.plan;
      issues.push(...read.issues);
    }
  }
  if (file.webhooks?.length) {
    const hooks = readWebhooks({ list: file.webhooks, file: settingsFile, env, readFile: readText, locate });
    config.webhooks = hooks.webhooks;
    issues.push(...hooks.issues);
  }
  if (file.notify?.length) {
    const read = readReceivers({
      list: file.notify,
      file: settingsFile,
      env,
      readFile: readText,
      locate,
      ...(file.publicUrl ? { publicUrl: file.publicUrl } : {}),
    });
    // A receiver's name labels its metrics as a webhook's does: the two lists share the names.
    const taken = new Set(config.webhooks.map((w) => w.name));
    file.notify.forEach((r, i) => {
      if (!taken.has(r.name)) return;
      const pos = locate(['notify', i, 'name']);
      issues.push({
        file: settingsFile,
        line: pos?.line,
        column: pos?.column,
        field: `notify[${i}].name`,
        reason: `a webhook is named '${r.name}' too: give each webhook and receiver its own name`,
      });
    });
    config.webhooks.push(...read.webhooks);
    issues.push(...read.issues);
  }
  if (file.orgs?.length) config.orgNames = file.orgs.map((o) => o.name);
  if (input.needApi && file.orgs?.length) {
    // With `orgs`, each organization's settings are its own; the SUMOLOGIC_* variables are not read.
    const read = readOrgs({ list: file.orgs, file: settingsFile, env, readFile: readText, locate });
    config.orgs = read.orgs;
    issues.push(...read.issues);
  } else if (input.needApi) {
    const fromFile: Record<string, string | undefined> = {
      SUMOLOGIC_BASE_URL: file.api?.baseUrl,
      SUMOLOGIC_DEPLOYMENT: file.api?.deployment,
      SUMOLOGIC_ACCESSID: file.api?.accessId,
      SUMOLOGIC_ACCESSKEY_FILE: file.api?.accessKeyFile,
    };
    const merged = { ...fromFile };
    for (const [k, v] of Object.entries(env)) if (v !== undefined && v !== '') merged[k] = v;
    // A base URL from the environment wins over a deployment from the file, and vice versa.
    if (env.SUMOLOGIC_BASE_URL) delete merged.SUMOLOGIC_DEPLOYMENT;
    if (env.SUMOLOGIC_DEPLOYMENT) delete merged.SUMOLOGIC_BASE_URL;
    // The environment's key wins over the file's key file; both in the environment are refused
    // by readApiConfig (ambiguous: which one is meant?).
    if (env.SUMOLOGIC_ACCESSKEY && !env.SUMOLOGIC_ACCESSKEY_FILE) delete merged.SUMOLOGIC_ACCESSKEY_FILE;
    try {
      config.api = readApiConfig(merged);
      config.orgs = [{ name: DEFAULT_ORG, api: config.api }];
    } catch (err) {
      if (err instanceof ConfigError) issues.push(...err.issues);
      else throw err;
    }
  }
  if (issues.length > 0) throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
  return config;
}

/** The Redis the settings name (`redis`, else `redisUrl`), or undefined: a private one. */
export function redisTargetOf(config: Pick<DaemonConfig, 'redis' | 'redisUrl'>): RedisTarget | undefined {
  return config.redis ?? (config.redisUrl ? { kind: 'standalone', url: config.redisUrl } : undefined);
}

/** The organizations the settings name: the file's `orgs`, or the one `default`. */
export function orgNamesOf(config: Pick<DaemonConfig, 'orgNames' | 'orgs'>): string[] {
  if (config.orgNames?.length) return [...config.orgNames];
  return config.orgs.length ? config.orgs.map((o) => o.name) : [DEFAULT_ORG];
}

/**
 * Settings of an in-process orchestrator for rehearsals against the simulator (the demo, the
 * benchmarks, the tests): loopback on any free port, no policy folder, the given Redis and API.
 */
export function rehearsalConfig(
  base: Pick<DaemonConfig, 'redisUrl' | 'keyPrefix' | 'dataDir' | 'timeScale'> & Partial<DaemonConfig>,
): DaemonConfig {
  return {
    listen: { host: '127.0.0.1', port: 0 },
    policyDir: '',
    policyFiles: [],
    logLevel: 'warn',
    workerConcurrency: 20,
    scanIntervalMs: 300_000,
    tickMs: 250,
    stalledIntervalMs: 5000,
    retentionMs: DEFAULT_RETENTION_MS,
    apiBudget: { requestsPerSecond: 4, maxConcurrent: 10, share: DEFAULT_API_SHARE },
    // Off unless asked for: a rehearsal's figures count the rollout's own requests.
    inventory: {
      enabled: false,
      intervalMs: DEFAULT_INVENTORY_INTERVAL_MS,
      pageEveryMs: DEFAULT_INVENTORY_PAGE_EVERY_MS,
    },
    webhooks: [],
    authReads: false,
    audit: DEFAULT_AUDIT_BOUNDS,
    ...base,
    orgs: base.orgs ?? (base.api ? [{ name: DEFAULT_ORG, api: base.api }] : []),
  };
}

/**
 * Upgrade steps at once in one process by default: 20 for each organization (at most 1,000). A
 * step waiting for its organization's API budget holds its worker slot, so with one number for
 * every organization the jobs of one that has many creates to send took every slot, and the
 * others' waited in the queue though their budgets were free: at 10 × 10,000 a job waited 16.5 s
 * for a worker at 20, 0.3–0.4 s at 200 (docs/benchmarks.md, #31).
 */
export function defaultConcurrency(orgs: number): number {
  return Math.min(1000, 20 * Math.max(1, orgs));
}
