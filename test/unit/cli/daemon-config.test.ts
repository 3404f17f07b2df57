/**
 * Daemon settings as a pure function of env, flags and the config file: precedence
 * defaults < file < env < flags, errors that name the variable or the file's field (and line),
 * HOST:PORT parsing, and the API settings from the environment or the file's `api` section.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_CONFIG_FILE,
  type LoadDaemonConfigInput,
  loadDaemonConfig,
} from '../../../src/cli/boot/daemon-config.js';
import { parseListen } from '../../../src/cli/boot/parse-listen.js';
import type { DaemonConfigFile } from '../../../src/cli/boot/schema.js';
import { ConfigError, FleetError } from '../../../src/lib/errors.js';
import { DEFAULT_POLICY_DIR } from '../../../src/policy/load/load-policies.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'daemon-config-'));
  dirs.push(d);
  return d;
}

const API_ENV = {
  SUMOLOGIC_ACCESSID: 'ops',
  SUMOLOGIC_ACCESSKEY: 'ops-secret',
  SUMOLOGIC_BASE_URL: 'http://127.0.0.1:9999/api/v1',
};

/** Loads with an in-memory config file (or none), never touching the disk. */
function load(
  env: NodeJS.ProcessEnv,
  options: Partial<LoadDaemonConfigInput> & { file?: DaemonConfigFile } = {},
) {
  const { file, ...rest } = options;
  const read: string[] = [];
  const config = loadDaemonConfig({
    env,
    flags: {},
    needApi: false,
    fileExists: (f) => file !== undefined && f === DEFAULT_CONFIG_FILE,
    readFile: (f) => {
      read.push(f);
      return file ?? {};
    },
    ...rest,
  });
  return { config, read };
}

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

describe('loadDaemonConfig: defaults', () => {
  it('has the documented defaults with no file, no env and no flags', () => {
    const { config, read } = load({});
    expect(read).toEqual([]);
    expect(config).toEqual({
      redisUrl: undefined,
      replicaWaitMs: 1000,
      redisGiveUpAfterMs: 300_000,
      keyPrefix: '',
      listen: { host: '127.0.0.1', port: 9464 },
      policyDir: DEFAULT_POLICY_DIR,
      policyFiles: [],
      logLevel: 'info',
      workerConcurrency: 20,
      scanIntervalMs: 300_000,
      tickMs: 2_000,
      timeScale: 1,
      stalledIntervalMs: 30_000,
      retentionMs: 30 * 86_400_000,
      dataDir: '.data',
      apiBudget: { requestsPerSecond: 4, maxConcurrent: 10, share: 0.8 },
      inventory: { enabled: true, intervalMs: 900_000, pageEveryMs: 5_000 },
      webhooks: [],
      orgs: [],
      audit: { maxRecords: 1_000_000, retentionMs: 400 * 86_400_000 },
      authReads: false,
    });
  });
});

describe('loadDaemonConfig: the worker concurrency by organizations', () => {
  it('runs 20 steps at once per organization by default (at most 1,000), unless set', () => {
    const orgs = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `org-${i}`, accessId: 'id', accessKeyEnv: `KEY_${i}` }));
    const withOrgs = (n: number, more: DaemonConfigFile = {}) =>
      load({}, { file: { ...more, orgs: orgs(n) } }).config.workerConcurrency;
    expect(withOrgs(1)).toBe(20);
    expect(withOrgs(10)).toBe(200);
    expect(withOrgs(60)).toBe(1000);
    expect(withOrgs(10, { workerConcurrency: 30 })).toBe(30);
    expect(
      load({ FLEET_UPGRADE_CONCURRENCY: '7' }, { file: { orgs: orgs(10) } }).config.workerConcurrency,
    ).toBe(7);
  });
});

describe('loadDaemonConfig: precedence defaults < file < env < flags', () => {
  const file: DaemonConfigFile = {
    redisUrl: 'redis://file:6379',
    keyPrefix: 'file:',
    listen: '0.0.0.0:1111',
    policies: 'file/policies',
    logLevel: 'warn',
    workerConcurrency: 5,
    scanInterval: '90s',
    tick: '3s',
    timeScale: 10,
    stalledInterval: '1m',
    dataDir: '/var/lib/file',
    apiBudget: { requestsPerSecond: 2, maxConcurrent: 3, share: 0.9 },
  };
  const env = {
    REDIS_URL: 'redis://env:6379',
    FLEET_UPGRADE_KEY_PREFIX: 'env:',
    FLEET_UPGRADE_LISTEN: '127.0.0.1:2222',
    FLEET_UPGRADE_POLICIES: 'env/policies',
    LOG_LEVEL: 'debug',
    FLEET_UPGRADE_CONCURRENCY: '7',
    FLEET_UPGRADE_SCAN_INTERVAL: '2m',
    FLEET_UPGRADE_TICK: '500ms',
    FLEET_UPGRADE_TIME_SCALE: '60',
    FLEET_UPGRADE_STALLED_INTERVAL: '45s',
    FLEET_UPGRADE_DATA_DIR: '/tmp/env-data',
    FLEET_UPGRADE_API_REQUESTS_PER_SECOND: '3.5',
    FLEET_UPGRADE_API_MAX_CONCURRENT: '6',
    FLEET_UPGRADE_API_SHARE: '0.5',
  };

  it('takes the file over the defaults', () => {
    const { config, read } = load({}, { file });
    expect(read).toEqual([DEFAULT_CONFIG_FILE]);
    expect(config).toMatchObject({
      redisUrl: 'redis://file:6379',
      keyPrefix: 'file:',
      listen: { host: '0.0.0.0', port: 1111 },
      policyDir: 'file/policies',
      logLevel: 'warn',
      workerConcurrency: 5,
      scanIntervalMs: 90_000,
      tickMs: 3_000,
      timeScale: 10,
      stalledIntervalMs: 60_000,
      dataDir: '/var/lib/file',
      apiBudget: { requestsPerSecond: 2, maxConcurrent: 3, share: 0.9 },
    });
  });

  it('takes the environment over the file', () => {
    const { config } = load(env, { file });
    expect(config).toMatchObject({
      redisUrl: 'redis://env:6379',
      keyPrefix: 'env:',
      listen: { host: '127.0.0.1', port: 2222 },
      policyDir: 'env/policies',
      logLevel: 'debug',
      workerConcurrency: 7,
      scanIntervalMs: 120_000,
      tickMs: 500,
      timeScale: 60,
      stalledIntervalMs: 45_000,
      dataDir: '/tmp/env-data',
      apiBudget: { requestsPerSecond: 3.5, maxConcurrent: 6, share: 0.5 },
    });
  });

  it('takes the flags over the environment', () => {
    const { config } = load(env, {
      file,
      flags: {
        listen: '[::1]:3333',
        policies: 'flag/policies',
        policy: ['a.yaml', 'b.yaml'],
        logLevel: 'error',
        concurrency: 9,
        timeScale: 120,
      },
    });
    expect(config).toMatchObject({
      listen: { host: '::1', port: 3333 },
      policyDir: 'flag/policies',
      policyFiles: ['a.yaml', 'b.yaml'],
      logLevel: 'error',
      workerConcurrency: 9,
      timeScale: 120,
      // No flag for these: the environment's.
      redisUrl: 'redis://env:6379',
      scanIntervalMs: 120_000,
    });
  });

  it('treats empty environment variables as unset', () => {
    const { config } = load(
      { REDIS_URL: '', FLEET_UPGRADE_CONCURRENCY: '', FLEET_UPGRADE_TICK: '', FLEET_UPGRADE_TIME_SCALE: '' },
      { file },
    );
    expect(config).toMatchObject({
      redisUrl: 'redis://file:6379',
      workerConcurrency: 5,
      tickMs: 3_000,
      timeScale: 10,
    });
  });
});

describe('loadDaemonConfig: which config file', () => {
  it('reads --config, then FLEET_UPGRADE_CONFIG, then the default file when it exists', () => {
    expect(load({ FLEET_UPGRADE_CONFIG: 'env.yaml' }, { flags: { config: 'flag.yaml' } }).read).toEqual([
      'flag.yaml',
    ]);
    expect(load({ FLEET_UPGRADE_CONFIG: 'env.yaml' }, { file: {} }).read).toEqual(['env.yaml']);
    expect(load({}, { file: {} }).read).toEqual([DEFAULT_CONFIG_FILE]);
    expect(load({}).read).toEqual([]);
  });

  it('reports a missing --config file by name', () => {
    const missing = join(tempDir(), 'nope.yaml');
    const err = configError(() =>
      loadDaemonConfig({ env: {}, flags: { config: missing }, needApi: false, fileExists: () => false }),
    );
    expect(err.message).toContain(missing);
    expect(err.message).toMatch(/file not found/);
  });

  it('reads a real YAML file; an unknown or invalid field is named with its file and line', () => {
    const dir = tempDir();
    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'listen: 0.0.0.0:9000\nworkerConcurrency: 4\nscanInterval: 10m\n');
    const config = loadDaemonConfig({ env: {}, flags: { config: good }, needApi: false });
    expect(config).toMatchObject({
      listen: { host: '0.0.0.0', port: 9000 },
      workerConcurrency: 4,
      scanIntervalMs: 600_000,
    });

    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'listen: 0.0.0.0:9000\nworkerConcurency: 4\nscanInterval: soon\n');
    const err = configError(() => loadDaemonConfig({ env: {}, flags: { config: bad }, needApi: false }));
    expect(err.message).toContain(
      `${bad}:2:1: workerConcurency: unknown field (did you mean "workerConcurrency"?)`,
    );
    expect(err.message).toMatch(
      new RegExp(`${bad.replace(/[.]/g, '\\.')}:3:\\d+: scanInterval: expected a duration`),
    );
  });
});

describe('loadDaemonConfig: errors name the variable', () => {
  it.each([
    ['FLEET_UPGRADE_CONCURRENCY', 'many'],
    ['FLEET_UPGRADE_CONCURRENCY', '0'],
    ['FLEET_UPGRADE_CONCURRENCY', '2.5'],
    ['FLEET_UPGRADE_TIME_SCALE', '-1'],
    ['FLEET_UPGRADE_TIME_SCALE', 'fast'],
    ['FLEET_UPGRADE_SCAN_INTERVAL', 'often'],
    ['FLEET_UPGRADE_TICK', '5 parsecs'],
    ['FLEET_UPGRADE_STALLED_INTERVAL', '-3s'],
    // A tick of nothing would spin the CPU; an endless one never ticks.
    ['FLEET_UPGRADE_TICK', '0s'],
    ['FLEET_UPGRADE_TICK', '2h'],
    ['FLEET_UPGRADE_STALLED_INTERVAL', '0s'],
    ['FLEET_UPGRADE_SCAN_INTERVAL', '1s'],
    ['FLEET_UPGRADE_SCAN_INTERVAL', `${'9'.repeat(400)}d`],
    ['FLEET_UPGRADE_RETENTION', '10m'],
    ['FLEET_UPGRADE_RETENTION', 'forever'],
    ['FLEET_UPGRADE_TIME_SCALE', '1e9'],
    ['LOG_LEVEL', 'loud'],
    ['FLEET_UPGRADE_LISTEN', 'localhost'],
    ['FLEET_UPGRADE_API_REQUESTS_PER_SECOND', '0'],
    ['FLEET_UPGRADE_API_REQUESTS_PER_SECOND', 'lots'],
    ['FLEET_UPGRADE_API_MAX_CONCURRENT', '1.5'],
    ['FLEET_UPGRADE_API_MAX_CONCURRENT', '1001'],
    ['FLEET_UPGRADE_API_SHARE', '0'],
    ['FLEET_UPGRADE_API_SHARE', '1.2'],
    ['FLEET_UPGRADE_API_SHARE', 'most'],
  ])('%s=%s', (name, value) => {
    const err = configError(() => load({ [name]: value }));
    expect(err.code).toBe('FLEET_ERR_CONFIG');
    expect(err.message).toContain(name);
    expect(err.message).toContain(value);
  });

  it('reports every bad variable at once', () => {
    const err = configError(() =>
      load({ FLEET_UPGRADE_CONCURRENCY: 'x', FLEET_UPGRADE_TICK: 'y', FLEET_UPGRADE_TIME_SCALE: 'z' }),
    );
    expect(err.issues.map((i) => i.field).sort()).toEqual([
      'FLEET_UPGRADE_CONCURRENCY',
      'FLEET_UPGRADE_TICK',
      'FLEET_UPGRADE_TIME_SCALE',
    ]);
  });

  it('names --listen for a bad flag, as a usage error (exit 64), not a settings error', () => {
    let thrown: unknown;
    try {
      load({}, { flags: { listen: 'nowhere' } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(FleetError);
    expect(thrown).not.toBeInstanceOf(ConfigError);
    expect((thrown as FleetError).code).toBe('FLEET_ERR_USAGE');
    expect((thrown as FleetError).message).toMatch(/^--listen: /);
  });

  it('names the settings file and the bounds for a duration out of them', () => {
    const err = configError(() => load({}, { file: { tick: '0s', retention: '1d' } }));
    expect(err.issues.map((i) => i.field).sort()).toEqual(['tick']);
    expect(err.message).toMatch(/tick.*must be between 50ms and 1m, got '0s'/);
    expect(load({}, { file: { retention: '90d' } }).config.retentionMs).toBe(90 * 86_400_000);
  });

  // Regression test (fixed) (src/cli/boot/daemon-config.ts, parseListen called with the config file's name as `field`): a
  // bad `listen` in the config file gives "config/fleet-upgrade.yaml: expected HOST:PORT ...",
  // which names neither the field (`listen`) nor its line, unlike every other field of the file.
  it('names the field `listen` for a bad value in the config file', () => {
    const err = configError(() => load({}, { file: { listen: 'nowhere' } }));
    expect(err.message).toContain(DEFAULT_CONFIG_FILE);
    expect(err.message).toMatch(/\blisten\b/);
  });

  // Regression test (fixed) (src/cli/boot/daemon-config.ts, envNumber check for FLEET_UPGRADE_CONCURRENCY): the file
  // (`workerConcurrency`, max 1000) and the flag (`--concurrency`, 1..1000) refuse more than 1000,
  // the environment takes any integer.
  it('refuses FLEET_UPGRADE_CONCURRENCY above 1000, as the file and the flag do', () => {
    const err = configError(() => load({ FLEET_UPGRADE_CONCURRENCY: '5000' }));
    expect(err.message).toContain('FLEET_UPGRADE_CONCURRENCY');
  });
});

describe('parseListen', () => {
  it.each([
    ['127.0.0.1:9464', '127.0.0.1', 9464],
    ['0.0.0.0:0', '0.0.0.0', 0],
    ['localhost:80', 'localhost', 80],
    ['[::1]:9464', '::1', 9464],
    ['[::]:65535', '::', 65535],
    [' 127.0.0.1:9464 ', '127.0.0.1', 9464],
  ])('%s', (text, host, port) => {
    expect(parseListen(text, '--listen')).toEqual({ host, port });
  });

  it.each(['9464', ':9464', '127.0.0.1', '127.0.0.1:65536', '127.0.0.1:port', '::1:9464', 'a:b:1', ''])(
    'refuses %j, naming where it came from',
    (text) => {
      const err = configError(() => parseListen(text, 'FLEET_UPGRADE_LISTEN'));
      expect(err.message).toMatch(/^FLEET_UPGRADE_LISTEN: expected HOST:PORT/);
      expect(err.message).toContain(`'${text}'`);
    },
  );
});

describe('loadDaemonConfig: API settings', () => {
  it('are left out (and not required) when the command needs no API', () => {
    expect(load({}).config.api).toBeUndefined();
    expect(load(API_ENV).config.api).toBeUndefined();
  });

  it('come from the environment', () => {
    const { config } = load(API_ENV, { needApi: true });
    expect(config.api).toEqual({
      baseUrl: 'http://127.0.0.1:9999/api/v1',
      accessId: 'ops',
      accessKey: 'ops-secret',
    });
  });

  it('name every missing variable when required', () => {
    const err = configError(() => load({}, { needApi: true }));
    const fields = err.issues.map((i) => i.field);
    expect(fields).toEqual(
      expect.arrayContaining(['SUMOLOGIC_ACCESSID', 'SUMOLOGIC_ACCESSKEY', 'SUMOLOGIC_BASE_URL']),
    );
    expect(err.message).toContain('SUMOLOGIC_ACCESSID');
  });

  it('are collected with the other problems', () => {
    const err = configError(() => load({ FLEET_UPGRADE_TICK: 'never' }, { needApi: true }));
    const fields = err.issues.map((i) => i.field);
    expect(fields).toContain('FLEET_UPGRADE_TICK');
    expect(fields).toContain('SUMOLOGIC_ACCESSID');
  });

  it('come from the file’s api section, the key from a file', () => {
    const keyFile = join(tempDir(), 'key');
    writeFileSync(keyFile, 'file-secret\n');
    const file: DaemonConfigFile = { api: { deployment: 'eu', accessId: 'file-id', accessKeyFile: keyFile } };
    const { config } = load({}, { file, needApi: true });
    expect(config.api).toEqual({
      baseUrl: 'https://api.eu.sumologic.com/api/v1',
      accessId: 'file-id',
      accessKey: 'file-secret',
    });
  });

  it('the environment wins over the file, field by field, without a conflict', () => {
    const keyFile = join(tempDir(), 'key');
    writeFileSync(keyFile, 'file-secret\n');
    const file: DaemonConfigFile = {
      api: { deployment: 'eu', accessId: 'file-id', accessKeyFile: keyFile },
    };
    const { config } = load(API_ENV, { file, needApi: true });
    expect(config.api).toEqual({
      baseUrl: 'http://127.0.0.1:9999/api/v1',
      accessId: 'ops',
      accessKey: 'ops-secret',
    });

    const other = load(
      { SUMOLOGIC_DEPLOYMENT: 'au', SUMOLOGIC_ACCESSKEY: 'env-secret' },
      {
        file: { api: { baseUrl: 'https://example.test/api', accessId: 'file-id', accessKeyFile: keyFile } },
        needApi: true,
      },
    );
    expect(other.config.api).toEqual({
      baseUrl: 'https://api.au.sumologic.com/api/v1',
      accessId: 'file-id',
      accessKey: 'env-secret',
    });
  });

  it('refuses SUMOLOGIC_ACCESSKEY and SUMOLOGIC_ACCESSKEY_FILE both set in the environment', () => {
    const err = configError(() =>
      load({ ...API_ENV, SUMOLOGIC_ACCESSKEY_FILE: '/run/secrets/key' }, { needApi: true }),
    );
    expect(err.message).toMatch(/SUMOLOGIC_ACCESSKEY: and SUMOLOGIC_ACCESSKEY_FILE are both set/);
    expect(err.message).not.toContain('ops-secret');
  });

  it('never puts the access key in an error message', () => {
    const err = configError(() =>
      load({ ...API_ENV, SUMOLOGIC_BASE_URL: 'not a url', FLEET_UPGRADE_TICK: 'x' }, { needApi: true }),
    );
    expect(err.message).not.toContain('ops-secret');
    expect(err.message).toContain('SUMOLOGIC_BASE_URL');
  });
});

describe('loadDaemonConfig: the inventory (inventory.enabled, .interval, .pageInterval)', () => {
  it('from the file, the environment winning; FLEET_UPGRADE_INVENTORY=false turns it off', () => {
    const file: DaemonConfigFile = { inventory: { interval: '30m', pageInterval: '2s' } };
    expect(load({}, { file }).config.inventory).toEqual({
      enabled: true,
      intervalMs: 1_800_000,
      pageEveryMs: 2_000,
    });
    expect(
      load(
        {
          FLEET_UPGRADE_INVENTORY: 'false',
          FLEET_UPGRADE_INVENTORY_INTERVAL: '1h',
          FLEET_UPGRADE_INVENTORY_PAGE_INTERVAL: '10s',
        },
        { file },
      ).config.inventory,
    ).toEqual({ enabled: false, intervalMs: 3_600_000, pageEveryMs: 10_000 });
    expect(load({}, { file: { inventory: { enabled: false } } }).config.inventory.enabled).toBe(false);
  });

  it('refuses durations outside their bounds, naming the variable or the field and the bounds', () => {
    const env = configError(() => load({ FLEET_UPGRADE_INVENTORY_INTERVAL: '10s' }));
    expect(env.message).toContain('FLEET_UPGRADE_INVENTORY_INTERVAL');
    expect(env.message).toMatch(/between 1m0s and 24h|between 1m and 24h/);
    const file = configError(() => load({}, { file: { inventory: { pageInterval: '1h' } } }));
    expect(file.message).toContain('inventory.pageInterval');
    const flag = configError(() => load({ FLEET_UPGRADE_INVENTORY: 'maybe' }));
    expect(flag.message).toContain('FLEET_UPGRADE_INVENTORY');
  });
});
