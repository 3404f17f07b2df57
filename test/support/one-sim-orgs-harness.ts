/**
 * Several organizations in one simulator process (a fleet file with `orgs:`, where the
 * credentials decide which organization answers) driven by the built CLI: a settings file whose
 * `orgs` all point at that simulator's base URL with each organization's access ID and its key in
 * a file of its own (a wrong key when a test wants one refused), a policy file, the run's Redis
 * under a prefix of its own. Every CLI child gets the settings through FLEET_UPGRADE_CONFIG.
 * `close()` kills the children, stops the simulator and removes the prefix's keys and the folder.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { createState, type FleetState } from '../../src/cli/boot/create-state.js';
import { closeRedis, createRedis, type Redis } from '../../src/lib/redis/create-redis.js';
import type { OrgFleetInput } from '../../src/simulator/schema.js';
import { type RunningSimulator, startSimulator } from '../../src/simulator/start-simulator.js';
import type { CliChild } from './cli-child.js';
import { type DeploymentView, deploymentView } from './deployment-view.js';
import { deleteKeys, testRedisUrl } from './redis.js';
import { exitOf, type SimCollectorView, type SimStats } from './rollout-harness.js';

export interface SharedSimOrg {
  /** The organization as the fleet file holds it; its first user is the one the settings name. */
  fleet: OrgFleetInput & { name: string };
  /** The key the settings give it (default its user's own; another is refused with 401). */
  accessKey?: string;
}

export interface SharedSimOrgs extends Omit<DeploymentView, 'killChildren'> {
  sim: RunningSimulator;
  redis: Redis;
  state: FleetState;
  env: NodeJS.ProcessEnv;
  settingsFile: string;
  policyFile: string;
  /** Runs a command to its end: its exit code and output (stdout and stderr). */
  cli(args: string[], timeoutMs?: number): Promise<{ code: number | null; out: string }>;
  /** `run` of the policy file (its HTTP on a free port). */
  startRun(): CliChild;
  /** GET /_sim/collectors?org=NAME. */
  simCollectors(org: string): Promise<SimCollectorView[]>;
  /** GET /_sim/stats?org=NAME. */
  simStats(org: string): Promise<SimStats>;
  /** PATCH /_sim/collectors/ID?org=NAME with `body`. */
  patchCollector(org: string, id: number, body: unknown): Promise<number>;
  close(): Promise<void>;
}

export async function startSharedSimOrgs(options: {
  orgs: readonly SharedSimOrg[];
  policy: Record<string, unknown>;
  timeScale: number;
  tickMs?: number;
}): Promise<SharedSimOrgs> {
  const sim = await startSimulator({
    fleet: { orgs: options.orgs.map((o) => o.fleet) },
    timeScale: options.timeScale,
  });
  const dir = mkdtempSync(join(tmpdir(), 'fleet-upgrade-shared-orgs-'));
  const prefix = `test:${randomBytes(6).toString('hex')}:`;
  const redisUrl = testRedisUrl();
  const redis = createRedis(redisUrl, { name: 'shared-orgs' });
  const state = createState(redis, prefix);
  const entries = options.orgs.map((o) => {
    const user = o.fleet.users?.[0] as { accessId: string; accessKey: string };
    const keyFile = join(dir, `${o.fleet.name}.key`);
    writeFileSync(keyFile, `${o.accessKey ?? user.accessKey}\n`, { mode: 0o600 });
    return { name: o.fleet.name, baseUrl: sim.baseUrl, accessId: user.accessId, accessKeyFile: keyFile };
  });
  const settingsFile = join(dir, 'settings.yaml');
  writeFileSync(settingsFile, stringify({ orgs: entries }));
  const policyFile = join(dir, `${String(options.policy.name)}.yaml`);
  writeFileSync(policyFile, stringify(options.policy));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: redisUrl,
    FLEET_UPGRADE_CONFIG: settingsFile,
    FLEET_UPGRADE_KEY_PREFIX: prefix,
    FLEET_UPGRADE_TICK: `${options.tickMs ?? 100}ms`,
    FLEET_UPGRADE_STALLED_INTERVAL: '1s',
    FLEET_UPGRADE_TIME_SCALE: String(options.timeScale),
    FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
    LOG_LEVEL: 'warn',
  };
  const view = deploymentView(state, env);
  const simUrl = (path: string, org: string) =>
    `${sim.url}${path}${path.includes('?') ? '&' : '?'}org=${encodeURIComponent(org)}`;
  const simGet = async <T>(path: string, org: string): Promise<T> =>
    (await (await fetch(simUrl(path, org))).json()) as T;

  const { spawnCli } = view;

  return {
    sim,
    redis,
    state,
    env,
    settingsFile,
    policyFile,
    spawnCli,
    async cli(args, timeoutMs = 30_000) {
      const child = spawnCli(args);
      const code = await exitOf(child, timeoutMs);
      return { code, out: child.output() };
    },
    startRun: () => spawnCli(['run', '--policy', policyFile, '--listen', '127.0.0.1:0']),
    status: view.status,
    waitFor: view.waitFor,
    records: view.records,
    simCollectors: async (org) =>
      (await simGet<{ collectors: SimCollectorView[] }>('/_sim/collectors', org)).collectors,
    simStats: (org) => simGet<SimStats>('/_sim/stats', org),
    async patchCollector(org, id, body) {
      const res = await fetch(simUrl(`/_sim/collectors/${id}`, org), {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res.status;
    },
    async close() {
      view.killChildren();
      await sim.close();
      await deleteKeys(redis, prefix);
      await closeRedis(redis);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
