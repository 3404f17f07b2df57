/**
 * Settings of `run`, `worker`, `status` and `report`: a pure function of its inputs, with the
 * precedence defaults < config file < environment < flags. The config file is
 * `config/fleet-upgrade.yaml` when it exists (or `--config FILE`); its errors name file, line and
 * field. The API credentials come from the environment (or the file's `api` section), never from
 * flags, so that no secret shows in a process list.
 */
import { existsSync, readFileSync } from 'node:fs';
import { z } from 'zod';
import { type ApiConfig, readApiConfig } from '../../api/index.js';
import type { ControlToken } from '../../http/authorize-request.js';
import { readControlToken } from '../../http/read-control-token.js';
import { formatDuration, parseDuration } from '../../lib/duration.js';
import { ConfigError, FleetError, formatIssue, type SourceIssue } from '../../lib/errors.js';
import { loadSourceFile, locateField } from '../../lib/source/yaml-source.js';
import { readWebhooks, type Webhook } from '../../notify/read-webhooks.js';
import { WebhookListFile } from '../../notify/schema.js';
import { DEFAULT_POLICY_DIR } from '../../policy/load/load-policies.js';
import { DEFAULT_RETENTION_MS } from '../../rollout/index.js';

export const DEFAULT_CONFIG_FILE = 'config/fleet-upgrade.yaml';

/** The largest time scale of a rehearsal (a day in 8.6 s of real time). */
export const MAX_TIME_SCALE = 10_000;

/** Bounds of the settings' durations (a tick of 0 would spin the CPU; an hour-long one, stall). */
export const SETTING_BOUNDS = {
  scanInterval: { min: 10_000, max: 86_400_000 },
  tick: { min: 50, max: 60_000 },
  stalledInterval: { min: 1_000, max: 3_600_000 },
  retention: { min: 3_600_000, max: 3_650 * 86_400_000 },
} as const;

export { DEFAULT_RETENTION_MS } from '../../rollout/index.js';

const duration = z
  .string()
  .refine((t) => parseDuration(t) !== undefined, { message: 'expected a duration like 90s, 10m, 2h' });

export const DaemonConfigFile = z.strictObject({
  redisUrl: z.string().optional(),
  keyPrefix: z.string().optional(),
  listen: z.string().optional(),
  policies: z.string().optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  workerConcurrency: z.number().int().min(1).max(1000).optional(),
  scanInterval: duration.optional(),
  tick: duration.optional(),
  timeScale: z.number().positive().max(MAX_TIME_SCALE).optional(),
  stalledInterval: duration.optional(),
  /** Finished rollouts are removed this long after they finished. Default 30d. */
  retention: duration.optional(),
  dataDir: z.string().optional(),
  apiBudget: z
    .strictObject({
      requestsPerSecond: z.number().positive().max(1000).optional(),
      maxConcurrent: z.number().int().min(1).max(1000).optional(),
    })
    .optional(),
  api: z
    .strictObject({
      baseUrl: z.string().optional(),
      deployment: z.string().optional(),
      accessId: z.string().optional(),
      accessKeyFile: z.string().optional(),
    })
    .optional(),
  /** Webhook notifications of rollout events (src/notify, docs/notifications.md). */
  webhooks: WebhookListFile.optional(),
  /** The HTTP control API's token is read from this file (docs/http-api.md). */
  controlTokenFile: z.string().min(1).optional(),
  controlToken: z
    .never({
      error:
        'an inline token is refused: name a file that holds it (controlTokenFile: PATH) or set FLEET_UPGRADE_CONTROL_TOKEN',
    })
    .optional(),
  /** The HTTP read endpoints need the control token too. */
  authReads: z.boolean().optional(),
});
export type DaemonConfigFile = z.infer<typeof DaemonConfigFile>;

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
  /** Unset: `run` starts a private redis-server. */
  redisUrl?: string;
  keyPrefix: string;
  listen: { host: string; port: number };
  policyDir: string;
  /** `--policy FILE` (repeatable): these instead of the folder. */
  policyFiles: string[];
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
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
  /** This process's share of the API budget (run lowers it to its policies' `api`). */
  apiBudget: { requestsPerSecond: number; maxConcurrent: number };
  /** Undefined when only settings that need no API were asked for (status, report). */
  api?: ApiConfig;
  /** Where `run` sends rollout events (URLs and secrets resolved from the environment or files). */
  webhooks: Webhook[];
  /** The HTTP control API's token (read only when asked: `needControl`); unset: loopback callers only. */
  controlToken?: ControlToken;
  /** The HTTP read endpoints (/status, /rollouts...) need the token (or loopback without one) too. */
  authReads: boolean;
}

export function parseListen(text: string, field: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if ((!m || port > 65535) && field.startsWith('--'))
    // A flag is the command line's: a usage error (exit 64), not the settings' (78).
    throw new FleetError(
      'FLEET_ERR_USAGE',
      `${field}: expected HOST:PORT such as 127.0.0.1:9464, got '${text}'`,
    );
  if (!m || port > 65535) {
    throw new ConfigError(`${field}: expected HOST:PORT such as 127.0.0.1:9464, got '${text}'`, [
      { file: field, field: 'listen', reason: 'expected HOST:PORT' },
    ]);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}

function envNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  issues: SourceIssue[],
  check: (n: number) => boolean,
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || !check(n)) {
    issues.push({ file: 'environment', field: name, reason: `invalid value '${raw}'` });
    return undefined;
  }
  return n;
}

function envBoolean(env: NodeJS.ProcessEnv, name: string, issues: SourceIssue[]): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  issues.push({ file: 'environment', field: name, reason: `expected true or false, got '${env[name]}'` });
  return undefined;
}

/**
 * A setting's duration (`raw` as written) within its bounds, or an issue that names where it
 * came from and the bounds.
 */
function bounded(
  raw: string | undefined,
  setting: keyof typeof SETTING_BOUNDS,
  where: string,
  issues: SourceIssue[],
): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = parseDuration(raw);
  const { min, max } = SETTING_BOUNDS[setting];
  if (value !== undefined && Number.isFinite(value) && value >= min && value <= max) return value;
  issues.push({
    file: where,
    field: where.startsWith('FLEET_UPGRADE_') ? where : setting,
    reason:
      value === undefined
        ? `expected a duration like 90s, got '${raw}'`
        : `must be between ${formatDuration(min)} and ${formatDuration(max)}, got '${raw}'`,
  });
  return undefined;
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
  const issues: SourceIssue[] = [];

  const listenText = flags.listen ?? env.FLEET_UPGRADE_LISTEN ?? file.listen ?? '127.0.0.1:9464';
  const logLevel = (flags.logLevel ?? env.LOG_LEVEL ?? file.logLevel ?? 'info') as DaemonConfig['logLevel'];
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    issues.push({ file: 'environment', field: 'LOG_LEVEL', reason: `unknown level '${logLevel}'` });
  }
  const config: DaemonConfig = {
    redisUrl: env.REDIS_URL || file.redisUrl || undefined,
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
      20,
    scanIntervalMs:
      bounded(env.FLEET_UPGRADE_SCAN_INTERVAL, 'scanInterval', 'FLEET_UPGRADE_SCAN_INTERVAL', issues) ??
      bounded(file.scanInterval, 'scanInterval', configFile ?? 'settings', issues) ??
      300_000,
    tickMs:
      bounded(env.FLEET_UPGRADE_TICK, 'tick', 'FLEET_UPGRADE_TICK', issues) ??
      bounded(file.tick, 'tick', configFile ?? 'settings', issues) ??
      2_000,
    timeScale:
      flags.timeScale ??
      envNumber(env, 'FLEET_UPGRADE_TIME_SCALE', issues, (n) => n > 0 && n <= MAX_TIME_SCALE) ??
      file.timeScale ??
      1,
    stalledIntervalMs:
      bounded(
        env.FLEET_UPGRADE_STALLED_INTERVAL,
        'stalledInterval',
        'FLEET_UPGRADE_STALLED_INTERVAL',
        issues,
      ) ??
      bounded(file.stalledInterval, 'stalledInterval', configFile ?? 'settings', issues) ??
      30_000,
    retentionMs:
      bounded(env.FLEET_UPGRADE_RETENTION, 'retention', 'FLEET_UPGRADE_RETENTION', issues) ??
      bounded(file.retention, 'retention', configFile ?? 'settings', issues) ??
      DEFAULT_RETENTION_MS,
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
    },
    webhooks: [],
    authReads:
      flags.authReads ?? envBoolean(env, 'FLEET_UPGRADE_AUTH_READS', issues) ?? file.authReads ?? false,
  };
  if (input.needControl) {
    const readText = input.readText ?? ((f: string) => readFileSync(f, 'utf8'));
    const settingsFile = configFile ?? 'settings';
    const control = readControlToken({
      env,
      fileField: file.controlTokenFile,
      settingsFile,
      readFile: readText,
      locate: (path) => {
        try {
          return locateField(readText(settingsFile), path);
        } catch {
          return undefined;
        }
      },
    });
    if (control.token) config.controlToken = control.token;
    issues.push(...control.issues);
  }
  if (file.webhooks?.length) {
    const readText = input.readText ?? ((f: string) => readFileSync(f, 'utf8'));
    const settingsFile = configFile ?? 'settings';
    const hooks = readWebhooks({
      list: file.webhooks,
      file: settingsFile,
      env,
      readFile: readText,
      locate: (path) => {
        try {
          return locateField(readText(settingsFile), path);
        } catch {
          return undefined;
        }
      },
    });
    config.webhooks = hooks.webhooks;
    issues.push(...hooks.issues);
  }
  if (input.needApi) {
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
    } catch (err) {
      if (err instanceof ConfigError) issues.push(...err.issues);
      else throw err;
    }
  }
  if (issues.length > 0) throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
  return config;
}

/**
 * Settings of an in-process orchestrator for rehearsals against the simulator (the demo, the
 * benchmarks, the tests): loopback on any free port, no policy folder, the given Redis and API.
 */
export function rehearsalConfig(
  base: Pick<DaemonConfig, 'redisUrl' | 'keyPrefix' | 'dataDir' | 'timeScale' | 'api'> &
    Partial<DaemonConfig>,
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
    apiBudget: { requestsPerSecond: 4, maxConcurrent: 10 },
    webhooks: [],
    authReads: false,
    ...base,
  };
}
