/**
 * Which Redis the deployment uses, from the environment and the settings file (environment
 * first): one server (`REDIS_URL`, `redisUrl`), a primary behind Sentinel (`REDIS_SENTINELS` +
 * `REDIS_SENTINEL_NAME`, `redis.sentinels` + `redis.sentinelName`), or a Cluster
 * (`REDIS_CLUSTER_NODES`, `redis.clusterNodes`). The source that names a topology decides it
 * whole: a topology from the environment replaces the file's; two topologies in one source are
 * refused. The password comes from `REDIS_PASSWORD` or a file (`REDIS_PASSWORD_FILE`,
 * `redis.passwordFile`), never from the settings file itself, and never appears in a message.
 * Also `redis.minReplicasForCreate` (`FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE`) and the time limit
 * of that WAIT (`redis.waitTimeout`), and how long a daemon goes on without Redis
 * (`redis.giveUpAfter`, `FLEET_UPGRADE_REDIS_GIVE_UP_AFTER`). Pure: every problem is returned, naming its field.
 */
import { formatDuration, parseDuration } from '../../lib/duration.js';
import type { SourceIssue } from '../../lib/errors.js';
import { type HostPort, parseHostPorts, type RedisTarget } from '../../lib/redis/redis-target.js';
import { formatFieldPath } from '../../lib/source/yaml-source.js';
import type { DaemonConfigFile } from './schema.js';

export interface RedisSettings {
  /** Undefined: none named (`run` starts a private redis-server). */
  target?: RedisTarget;
  /** Replicas a create's pre-write waits for; undefined: follows the topology (replica-wait.ts). */
  minReplicasForCreate?: number;
  /** WAIT's time limit, real ms. */
  waitTimeoutMs: number;
  /** Real ms a daemon process goes on without Redis before it exits for a supervisor to restart it. */
  giveUpAfterMs: number;
}

export const DEFAULT_GIVE_UP_AFTER_MS = 5 * 60_000;
const GIVE_UP_BOUNDS = { min: 10_000, max: 24 * 3_600_000 };

export const DEFAULT_WAIT_TIMEOUT_MS = 1000;
const WAIT_BOUNDS = { min: 10, max: 60_000 };
const MAX_REPLICAS = 16;

export function readRedisSettings(input: {
  env: Readonly<Record<string, string | undefined>>;
  file: Pick<DaemonConfigFile, 'redisUrl' | 'redis'>;
  settingsFile: string;
  readFile: (path: string) => string;
  locate?: (path: readonly PropertyKey[]) => { line: number; column: number } | undefined;
}): RedisSettings & { issues: SourceIssue[] } {
  const { env, file, settingsFile } = input;
  const issues: SourceIssue[] = [];
  const fromEnv = (name: string, reason: string) => issues.push({ file: 'environment', field: name, reason });
  const fromFile = (path: (string | number)[], reason: string) => {
    const pos = input.locate?.(path);
    issues.push({
      file: settingsFile,
      line: pos?.line,
      column: pos?.column,
      field: formatFieldPath(path),
      reason,
    });
  };
  const set = (name: string) => (env[name]?.trim() ?? '') !== '';
  const r = file.redis ?? {};

  // The environment decides the topology when it names one; else the file.
  const envNames = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'].filter(set);
  const fileNames = [
    ...(file.redisUrl ? ['redisUrl'] : []),
    ...(r.sentinels !== undefined ? ['redis.sentinels'] : []),
    ...(r.clusterNodes !== undefined ? ['redis.clusterNodes'] : []),
  ];
  let target: RedisTarget | undefined;
  const hostPorts = (raw: string | string[], bad: (reason: string) => void): HostPort[] | undefined => {
    const parsed = parseHostPorts(Array.isArray(raw) ? raw.join(',') : raw);
    if (parsed.ok) return parsed.list;
    bad(parsed.reason);
    return undefined;
  };
  if (envNames.length > 1) {
    fromEnv(
      envNames[0] as string,
      `and ${envNames.slice(1).join(' and ')} are both set; set only one of them`,
    );
  } else if (envNames.length === 1) {
    const name = envNames[0] as string;
    const raw = (env[name] as string).trim();
    if (name === 'REDIS_URL') target = { kind: 'standalone', url: raw };
    else if (name === 'REDIS_CLUSTER_NODES') {
      const nodes = hostPorts(raw, (reason) => fromEnv(name, reason));
      if (nodes) target = { kind: 'cluster', nodes };
    } else {
      const sentinels = hostPorts(raw, (reason) => fromEnv(name, reason));
      const master = env.REDIS_SENTINEL_NAME?.trim() || r.sentinelName?.trim();
      if (!master)
        fromEnv(
          'REDIS_SENTINEL_NAME',
          'is not set: the name of the primary the sentinels monitor (e.g. mymaster)',
        );
      if (sentinels && master) target = { kind: 'sentinel', sentinels, name: master };
    }
  } else if (fileNames.length > 1) {
    const [first, ...rest] = fileNames as [string, ...string[]];
    fromFile(first.split('.'), `and ${rest.join(' and ')} are both set; set only one of them`);
  } else if (fileNames[0] === 'redisUrl') {
    target = { kind: 'standalone', url: (file.redisUrl as string).trim() };
  } else if (fileNames[0] === 'redis.clusterNodes') {
    const nodes = hostPorts(r.clusterNodes as string | string[], (reason) =>
      fromFile(['redis', 'clusterNodes'], reason),
    );
    if (nodes) target = { kind: 'cluster', nodes };
  } else if (fileNames[0] === 'redis.sentinels') {
    const sentinels = hostPorts(r.sentinels as string | string[], (reason) =>
      fromFile(['redis', 'sentinels'], reason),
    );
    const master = env.REDIS_SENTINEL_NAME?.trim() || r.sentinelName?.trim();
    if (!master)
      fromFile(
        ['redis', 'sentinelName'],
        'is not set: the name of the primary the sentinels monitor (e.g. mymaster)',
      );
    if (sentinels && master) target = { kind: 'sentinel', sentinels, name: master };
  }
  if (target?.kind === 'standalone' && !/^rediss?:\/\//.test(target.url)) {
    const reason = `expected a redis:// or rediss:// URL, got '${target.url.replace(/\/\/[^@/]*@/, '//')}'`;
    if (set('REDIS_URL')) fromEnv('REDIS_URL', reason);
    else fromFile(['redisUrl'], reason);
    target = undefined;
  }

  // Credentials: each from the environment, or from a file the environment or the settings name.
  const secret = (
    variable: string,
    fileField: 'passwordFile' | 'sentinelPasswordFile',
  ): string | undefined => {
    const inline = env[variable];
    const fileVar = `${variable}_FILE`;
    const path = env[fileVar]?.trim() || r[fileField]?.trim();
    const bad = (reason: string) =>
      env[fileVar]?.trim() ? fromEnv(fileVar, reason) : fromFile(['redis', fileField], reason);
    if (inline && env[fileVar]?.trim()) {
      fromEnv(variable, `and ${fileVar} are both set; set only one of them`);
      return undefined;
    }
    if (inline) return inline;
    if (!path) return undefined;
    let text: string;
    try {
      text = input.readFile(path);
    } catch (err) {
      bad(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      return undefined;
    }
    // A mounted secret usually ends in a newline.
    const value = text.replace(/\r?\n$/, '');
    if (!value) bad(`${path} is empty`);
    else if (/[\r\n]/.test(value)) bad(`${path} holds more than one line`);
    else return value;
    return undefined;
  };
  const password = secret('REDIS_PASSWORD', 'passwordFile');
  const sentinelPassword = secret('REDIS_SENTINEL_PASSWORD', 'sentinelPasswordFile');
  const username = env.REDIS_USERNAME?.trim() || r.username?.trim();
  if (target) {
    if (target.kind === 'standalone' && password && /^rediss?:\/\/[^/@]*:[^/@]+@/.test(target.url)) {
      const reason =
        'holds a password and REDIS_PASSWORD (or a password file) is set too; keep only one of them';
      if (set('REDIS_URL')) fromEnv('REDIS_URL', reason);
      else fromFile(['redisUrl'], reason);
    }
    if (password) target.password = password;
    if (username) target.username = username;
    if (sentinelPassword && target.kind === 'sentinel') target.sentinelPassword = sentinelPassword;
  }

  let minReplicasForCreate: number | undefined;
  const rawMin = env.FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE?.trim();
  if (rawMin) {
    const n = Number(rawMin);
    if (Number.isInteger(n) && n >= 0 && n <= MAX_REPLICAS) minReplicasForCreate = n;
    else
      fromEnv(
        'FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE',
        `expected a whole number from 0 to ${MAX_REPLICAS}, got '${rawMin}'`,
      );
  } else if (r.minReplicasForCreate !== undefined) minReplicasForCreate = r.minReplicasForCreate;

  let waitTimeoutMs = DEFAULT_WAIT_TIMEOUT_MS;
  if (r.waitTimeout !== undefined) {
    const ms = parseDuration(r.waitTimeout);
    if (ms !== undefined && ms >= WAIT_BOUNDS.min && ms <= WAIT_BOUNDS.max) waitTimeoutMs = ms;
    else
      fromFile(
        ['redis', 'waitTimeout'],
        `must be a duration between ${formatDuration(WAIT_BOUNDS.min)} and ${formatDuration(WAIT_BOUNDS.max)}, got '${r.waitTimeout}'`,
      );
  }
  let giveUpAfterMs = DEFAULT_GIVE_UP_AFTER_MS;
  const rawGiveUp = env.FLEET_UPGRADE_REDIS_GIVE_UP_AFTER?.trim() || undefined;
  const giveUpText = rawGiveUp ?? r.giveUpAfter;
  if (giveUpText !== undefined) {
    const ms = parseDuration(giveUpText);
    const reason = `must be a duration between ${formatDuration(GIVE_UP_BOUNDS.min)} and ${formatDuration(GIVE_UP_BOUNDS.max)}, got '${giveUpText}'`;
    if (ms !== undefined && ms >= GIVE_UP_BOUNDS.min && ms <= GIVE_UP_BOUNDS.max) giveUpAfterMs = ms;
    else if (rawGiveUp !== undefined) fromEnv('FLEET_UPGRADE_REDIS_GIVE_UP_AFTER', reason);
    else fromFile(['redis', 'giveUpAfter'], reason);
  }
  return {
    ...(target ? { target } : {}),
    ...(minReplicasForCreate === undefined ? {} : { minReplicasForCreate }),
    waitTimeoutMs,
    giveUpAfterMs,
    issues,
  };
}
