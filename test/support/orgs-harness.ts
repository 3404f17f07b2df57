/**
 * A rollout across several organizations under test: one simulator process per organization
 * (each its own base URL, users, fleet and builds, as several deployments of the service are),
 * a settings file whose `orgs` name them (each key in a file of its own), a policy file, the run's
 * Redis under a prefix of its own, and the built CLI as child processes. `close()` kills them and
 * removes the prefix's keys.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { stringify } from 'yaml';
import { createState, type FleetState } from '../../src/cli/boot/create-state.js';
import { closeRedis, createRedis, type Redis } from '../../src/lib/redis/create-redis.js';
import type { FleetFileInput } from '../../src/simulator/schema.js';
import type { CliChild } from './cli-child.js';
import { type DeploymentView, deploymentView } from './deployment-view.js';
import { deleteKeys, testRedisUrl } from './redis.js';
import type { SimCollectorView, SimStats } from './rollout-harness.js';
import { startSeparateSimulator } from './separate-simulator.js';

/**
 * An organization's fleet for these tests: one user (`USER`, key `USER-secret`), `count`
 * Collectors with ids from 100 on `from` (default 19.400-5), each succeeding in `upgradeSeconds`
 * (default 60), no random failure or stuck task.
 */
export function orgFleet(
  user: string,
  o: { count: number; builds?: string[]; from?: string; upgradeSeconds?: number; incrementalAbove?: number },
): FleetFileInput {
  return {
    builds: o.builds ?? ['19.400-5', '19.470-4'],
    users: [{ accessId: user, accessKey: `${user}-secret` }],
    collectors: Array.from({ length: o.count }, (_, i) => ({
      id: 100 + i,
      name: `${user}-${i}`,
      version: o.from ?? '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: o.upgradeSeconds ?? 60,
    })),
    behaviour: {
      failureRatio: 0,
      stuckRatio: 0,
      ...(o.incrementalAbove === undefined ? {} : { incrementalAbove: o.incrementalAbove }),
    },
  };
}

export interface OrgSpec {
  name: string;
  fleet: FleetFileInput;
  /** The key the settings give it (default: its fleet's first user's: a wrong one is refused). */
  accessKey?: string;
}

export interface OrgSim {
  name: string;
  url: string;
  baseUrl: string;
  get<T>(path: string): Promise<T>;
  send(method: 'POST' | 'DELETE', path: string, body?: unknown): Promise<number>;
  collectors(): Promise<SimCollectorView[]>;
  stats(): Promise<SimStats>;
}

export interface OrgsHarness extends Omit<DeploymentView, 'killChildren'> {
  orgs: Map<string, OrgSim>;
  redis: Redis;
  state: FleetState;
  env: NodeJS.ProcessEnv;
  settingsFile: string;
  policyFile: string;
  /** `run` of the settings and the policy file, its HTTP endpoints at `listen` (default any port). */
  spawnRun(listen?: string): CliChild;
  close(): Promise<void>;
}

export async function startOrgsHarness(options: {
  orgs: readonly OrgSpec[];
  policy: Record<string, unknown>;
  timeScale: number;
  tickMs?: number;
  settings?: Record<string, unknown>;
}): Promise<OrgsHarness> {
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-orgs-'));
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const redisUrl = testRedisUrl();
  const redis = createRedis(redisUrl, { name: 'orgs-harness' });
  const state = createState(redis, prefix);
  const orgs = new Map<string, OrgSim>();
  const entries: Record<string, unknown>[] = [];
  for (const spec of options.orgs) {
    const sim = await startSeparateSimulator(spec.fleet, options.timeScale);
    const user = (spec.fleet.users ?? [{ accessId: 'demo', accessKey: 'demo-secret' }])[0] as {
      accessId: string;
      accessKey: string;
    };
    const keyFile = join(dir, `${spec.name}.key`);
    writeFileSync(keyFile, `${spec.accessKey ?? user.accessKey}\n`, { mode: 0o600 });
    entries.push({ name: spec.name, baseUrl: sim.baseUrl, accessId: user.accessId, accessKeyFile: keyFile });
    const get = async <T>(path: string): Promise<T> =>
      (await (await request(`${sim.url}${path}`)).body.json()) as T;
    orgs.set(spec.name, {
      name: spec.name,
      url: sim.url,
      baseUrl: sim.baseUrl,
      get,
      async send(method, path, body) {
        const res = await request(`${sim.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        await res.body.dump();
        return res.statusCode;
      },
      collectors: async () => (await get<{ collectors: SimCollectorView[] }>('/_sim/collectors')).collectors,
      stats: () => get<SimStats>('/_sim/stats'),
    });
  }
  const settingsFile = join(dir, 'settings.yaml');
  writeFileSync(settingsFile, stringify({ orgs: entries, ...options.settings }));
  const policyFile = join(dir, `${String(options.policy.name)}.yaml`);
  writeFileSync(policyFile, stringify(options.policy));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redisUrl,
    FLEET_UPGRADE_KEY_PREFIX: prefix,
    FLEET_UPGRADE_TICK: `${options.tickMs ?? 100}ms`,
    FLEET_UPGRADE_STALLED_INTERVAL: '1s',
    FLEET_UPGRADE_TIME_SCALE: String(options.timeScale),
    FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: 'warn',
  };
  const view = deploymentView(state, env);
  const harness: OrgsHarness = {
    ...view,
    orgs,
    redis,
    state,
    env,
    settingsFile,
    policyFile,
    spawnRun(listen = '127.0.0.1:0') {
      return view.spawnCli(['run', '--config', settingsFile, '--policy', policyFile, '--listen', listen]);
    },
    async close() {
      view.killChildren();
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
