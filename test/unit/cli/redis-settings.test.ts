/**
 * The deployment's Redis from the environment and the settings file (read-redis-settings.ts,
 * through loadDaemonConfig): one server, Sentinel or Cluster; the topology named by the
 * environment wins whole over the file's; two in one source, a Sentinel without its name, a
 * malformed host:port list, an inline password, both a password and its file: refused with the
 * field named. The password (from REDIS_PASSWORD or a file) reaches the target and never a message.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG_FILE, loadDaemonConfig, redisTargetOf } from '../../../src/cli/boot/daemon-config.js';
import { DaemonConfigFile } from '../../../src/cli/boot/schema.js';
import { ConfigError } from '../../../src/lib/errors.js';
import { describeRedis, parseHostPorts } from '../../../src/lib/redis/redis-target.js';

const SECRET = 's3cret-Redis-pass';
const FILES: Record<string, string> = {
  '/run/secrets/redis': `${SECRET}\n`,
  '/run/secrets/sentinel': 'sentinel-pass\n',
  '/run/secrets/empty': '\n',
  '/run/secrets/two-lines': 'a\nb\n',
};

function load(env: NodeJS.ProcessEnv, file?: unknown) {
  return loadDaemonConfig({
    env,
    flags: {},
    needApi: false,
    fileExists: (f) => file !== undefined && f === DEFAULT_CONFIG_FILE,
    readFile: () => DaemonConfigFile.parse(file ?? {}),
    readText: (path) => {
      const text = FILES[path];
      if (text === undefined) throw Object.assign(new Error('no such file'), { code: 'ENOENT' });
      return text;
    },
  });
}

function refused(env: NodeJS.ProcessEnv, file?: unknown): string {
  try {
    load(env, file);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    const message = (err as ConfigError).message;
    expect(message).not.toContain(SECRET);
    return message;
  }
  throw new Error('expected a ConfigError');
}

describe('Redis settings: topologies', () => {
  it('none named: a private Redis (no target)', () => {
    expect(redisTargetOf(load({}))).toBeUndefined();
  });

  it('REDIS_URL: one server; REDIS_PASSWORD reaches the target, not the URL', () => {
    const config = load({ REDIS_URL: 'redis://10.0.0.5:6379/0', REDIS_PASSWORD: SECRET });
    expect(redisTargetOf(config)).toEqual({
      kind: 'standalone',
      url: 'redis://10.0.0.5:6379/0',
      password: SECRET,
    });
    expect(config.redisUrl).toBe('redis://10.0.0.5:6379/0');
    expect(describeRedis(redisTargetOf(config) as never)).toBe('Redis at redis://10.0.0.5:6379/0');
  });

  it('Sentinel from the environment: sentinels, name, password from a file', () => {
    const config = load({
      REDIS_SENTINELS: '10.0.0.1:26379, 10.0.0.2:26379,[::1]:26380',
      REDIS_SENTINEL_NAME: 'fleet',
      REDIS_PASSWORD_FILE: '/run/secrets/redis',
      REDIS_SENTINEL_PASSWORD_FILE: '/run/secrets/sentinel',
    });
    expect(config.redis).toEqual({
      kind: 'sentinel',
      name: 'fleet',
      sentinels: [
        { host: '10.0.0.1', port: 26379 },
        { host: '10.0.0.2', port: 26379 },
        { host: '::1', port: 26380 },
      ],
      password: SECRET,
      sentinelPassword: 'sentinel-pass',
    });
    expect(config.redisUrl).toBeUndefined();
    expect(describeRedis(config.redis as never)).toBe(
      "Redis 'fleet' through Sentinel 10.0.0.1:26379,10.0.0.2:26379,[::1]:26380",
    );
  });

  it('Cluster from the settings file, as a list or as text', () => {
    for (const clusterNodes of [['127.0.0.1:7000', '127.0.0.1:7001'], '127.0.0.1:7000,127.0.0.1:7001']) {
      const config = load(
        {},
        { redis: { clusterNodes, passwordFile: '/run/secrets/redis', username: 'fleet' } },
      );
      expect(config.redis).toEqual({
        kind: 'cluster',
        nodes: [
          { host: '127.0.0.1', port: 7000 },
          { host: '127.0.0.1', port: 7001 },
        ],
        password: SECRET,
        username: 'fleet',
      });
    }
  });

  it("a topology in the environment replaces the file's whole", () => {
    const config = load(
      { REDIS_CLUSTER_NODES: '127.0.0.1:7000' },
      { redis: { sentinels: '10.0.0.1:26379', sentinelName: 'fleet' } },
    );
    expect(config.redis?.kind).toBe('cluster');
    const url = load({ REDIS_URL: 'redis://env:6379' }, { redis: { clusterNodes: '127.0.0.1:7000' } });
    expect(redisTargetOf(url)).toEqual({ kind: 'standalone', url: 'redis://env:6379' });
  });

  it('the Sentinel name may come from the file when the sentinels come from the environment', () => {
    const config = load({ REDIS_SENTINELS: '10.0.0.1:26379' }, { redis: { sentinelName: 'from-file' } });
    expect(config.redis).toMatchObject({ kind: 'sentinel', name: 'from-file' });
  });
});

describe('Redis settings: refused, naming the field', () => {
  it('two topologies in one source', () => {
    expect(refused({ REDIS_URL: 'redis://a:6379', REDIS_SENTINELS: '10.0.0.1:26379' })).toContain(
      'environment: REDIS_URL: and REDIS_SENTINELS are both set; set only one of them',
    );
    expect(refused({}, { redisUrl: 'redis://a:6379', redis: { clusterNodes: '127.0.0.1:7000' } })).toContain(
      'redisUrl: and redis.clusterNodes are both set',
    );
  });

  it('Sentinel without the name of its primary', () => {
    expect(refused({ REDIS_SENTINELS: '10.0.0.1:26379' })).toContain(
      'environment: REDIS_SENTINEL_NAME: is not set: the name of the primary the sentinels monitor',
    );
    expect(refused({}, { redis: { sentinels: ['10.0.0.1:26379'] } })).toContain(
      'redis.sentinelName: is not set',
    );
  });

  it('host:port lists that are not', () => {
    expect(refused({ REDIS_CLUSTER_NODES: '127.0.0.1' })).toContain(
      "environment: REDIS_CLUSTER_NODES: '127.0.0.1' is not host:port (a port from 1 to 65535)",
    );
    expect(refused({ REDIS_CLUSTER_NODES: 'a:1,b:70000' })).toContain("'b:70000' is not host:port");
    expect(refused({ REDIS_CLUSTER_NODES: ' , ' })).toContain('got nothing');
    expect(refused({}, { redis: { sentinels: 'x', sentinelName: 'f' } })).toContain('redis.sentinels:');
    expect(parseHostPorts('h:1')).toEqual({ ok: true, list: [{ host: 'h', port: 1 }] });
  });

  it('a URL that is not redis:// (its password left out of the message)', () => {
    const message = refused({ REDIS_URL: `http://u:${SECRET}@host:6379` });
    expect(message).toContain("REDIS_URL: expected a redis:// or rediss:// URL, got 'http://host:6379'");
  });

  it('an inline password in the file; a password and its file both; unreadable, empty or two-line files', () => {
    expect(() => DaemonConfigFile.parse({ redis: { password: SECRET } })).toThrow(
      /inline password is refused/,
    );
    expect(
      refused({
        REDIS_URL: 'redis://a:6379',
        REDIS_PASSWORD: SECRET,
        REDIS_PASSWORD_FILE: '/run/secrets/redis',
      }),
    ).toContain('REDIS_PASSWORD: and REDIS_PASSWORD_FILE are both set');
    expect(refused({ REDIS_URL: 'redis://a:6379', REDIS_PASSWORD_FILE: '/nope' })).toContain(
      'REDIS_PASSWORD_FILE: cannot read /nope (ENOENT)',
    );
    expect(
      refused({ REDIS_URL: 'redis://a:6379' }, { redis: { passwordFile: '/run/secrets/empty' } }),
    ).toContain('redis.passwordFile: /run/secrets/empty is empty');
    expect(refused({ REDIS_URL: 'redis://a:6379', REDIS_PASSWORD_FILE: '/run/secrets/two-lines' })).toContain(
      'holds more than one line',
    );
    expect(refused({ REDIS_URL: `redis://:${SECRET}@a:6379`, REDIS_PASSWORD: 'other' })).toContain(
      'REDIS_URL: holds a password and REDIS_PASSWORD (or a password file) is set too',
    );
  });
});

describe('Redis settings: replicas a create waits for', () => {
  it('default follows the topology (unset); the file, then the environment, set it', () => {
    expect(load({ REDIS_URL: 'redis://a:6379' }).minReplicasForCreate).toBeUndefined();
    expect(load({}, { redis: { minReplicasForCreate: 2 } }).minReplicasForCreate).toBe(2);
    expect(
      load({ FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE: '0' }, { redis: { minReplicasForCreate: 2 } })
        .minReplicasForCreate,
    ).toBe(0);
    expect(load({}, { redis: { waitTimeout: '250ms' } }).replicaWaitMs).toBe(250);
    expect(load({}).replicaWaitMs).toBe(1000);
  });

  it('out of bounds', () => {
    expect(refused({ FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE: '-1' })).toContain(
      "FLEET_UPGRADE_MIN_REPLICAS_FOR_CREATE: expected a whole number from 0 to 16, got '-1'",
    );
    expect(() => DaemonConfigFile.parse({ redis: { minReplicasForCreate: 1.5 } })).toThrow();
    expect(refused({}, { redis: { waitTimeout: '2m' } })).toContain(
      "redis.waitTimeout: must be a duration between 10ms and 1m, got '2m'",
    );
  });
});

describe('Redis settings: how long a daemon goes on without Redis (issue 25)', () => {
  it('5 minutes by default; the file, then the environment, set it; out of bounds refused naming the field', () => {
    expect(load({}).redisGiveUpAfterMs).toBe(300_000);
    expect(load({}, { redis: { giveUpAfter: '30s' } }).redisGiveUpAfterMs).toBe(30_000);
    expect(
      load({ FLEET_UPGRADE_REDIS_GIVE_UP_AFTER: '1h' }, { redis: { giveUpAfter: '30s' } }).redisGiveUpAfterMs,
    ).toBe(3_600_000);
    expect(refused({}, { redis: { giveUpAfter: '1s' } })).toContain(
      "redis.giveUpAfter: must be a duration between 10s and 24h, got '1s'",
    );
    expect(refused({ FLEET_UPGRADE_REDIS_GIVE_UP_AFTER: 'soon' })).toContain(
      "FLEET_UPGRADE_REDIS_GIVE_UP_AFTER: must be a duration between 10s and 24h, got 'soon'",
    );
  });
});
